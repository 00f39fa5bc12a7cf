-- A payment method's `allow_redisplay` (always, limited, unspecified), as given on create,
-- update or a PaymentIntent's/SetupIntent's `payment_method_data`; a customer's list filters on it.
ALTER TABLE "payment_methods" ADD COLUMN "allow_redisplay" TEXT NOT NULL DEFAULT 'unspecified';
