-- Financial Connections: link sessions (and their hosted-flow links), linked accounts, their
-- refreshes, transactions and ownership data.

-- CreateTable
CREATE TABLE "financial_connections_sessions" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "account_holder" JSONB NOT NULL,
    "permissions" TEXT[],
    "filters" JSONB,
    "limits" JSONB,
    "manual_entry" JSONB,
    "prefetch" TEXT[],
    "return_url" TEXT,
    "hosted_return_url" TEXT,
    "status" TEXT NOT NULL,
    "status_details" JSONB,
    "linked_accounts" TEXT[],

    CONSTRAINT "financial_connections_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "financial_connections_links" (
    "token_hash" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "expires_at" INTEGER NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "financial_connections_links_pkey" PRIMARY KEY ("token_hash")
);

-- CreateTable
CREATE TABLE "financial_connections_accounts" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "holder_key" TEXT NOT NULL,
    "account_holder" JSONB NOT NULL,
    "institution" TEXT NOT NULL,
    "template" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "permissions" TEXT[],
    "subscriptions" TEXT[],
    "balance" JSONB,
    "balance_refresh" JSONB,
    "ownership_id" TEXT,
    "ownership_refresh" JSONB,
    "transaction_refresh" JSONB,
    "balance_refreshes" INTEGER NOT NULL DEFAULT 0,
    "transaction_refreshes" INTEGER NOT NULL DEFAULT 0,
    "links" INTEGER NOT NULL DEFAULT 1,
    "deactivate_at" TIMESTAMPTZ(3),
    "subscription_due_at" TIMESTAMPTZ(3),

    CONSTRAINT "financial_connections_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "financial_connections_refreshes" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "fc_account_id" TEXT NOT NULL,
    "feature" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "requested_at" INTEGER NOT NULL,
    "due_at" TIMESTAMPTZ(3),
    "finished_at" INTEGER,

    CONSTRAINT "financial_connections_refreshes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "financial_connections_transactions" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "fc_account_id" TEXT NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "posted_at" INTEGER,
    "void_at" INTEGER,
    "transacted_at" INTEGER NOT NULL,
    "transaction_refresh" TEXT NOT NULL,
    "refresh_seq" BIGINT NOT NULL,
    "updated" INTEGER NOT NULL,

    CONSTRAINT "financial_connections_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "financial_connections_ownerships" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "fc_account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,

    CONSTRAINT "financial_connections_ownerships_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "financial_connections_owners" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "ownership_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT,
    "phone" TEXT,
    "raw_address" TEXT,
    "refreshed_at" INTEGER,

    CONSTRAINT "financial_connections_owners_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "financial_connections_sessions_seq_key" ON "financial_connections_sessions"("seq");

-- CreateIndex
CREATE INDEX "financial_connections_sessions_account_id_seq_idx" ON "financial_connections_sessions"("account_id", "seq");

-- CreateIndex
CREATE INDEX "financial_connections_links_session_id_idx" ON "financial_connections_links"("session_id");

-- CreateIndex
CREATE UNIQUE INDEX "financial_connections_accounts_seq_key" ON "financial_connections_accounts"("seq");

-- CreateIndex
CREATE INDEX "financial_connections_accounts_account_id_seq_idx" ON "financial_connections_accounts"("account_id", "seq");

-- CreateIndex
CREATE INDEX "financial_connections_accounts_account_id_holder_key_idx" ON "financial_connections_accounts"("account_id", "holder_key");

-- CreateIndex
CREATE INDEX "financial_connections_accounts_deactivate_at_idx" ON "financial_connections_accounts"("deactivate_at");

-- CreateIndex
CREATE INDEX "financial_connections_accounts_subscription_due_at_idx" ON "financial_connections_accounts"("subscription_due_at");

-- CreateIndex
CREATE UNIQUE INDEX "financial_connections_refreshes_seq_key" ON "financial_connections_refreshes"("seq");

-- CreateIndex
CREATE INDEX "financial_connections_refreshes_fc_account_id_idx" ON "financial_connections_refreshes"("fc_account_id");

-- CreateIndex
CREATE INDEX "financial_connections_refreshes_status_due_at_idx" ON "financial_connections_refreshes"("status", "due_at");

-- CreateIndex
CREATE UNIQUE INDEX "financial_connections_transactions_seq_key" ON "financial_connections_transactions"("seq");

-- CreateIndex
CREATE INDEX "financial_connections_transactions_account_id_seq_idx" ON "financial_connections_transactions"("account_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "financial_connections_transactions_fc_account_id_ordinal_key" ON "financial_connections_transactions"("fc_account_id", "ordinal");

-- CreateIndex
CREATE INDEX "financial_connections_ownerships_fc_account_id_idx" ON "financial_connections_ownerships"("fc_account_id");

-- CreateIndex
CREATE UNIQUE INDEX "financial_connections_owners_seq_key" ON "financial_connections_owners"("seq");

-- CreateIndex
CREATE INDEX "financial_connections_owners_ownership_id_seq_idx" ON "financial_connections_owners"("ownership_id", "seq");

-- AddForeignKey
ALTER TABLE "financial_connections_sessions" ADD CONSTRAINT "financial_connections_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_links" ADD CONSTRAINT "financial_connections_links_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "financial_connections_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_accounts" ADD CONSTRAINT "financial_connections_accounts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_refreshes" ADD CONSTRAINT "financial_connections_refreshes_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_refreshes" ADD CONSTRAINT "financial_connections_refreshes_fc_account_id_fkey" FOREIGN KEY ("fc_account_id") REFERENCES "financial_connections_accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_transactions" ADD CONSTRAINT "financial_connections_transactions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_transactions" ADD CONSTRAINT "financial_connections_transactions_fc_account_id_fkey" FOREIGN KEY ("fc_account_id") REFERENCES "financial_connections_accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_ownerships" ADD CONSTRAINT "financial_connections_ownerships_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_ownerships" ADD CONSTRAINT "financial_connections_ownerships_fc_account_id_fkey" FOREIGN KEY ("fc_account_id") REFERENCES "financial_connections_accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_owners" ADD CONSTRAINT "financial_connections_owners_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "financial_connections_owners" ADD CONSTRAINT "financial_connections_owners_ownership_id_fkey" FOREIGN KEY ("ownership_id") REFERENCES "financial_connections_ownerships"("id") ON DELETE CASCADE ON UPDATE CASCADE;
