-- The period end whose `invoice.upcoming` a subscription already sent (one per period).
ALTER TABLE "subscriptions" ADD COLUMN "upcoming_sent_for" INTEGER;
