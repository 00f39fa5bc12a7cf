-- The connected account a platform's event is about when that account's row is gone
-- (`account.application.deauthorized`, written as the account is deleted): it goes to the
-- platform's Connect endpoints and names that account. Null for every other event.
ALTER TABLE "events" ADD COLUMN "connected_account_id" TEXT;
