-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "link_created_at" INTEGER;

-- CreateTable
CREATE TABLE "account_links" (
    "token_hash" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "collect" TEXT NOT NULL,
    "refresh_url" TEXT,
    "return_url" TEXT,
    "created" INTEGER NOT NULL,
    "expires_at" INTEGER NOT NULL,
    "visited_at" INTEGER,
    "form_token_hash" TEXT,
    "completed_at" INTEGER,

    CONSTRAINT "account_links_pkey" PRIMARY KEY ("token_hash")
);

-- CreateIndex
CREATE INDEX "account_links_account_id_idx" ON "account_links"("account_id");

-- AddForeignKey
ALTER TABLE "account_links" ADD CONSTRAINT "account_links_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
