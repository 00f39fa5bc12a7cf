-- The payment_settings a subscription's invoice was made with, copied from the subscription's
-- (null: the defaults, or an invoice of no subscription).
ALTER TABLE "invoices" ADD COLUMN "payment_settings" JSONB;
