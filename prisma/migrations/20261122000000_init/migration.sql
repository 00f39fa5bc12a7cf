-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "parent_account_id" TEXT,
    "created" INTEGER NOT NULL,
    "default_api_version" TEXT NOT NULL,
    "webhook_endpoint_count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "key_hash" TEXT NOT NULL,
    "hint" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("key_hash")
);

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "enabled_events" TEXT[],
    "api_version" TEXT,
    "connect" BOOLEAN NOT NULL DEFAULT false,
    "description" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL,
    "secret" TEXT NOT NULL,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "account_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "status" INTEGER,
    "response_body" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("account_id","key")
);

-- CreateIndex
CREATE UNIQUE INDEX "accounts_seq_key" ON "accounts"("seq");

-- CreateIndex
CREATE INDEX "accounts_parent_account_id_seq_idx" ON "accounts"("parent_account_id", "seq");

-- CreateIndex
CREATE INDEX "api_keys_account_id_idx" ON "api_keys"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_endpoints_seq_key" ON "webhook_endpoints"("seq");

-- CreateIndex
CREATE INDEX "webhook_endpoints_account_id_seq_idx" ON "webhook_endpoints"("account_id", "seq");

-- CreateIndex
CREATE INDEX "idempotency_records_created_at_idx" ON "idempotency_records"("created_at");

-- AddForeignKey
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_parent_account_id_fkey" FOREIGN KEY ("parent_account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
