-- The object a stored answer is (its top-level `id`), so a redaction or deletion can rewrite
-- every stored copy of that object's answers without opening each sealed body of the account.
ALTER TABLE "idempotency_records" ADD COLUMN "object_id" TEXT;
CREATE INDEX "idempotency_records_account_id_object_id_idx" ON "idempotency_records"("account_id", "object_id");
