-- CreateTable
CREATE TABLE "app_secrets" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "name_hash" TEXT NOT NULL,
    "scope_type" TEXT NOT NULL,
    "scope_user" TEXT,
    "scope_hash" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "expires_at" INTEGER,

    CONSTRAINT "app_secrets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "app_secrets_seq_key" ON "app_secrets"("seq");

-- CreateIndex
CREATE INDEX "app_secrets_account_id_scope_hash_seq_idx" ON "app_secrets"("account_id", "scope_hash", "seq");

-- CreateIndex
CREATE INDEX "app_secrets_expires_at_idx" ON "app_secrets"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "app_secrets_account_id_scope_hash_name_hash_key" ON "app_secrets"("account_id", "scope_hash", "name_hash");

-- AddForeignKey
ALTER TABLE "app_secrets" ADD CONSTRAINT "app_secrets_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
