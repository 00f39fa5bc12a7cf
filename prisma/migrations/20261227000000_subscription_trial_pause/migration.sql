-- What a trial's end does when the customer has no payment method (`trial_settings[end_behavior][missing_payment_method]`),
-- and `pause_collection` ({behavior, resumes_at}) while a subscription's renewal invoices are not collected.
ALTER TABLE "subscriptions" ADD COLUMN "trial_missing_payment_method" TEXT NOT NULL DEFAULT 'create_invoice';
ALTER TABLE "subscriptions" ADD COLUMN "pause_collection" JSONB;
