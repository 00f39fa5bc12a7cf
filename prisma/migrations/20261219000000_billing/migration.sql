-- Billing: test clocks, subscriptions and their items, invoices with their lines, invoice items.
-- Amounts are BIGINT in the currency's smallest unit.

ALTER TABLE "customers" ADD COLUMN "test_clock_id" TEXT;

CREATE TABLE "test_clocks" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "name" TEXT,
    "frozen_time" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "target_frozen_time" INTEGER,
    "deletes_after" INTEGER NOT NULL,
    "deleted" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "test_clocks_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "test_clocks_seq_key" ON "test_clocks"("seq");
CREATE INDEX "test_clocks_account_id_seq_idx" ON "test_clocks"("account_id", "seq");
CREATE INDEX "test_clocks_status_idx" ON "test_clocks"("status");
ALTER TABLE "test_clocks" ADD CONSTRAINT "test_clocks_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "subscriptions" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "test_clock_id" TEXT,
    "created" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "collection_method" TEXT NOT NULL,
    "days_until_due" INTEGER,
    "default_payment_method" TEXT,
    "default_tax_rates" TEXT[],
    "description" TEXT,
    "discounts" JSONB NOT NULL DEFAULT '[]',
    "billing_cycle_anchor" INTEGER NOT NULL,
    "interval" TEXT NOT NULL,
    "interval_count" INTEGER NOT NULL,
    "period_start" INTEGER NOT NULL,
    "period_end" INTEGER NOT NULL,
    "start_date" INTEGER NOT NULL,
    "trial_start" INTEGER,
    "trial_end" INTEGER,
    "trial_will_end_sent" BOOLEAN NOT NULL DEFAULT false,
    "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
    "cancel_at" INTEGER,
    "canceled_at" INTEGER,
    "ended_at" INTEGER,
    "cancellation_details" JSONB,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "latest_invoice" TEXT,
    "pending_update" JSONB,
    "next_action_at" INTEGER,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "subscriptions_seq_key" ON "subscriptions"("seq");
CREATE INDEX "subscriptions_account_id_seq_idx" ON "subscriptions"("account_id", "seq");
CREATE INDEX "subscriptions_customer_id_idx" ON "subscriptions"("customer_id");
CREATE INDEX "subscriptions_test_clock_id_idx" ON "subscriptions"("test_clock_id");
CREATE INDEX "subscriptions_next_action_at_idx" ON "subscriptions"("next_action_at");
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "subscription_items" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "price_id" TEXT NOT NULL,
    "quantity" INTEGER,
    "created" INTEGER NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "tax_rates" TEXT[],
    "tax_rates_set" BOOLEAN NOT NULL DEFAULT false,
    "discounts" JSONB NOT NULL DEFAULT '[]',
    "billing_thresholds" JSONB,
    "billed_price_id" TEXT,
    "billed_quantity" INTEGER,

    CONSTRAINT "subscription_items_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "subscription_items_seq_key" ON "subscription_items"("seq");
CREATE INDEX "subscription_items_account_id_seq_idx" ON "subscription_items"("account_id", "seq");
CREATE INDEX "subscription_items_subscription_id_seq_idx" ON "subscription_items"("subscription_id", "seq");
ALTER TABLE "subscription_items" ADD CONSTRAINT "subscription_items_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "subscription_items" ADD CONSTRAINT "subscription_items_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "invoices" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "subscription_id" TEXT,
    "test_clock_id" TEXT,
    "created" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "billing_reason" TEXT NOT NULL,
    "collection_method" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "period_start" INTEGER NOT NULL,
    "period_end" INTEGER NOT NULL,
    "totals" JSONB NOT NULL,
    "amount_due" BIGINT NOT NULL,
    "amount_paid" BIGINT NOT NULL DEFAULT 0,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "number" TEXT,
    "default_payment_method" TEXT,
    "due_date" INTEGER,
    "finalized_at" INTEGER,
    "paid_at" INTEGER,
    "last_payment_error" JSONB,
    "discounts" TEXT[],
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "subscription_metadata" JSONB,
    "subscription_proration_date" INTEGER,

    CONSTRAINT "invoices_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "invoices_seq_key" ON "invoices"("seq");
CREATE INDEX "invoices_account_id_seq_idx" ON "invoices"("account_id", "seq");
CREATE INDEX "invoices_subscription_id_idx" ON "invoices"("subscription_id");
CREATE INDEX "invoices_customer_id_idx" ON "invoices"("customer_id");
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "invoice_lines" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "invoice_item_id" TEXT,
    "subscription_id" TEXT,
    "subscription_item_id" TEXT,
    "price_id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "quantity" INTEGER,
    "unit_amount_decimal" TEXT,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "description" TEXT,
    "proration" BOOLEAN NOT NULL DEFAULT false,
    "discountable" BOOLEAN NOT NULL DEFAULT true,
    "period_start" INTEGER NOT NULL,
    "period_end" INTEGER NOT NULL,
    "discounts" TEXT[],
    "discount_amounts" JSONB NOT NULL DEFAULT '[]',
    "taxes" JSONB NOT NULL DEFAULT '[]',
    "metadata" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "invoice_lines_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "invoice_lines_seq_key" ON "invoice_lines"("seq");
CREATE INDEX "invoice_lines_invoice_id_seq_idx" ON "invoice_lines"("invoice_id", "seq");
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "invoice_items" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "subscription_id" TEXT,
    "subscription_item_id" TEXT,
    "invoice_id" TEXT,
    "test_clock_id" TEXT,
    "date" INTEGER NOT NULL,
    "price_id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_amount_decimal" TEXT,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "description" TEXT,
    "proration" BOOLEAN NOT NULL DEFAULT false,
    "discountable" BOOLEAN NOT NULL DEFAULT true,
    "period_start" INTEGER NOT NULL,
    "period_end" INTEGER NOT NULL,
    "tax_rates" TEXT[],
    "discounts" TEXT[],
    "discount_amounts" JSONB NOT NULL DEFAULT '[]',
    "metadata" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "invoice_items_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "invoice_items_seq_key" ON "invoice_items"("seq");
CREATE INDEX "invoice_items_account_id_seq_idx" ON "invoice_items"("account_id", "seq");
CREATE INDEX "invoice_items_subscription_id_invoice_id_idx" ON "invoice_items"("subscription_id", "invoice_id");
ALTER TABLE "invoice_items" ADD CONSTRAINT "invoice_items_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
