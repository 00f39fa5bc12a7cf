-- A charge's balance transaction: made as it is captured, or later by the worker for
-- `automatic_async` captures (the payment intent's due_at says when), null until then.
ALTER TABLE "charges" ADD COLUMN "balance_transaction" TEXT;
