-- Search by metadata on billing's searchable objects (`metadata['key']:'value'`, compiled to
-- `metadata @> {"key": "value"}`): GIN indexes in jsonb_path_ops, as payments' searches have.
CREATE INDEX "subscriptions_metadata_idx" ON "subscriptions" USING GIN ("metadata" jsonb_path_ops);
CREATE INDEX "invoices_metadata_idx" ON "invoices" USING GIN ("metadata" jsonb_path_ops);
CREATE INDEX "prices_metadata_idx" ON "prices" USING GIN ("metadata" jsonb_path_ops);
CREATE INDEX "products_metadata_idx" ON "products" USING GIN ("metadata" jsonb_path_ops);
