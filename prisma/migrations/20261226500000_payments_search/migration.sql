-- Search by metadata (`metadata['key']:'value'`, compiled to `metadata @> {"key": "value"}`):
-- GIN indexes in jsonb_path_ops, so a search of a million rows reads the matching ones, not all.
CREATE INDEX "customers_metadata_idx" ON "customers" USING GIN ("metadata" jsonb_path_ops);
CREATE INDEX "payment_intents_metadata_idx" ON "payment_intents" USING GIN ("metadata" jsonb_path_ops);
CREATE INDEX "charges_metadata_idx" ON "charges" USING GIN ("metadata" jsonb_path_ops);
