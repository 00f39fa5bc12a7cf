-- CreateTable
-- Tax rates: `percentage` and `inclusive` are fixed at creation, as in the public API.
CREATE TABLE "tax_rates" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "display_name" TEXT NOT NULL,
    "description" TEXT,
    "percentage" DOUBLE PRECISION NOT NULL,
    "inclusive" BOOLEAN NOT NULL,
    "country" TEXT,
    "state" TEXT,
    "jurisdiction" TEXT,
    "tax_type" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "tax_rates_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "tax_rates_seq_key" ON "tax_rates"("seq");

-- CreateIndex
CREATE INDEX "tax_rates_account_id_seq_idx" ON "tax_rates"("account_id", "seq");

-- AddForeignKey
ALTER TABLE "tax_rates" ADD CONSTRAINT "tax_rates_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
