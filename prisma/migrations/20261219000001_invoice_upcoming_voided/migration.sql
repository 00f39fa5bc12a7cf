-- The period end whose `invoice.upcoming` a subscription already sent (one per period).
ALTER TABLE "subscriptions" ADD COLUMN "upcoming_sent_for" INTEGER;

-- When an invoice was voided (an expired subscription's unpaid first invoice).
ALTER TABLE "invoices" ADD COLUMN "voided_at" INTEGER;
