-- A Stripe CLI session (`stripe listen`, `stripe logs tail`): the websocket it may open, its
-- sealed signing secret, and the last event it acknowledged (`event_cursor`, an events.seq),
-- so a reconnect replays what it missed.
CREATE TABLE "stripecli_sessions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "device_name" TEXT NOT NULL,
    "feature" TEXT NOT NULL,
    "filters" JSONB,
    "secret" TEXT NOT NULL,
    "key_id" TEXT,
    "event_cursor" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "stripecli_sessions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "stripecli_sessions_account_id_created_idx" ON "stripecli_sessions"("account_id", "created");
ALTER TABLE "stripecli_sessions" ADD CONSTRAINT "stripecli_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- What the CLI answered for a forwarded event ("webhook_response" frames): the session's delivery attempts.
CREATE TABLE "stripecli_responses" (
    "seq" BIGSERIAL NOT NULL,
    "session_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "forward_url" TEXT,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    CONSTRAINT "stripecli_responses_pkey" PRIMARY KEY ("seq")
);
CREATE INDEX "stripecli_responses_event_id_idx" ON "stripecli_responses"("event_id");
CREATE INDEX "stripecli_responses_session_id_seq_idx" ON "stripecli_responses"("session_id", "seq");
ALTER TABLE "stripecli_responses" ADD CONSTRAINT "stripecli_responses_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "stripecli_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
