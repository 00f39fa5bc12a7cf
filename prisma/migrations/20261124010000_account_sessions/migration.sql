-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "session_created_at" INTEGER;

-- CreateTable
CREATE TABLE "account_sessions" (
    "secret_hash" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "expires_at" INTEGER NOT NULL,
    "components" JSONB NOT NULL,
    "claimed_at" TIMESTAMPTZ(3),

    CONSTRAINT "account_sessions_pkey" PRIMARY KEY ("secret_hash")
);

-- CreateIndex
CREATE INDEX "account_sessions_account_id_idx" ON "account_sessions"("account_id");

-- AddForeignKey
ALTER TABLE "account_sessions" ADD CONSTRAINT "account_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
