-- A delivery attempt is recorded as started before its request is sent, then finished: a worker
-- that dies mid-attempt leaves it in the log, as `unknown` once another run takes the delivery over.
ALTER TABLE "webhook_attempts" ADD COLUMN "outcome" TEXT NOT NULL DEFAULT 'started';
UPDATE "webhook_attempts" SET "outcome" = CASE WHEN "succeeded" THEN 'succeeded' ELSE 'failed' END;
