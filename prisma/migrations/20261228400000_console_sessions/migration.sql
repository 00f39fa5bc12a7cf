-- CreateTable
-- One row per signed-in console session (src/console/sessions.ts). The browser's cookie holds a
-- random token; only its SHA-256 is kept here, so a dump of this table signs no one in. The API
-- key the session acts with is sealed (`key_id` names the sealing key), so the console can call the
-- API as that key without the key ever being in the cookie, a page or a URL. `csrf_token` guards
-- every form of the session; `stripe_account` is the connected account it views as (null: its own).
CREATE TABLE "console_sessions" (
    "token_hash" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "sealed_key" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "key_hint" TEXT NOT NULL,
    "csrf_token" TEXT NOT NULL,
    "stripe_account" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "console_sessions_pkey" PRIMARY KEY ("token_hash")
);

-- Expired sessions are deleted by time.
CREATE INDEX "console_sessions_expires_at_idx" ON "console_sessions"("expires_at");
CREATE INDEX "console_sessions_account_id_idx" ON "console_sessions"("account_id");

-- AddForeignKey
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
