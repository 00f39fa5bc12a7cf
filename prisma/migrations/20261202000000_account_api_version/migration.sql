-- A platform's default API version is the one its first request pinned (Stripe-Version); until
-- then it is null and follows the DEFAULT_API_VERSION setting. Existing accounts keep theirs.
-- Connected accounts' events are rendered at their platform's version, so theirs is null too.
ALTER TABLE "accounts" ALTER COLUMN "default_api_version" DROP NOT NULL;
UPDATE "accounts" SET "default_api_version" = NULL WHERE "parent_account_id" IS NOT NULL;
