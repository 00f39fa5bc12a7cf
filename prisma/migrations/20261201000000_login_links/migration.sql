-- CreateTable
CREATE TABLE "login_links" (
    "token_hash" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "expires_at" INTEGER NOT NULL,
    "used_at" INTEGER,

    CONSTRAINT "login_links_pkey" PRIMARY KEY ("token_hash")
);

-- CreateIndex
CREATE INDEX "login_links_account_id_idx" ON "login_links"("account_id");

-- CreateIndex
CREATE INDEX "login_links_expires_at_idx" ON "login_links"("expires_at");

-- AddForeignKey
ALTER TABLE "login_links" ADD CONSTRAINT "login_links_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
