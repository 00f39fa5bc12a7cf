-- Invoice payments: one per PaymentIntent an invoice is paid through (open, paid or canceled).
CREATE TABLE "invoice_payments" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "payment_intent_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "amount_requested" BIGINT NOT NULL,
    "amount_paid" BIGINT,
    "status" TEXT NOT NULL,
    "is_default" BOOLEAN NOT NULL DEFAULT true,
    "paid_at" INTEGER,
    "canceled_at" INTEGER,

    CONSTRAINT "invoice_payments_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "invoice_payments_seq_key" ON "invoice_payments"("seq");
CREATE UNIQUE INDEX "invoice_payments_payment_intent_id_key" ON "invoice_payments"("payment_intent_id");
CREATE INDEX "invoice_payments_account_id_seq_idx" ON "invoice_payments"("account_id", "seq");
CREATE INDEX "invoice_payments_invoice_id_seq_idx" ON "invoice_payments"("invoice_id", "seq");
ALTER TABLE "invoice_payments" ADD CONSTRAINT "invoice_payments_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A subscription's payment_settings as given at creation (null: the defaults).
ALTER TABLE "subscriptions" ADD COLUMN "payment_settings" JSONB;
