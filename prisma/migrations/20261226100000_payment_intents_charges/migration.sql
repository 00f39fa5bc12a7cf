-- A charge's balance transaction: made as it is captured, or later by the worker for
-- `automatic_async` captures (the payment intent's due_at says when), null until then.
ALTER TABLE "charges" ADD COLUMN "balance_transaction" TEXT;

-- A PaymentIntent's `allowed_payment_method_types` and `excluded_payment_method_types` as sent
-- (null when not); `payment_method_types` keeps the list they work out to.
ALTER TABLE "payment_intents" ADD COLUMN "allowed_payment_method_types" TEXT[];
ALTER TABLE "payment_intents" ADD COLUMN "excluded_payment_method_types" TEXT[];
