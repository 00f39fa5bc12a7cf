-- AlterTable
ALTER TABLE "idempotency_records" ADD COLUMN     "claim_id" TEXT,
ADD COLUMN     "heartbeat_at" TIMESTAMPTZ(3);
