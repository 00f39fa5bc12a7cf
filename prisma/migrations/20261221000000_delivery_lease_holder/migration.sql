-- Which job holds a delivery's lease (`locked_until`): a job run again after its worker died takes
-- over only its own leases, never one another job for the same delivery holds.
ALTER TABLE "webhook_deliveries" ADD COLUMN "locked_by" TEXT;
