-- The payments core: PaymentIntents, their charges and refunds, SetupIntents, and the 3-D Secure
-- challenges of both (their hosted page's token kept as a hash). Client secrets are sealed.
ALTER TABLE "payment_methods" ADD COLUMN "off_session_ready" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "payment_intents" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "capture_method" TEXT NOT NULL,
    "confirmation_method" TEXT NOT NULL,
    "customer_id" TEXT,
    "payment_method_id" TEXT,
    "payment_method_types" TEXT[],
    "automatic_payment_methods" JSONB,
    "payment_method_options" JSONB NOT NULL DEFAULT '{}',
    "setup_future_usage" TEXT,
    "description" TEXT,
    "receipt_email" TEXT,
    "statement_descriptor" TEXT,
    "statement_descriptor_suffix" TEXT,
    "shipping" JSONB,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "on_behalf_of" TEXT,
    "transfer_data" JSONB,
    "transfer_group" TEXT,
    "application_fee_amount" INTEGER,
    "amount_capturable" INTEGER NOT NULL DEFAULT 0,
    "amount_received" INTEGER NOT NULL DEFAULT 0,
    "latest_charge_id" TEXT,
    "last_payment_error" JSONB,
    "next_action" JSONB,
    "return_url" TEXT,
    "cancellation_reason" TEXT,
    "canceled_at" INTEGER,
    "client_secret" TEXT NOT NULL,
    "invoice_id" TEXT,
    "due_at" INTEGER,

    CONSTRAINT "payment_intents_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "payment_intents_seq_key" ON "payment_intents"("seq");
CREATE INDEX "payment_intents_account_id_seq_idx" ON "payment_intents"("account_id", "seq");
CREATE INDEX "payment_intents_account_id_customer_id_seq_idx" ON "payment_intents"("account_id", "customer_id", "seq");
CREATE INDEX "payment_intents_due_at_idx" ON "payment_intents"("due_at");
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "charges" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "amount" INTEGER NOT NULL,
    "amount_captured" INTEGER NOT NULL DEFAULT 0,
    "amount_refunded" INTEGER NOT NULL DEFAULT 0,
    "currency" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "captured" BOOLEAN NOT NULL DEFAULT false,
    "paid" BOOLEAN NOT NULL DEFAULT false,
    "payment_intent_id" TEXT,
    "customer_id" TEXT,
    "payment_method_id" TEXT,
    "payment_method_details" JSONB NOT NULL,
    "billing_details" JSONB NOT NULL,
    "outcome" JSONB,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "description" TEXT,
    "receipt_email" TEXT,
    "statement_descriptor" TEXT,
    "statement_descriptor_suffix" TEXT,
    "calculated_statement_descriptor" TEXT,
    "shipping" JSONB,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "fraud_details" JSONB NOT NULL DEFAULT '{}',
    "on_behalf_of" TEXT,
    "transfer_data" JSONB,
    "transfer_group" TEXT,
    "application_fee_amount" INTEGER,
    "invoice_id" TEXT,

    CONSTRAINT "charges_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "charges_seq_key" ON "charges"("seq");
CREATE INDEX "charges_account_id_seq_idx" ON "charges"("account_id", "seq");
CREATE INDEX "charges_account_id_customer_id_seq_idx" ON "charges"("account_id", "customer_id", "seq");
CREATE INDEX "charges_payment_intent_id_seq_idx" ON "charges"("payment_intent_id", "seq");
ALTER TABLE "charges" ADD CONSTRAINT "charges_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "refunds" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "charge_id" TEXT NOT NULL,
    "payment_intent_id" TEXT,
    "status" TEXT NOT NULL,
    "reason" TEXT,
    "description" TEXT,
    "failure_reason" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "due_at" INTEGER,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "refunds_seq_key" ON "refunds"("seq");
CREATE INDEX "refunds_account_id_seq_idx" ON "refunds"("account_id", "seq");
CREATE INDEX "refunds_charge_id_seq_idx" ON "refunds"("charge_id", "seq");
CREATE INDEX "refunds_due_at_idx" ON "refunds"("due_at");
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "setup_intents" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "customer_id" TEXT,
    "payment_method_id" TEXT,
    "payment_method_types" TEXT[],
    "automatic_payment_methods" JSONB,
    "payment_method_options" JSONB NOT NULL DEFAULT '{}',
    "usage" TEXT NOT NULL,
    "description" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "on_behalf_of" TEXT,
    "last_setup_error" JSONB,
    "latest_attempt" TEXT,
    "next_action" JSONB,
    "return_url" TEXT,
    "cancellation_reason" TEXT,
    "client_secret" TEXT NOT NULL,

    CONSTRAINT "setup_intents_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "setup_intents_seq_key" ON "setup_intents"("seq");
CREATE INDEX "setup_intents_account_id_seq_idx" ON "setup_intents"("account_id", "seq");
CREATE INDEX "setup_intents_account_id_customer_id_seq_idx" ON "setup_intents"("account_id", "customer_id", "seq");
ALTER TABLE "setup_intents" ADD CONSTRAINT "setup_intents_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "payment_authentications" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "intent_type" TEXT NOT NULL,
    "intent_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "return_url" TEXT,
    "status" TEXT NOT NULL,
    "expires_at" INTEGER NOT NULL,
    "answered_at" INTEGER,

    CONSTRAINT "payment_authentications_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "payment_authentications_seq_key" ON "payment_authentications"("seq");
CREATE UNIQUE INDEX "payment_authentications_token_hash_key" ON "payment_authentications"("token_hash");
CREATE INDEX "payment_authentications_intent_id_seq_idx" ON "payment_authentications"("intent_id", "seq");
CREATE INDEX "payment_authentications_status_expires_at_idx" ON "payment_authentications"("status", "expires_at");
ALTER TABLE "payment_authentications" ADD CONSTRAINT "payment_authentications_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
