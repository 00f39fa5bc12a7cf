-- AlterTable
-- The signing secret is sealed from now on, under the key `key_id` names. Rows written before
-- have none (their secret is still plain text); every process seals them at start.
ALTER TABLE "webhook_endpoints" ADD COLUMN     "key_id" TEXT;
