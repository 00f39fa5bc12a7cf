-- CreateTable
-- One row per fixture a seed applied to a platform account, so a re-run (every start with
-- SEED_FILE) skips it. `response` (the API's answer, which later fixtures' references read) is
-- sealed with the key `key_id` names: an answer can carry a secret (a webhook signing secret).
CREATE TABLE "seed_runs" (
    "account_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "object_id" TEXT,
    "response" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "seed_runs_pkey" PRIMARY KEY ("account_id","name")
);

-- AddForeignKey
ALTER TABLE "seed_runs" ADD CONSTRAINT "seed_runs_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
