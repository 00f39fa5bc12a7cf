-- Billing's lists by owner (a customer's or a subscription's invoices, a customer's subscriptions)
-- read their page from an index in list order, so a customer with many stays as fast as one with
-- few; an invoice's PaymentIntent (every invoice rendered shows it) and a customer's pending
-- invoice items (every subscription invoice takes them) are found by index, not by a scan.
DROP INDEX "invoices_customer_id_idx";
CREATE INDEX "invoices_customer_id_seq_idx" ON "invoices"("customer_id", "seq");
DROP INDEX "invoices_subscription_id_idx";
CREATE INDEX "invoices_subscription_id_seq_idx" ON "invoices"("subscription_id", "seq");
DROP INDEX "subscriptions_customer_id_idx";
CREATE INDEX "subscriptions_customer_id_seq_idx" ON "subscriptions"("customer_id", "seq");
CREATE INDEX "payment_intents_invoice_id_seq_idx" ON "payment_intents"("invoice_id", "seq");
CREATE INDEX "invoice_items_customer_id_invoice_id_idx" ON "invoice_items"("customer_id", "invoice_id");
