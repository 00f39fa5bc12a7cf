-- CreateTable
-- Coupons: a deleted coupon keeps its row (its promotion codes still show it) and its id can be
-- taken again, so the key is `seq`; the service keeps one live coupon per id and account.
CREATE TABLE "coupons" (
    "seq" BIGSERIAL NOT NULL,
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "name" TEXT,
    "percent_off" DOUBLE PRECISION,
    "amount_off" BIGINT,
    "currency" TEXT,
    "currency_options" JSONB NOT NULL DEFAULT '{}',
    "duration" TEXT NOT NULL,
    "duration_in_months" INTEGER,
    "max_redemptions" INTEGER,
    "redeem_by" INTEGER,
    "applies_to_products" TEXT[],
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "times_redeemed" INTEGER NOT NULL DEFAULT 0,
    "deleted" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "coupons_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "promotion_codes" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "coupon_seq" BIGINT NOT NULL,
    "created" INTEGER NOT NULL,
    "code" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "customer_id" TEXT,
    "expires_at" INTEGER,
    "max_redemptions" INTEGER,
    "first_time_transaction" BOOLEAN NOT NULL DEFAULT false,
    "minimum_amount" BIGINT,
    "minimum_amount_currency" TEXT,
    "currency_options" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "times_redeemed" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "promotion_codes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "coupons_account_id_id_idx" ON "coupons"("account_id", "id");

-- CreateIndex
CREATE INDEX "coupons_account_id_seq_idx" ON "coupons"("account_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "promotion_codes_seq_key" ON "promotion_codes"("seq");

-- CreateIndex
CREATE INDEX "promotion_codes_account_id_seq_idx" ON "promotion_codes"("account_id", "seq");

-- CreateIndex
CREATE INDEX "promotion_codes_coupon_seq_idx" ON "promotion_codes"("coupon_seq");

-- AddForeignKey
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "promotion_codes" ADD CONSTRAINT "promotion_codes_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "promotion_codes" ADD CONSTRAINT "promotion_codes_coupon_seq_fkey" FOREIGN KEY ("coupon_seq") REFERENCES "coupons"("seq") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "promotion_codes" ADD CONSTRAINT "promotion_codes_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE SET NULL ON UPDATE CASCADE;
