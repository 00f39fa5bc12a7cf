-- A customer's discount (`coupon` / `promotion_code` at versions before 2025-03-31.basil), stored as subscriptions store theirs.
ALTER TABLE "customers" ADD COLUMN "discounts" JSONB NOT NULL DEFAULT '[]';
