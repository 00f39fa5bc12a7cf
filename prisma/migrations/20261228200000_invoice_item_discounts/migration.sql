-- An invoice item's own discounts (`discounts[]` on create/update), as subscriptions store
-- theirs: [{id, coupon_seq, promotion_code, start, end}]; `discounts` keeps their ids.
ALTER TABLE "invoice_items" ADD COLUMN "discount_records" JSONB NOT NULL DEFAULT '[]';
