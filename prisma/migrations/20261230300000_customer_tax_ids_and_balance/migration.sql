-- Customers' tax ids (`/v1/customers/{customer}/tax_ids`) and credit balance
-- (`/v1/customers/{customer}/balance_transactions`). `customers.balance` is the running balance
-- (negative: a credit the next invoice takes), `customers.currency` the currency it is in (set by
-- the first balance transaction). An invoice records the balance it started from and ended with
-- when it was finalized (`starting_balance`, `ending_balance`; null on a draft).
ALTER TABLE "customers" ADD COLUMN "balance" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "customers" ADD COLUMN "currency" TEXT;
ALTER TABLE "invoices" ADD COLUMN "starting_balance" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "invoices" ADD COLUMN "ending_balance" BIGINT;

-- CreateTable
CREATE TABLE "customer_tax_ids" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "country" TEXT,
    "verification" JSONB,

    CONSTRAINT "customer_tax_ids_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "customer_tax_ids_seq_key" ON "customer_tax_ids"("seq");
-- A customer's list, in list order.
CREATE INDEX "customer_tax_ids_customer_id_seq_idx" ON "customer_tax_ids"("customer_id", "seq");
CREATE INDEX "customer_tax_ids_account_id_idx" ON "customer_tax_ids"("account_id");
ALTER TABLE "customer_tax_ids" ADD CONSTRAINT "customer_tax_ids_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "customer_balance_transactions" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "ending_balance" BIGINT NOT NULL,
    "description" TEXT,
    "invoice_id" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "customer_balance_transactions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "customer_balance_transactions_seq_key" ON "customer_balance_transactions"("seq");
CREATE INDEX "customer_balance_transactions_customer_id_seq_idx" ON "customer_balance_transactions"("customer_id", "seq");
CREATE INDEX "customer_balance_transactions_account_id_idx" ON "customer_balance_transactions"("account_id");
ALTER TABLE "customer_balance_transactions" ADD CONSTRAINT "customer_balance_transactions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
