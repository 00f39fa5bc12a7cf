-- Customers and their card payment methods. A deleted customer keeps its row (retrieve answers
-- the deleted stub); its payment methods are detached.
CREATE TABLE "customers" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "email" TEXT,
    "name" TEXT,
    "phone" TEXT,
    "description" TEXT,
    "address" JSONB,
    "shipping" JSONB,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "preferred_locales" TEXT[],
    "tax_exempt" TEXT NOT NULL DEFAULT 'none',
    "default_payment_method" TEXT,
    "deleted" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "customers_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "customers_seq_key" ON "customers"("seq");
CREATE INDEX "customers_account_id_seq_idx" ON "customers"("account_id", "seq");
ALTER TABLE "customers" ADD CONSTRAINT "customers_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- `number` and `cvc` are sealed (AES-256-GCM) under the key `key_id` names; `cvc` is cleared at
-- its first use or at `cvc_expires_at`. `outcome` is what a payment with the card does.
CREATE TABLE "payment_methods" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "customer_id" TEXT,
    "type" TEXT NOT NULL,
    "billing_details" JSONB NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "brand" TEXT NOT NULL,
    "funding" TEXT NOT NULL,
    "country" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "exp_month" INTEGER NOT NULL,
    "exp_year" INTEGER NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "cvc" TEXT,
    "cvc_check" TEXT,
    "cvc_expires_at" INTEGER,
    "key_id" TEXT NOT NULL,

    CONSTRAINT "payment_methods_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "payment_methods_seq_key" ON "payment_methods"("seq");
CREATE INDEX "payment_methods_account_id_seq_idx" ON "payment_methods"("account_id", "seq");
CREATE INDEX "payment_methods_customer_id_seq_idx" ON "payment_methods"("customer_id", "seq");
CREATE INDEX "payment_methods_cvc_expires_at_idx" ON "payment_methods"("cvc_expires_at");
ALTER TABLE "payment_methods" ADD CONSTRAINT "payment_methods_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "payment_methods" ADD CONSTRAINT "payment_methods_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE SET NULL ON UPDATE CASCADE;
