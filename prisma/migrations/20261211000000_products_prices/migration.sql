-- CreateTable
-- The catalog: products and their prices. A price's amount fields never change after creation,
-- and a product with prices can't be deleted (the foreign key says so too).
CREATE TABLE "products" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "updated" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "images" TEXT[],
    "marketing_features" JSONB NOT NULL DEFAULT '[]',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "package_dimensions" JSONB,
    "shippable" BOOLEAN,
    "statement_descriptor" TEXT,
    "tax_code" TEXT,
    "unit_label" TEXT,
    "url" TEXT,
    "default_price" TEXT,

    CONSTRAINT "products_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "prices" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "type" TEXT NOT NULL,
    "billing_scheme" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "unit_amount" BIGINT,
    "unit_amount_decimal" TEXT,
    "recurring" JSONB,
    "tiers_mode" TEXT,
    "tiers" JSONB,
    "transform_quantity" JSONB,
    "tax_behavior" TEXT,
    "lookup_key" TEXT,
    "nickname" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "prices_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "products_seq_key" ON "products"("seq");

-- CreateIndex
CREATE INDEX "products_account_id_seq_idx" ON "products"("account_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "prices_seq_key" ON "prices"("seq");

-- CreateIndex
CREATE INDEX "prices_account_id_seq_idx" ON "prices"("account_id", "seq");

-- CreateIndex
CREATE INDEX "prices_product_id_idx" ON "prices"("product_id");

-- CreateIndex
-- A lookup key names at most one price of an account.
CREATE UNIQUE INDEX "prices_account_id_lookup_key_key" ON "prices"("account_id", "lookup_key");

-- AddForeignKey
ALTER TABLE "products" ADD CONSTRAINT "products_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "prices" ADD CONSTRAINT "prices_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "prices" ADD CONSTRAINT "prices_product_id_fkey" FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
