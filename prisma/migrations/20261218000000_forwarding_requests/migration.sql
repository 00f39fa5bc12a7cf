-- Forwarding requests: the record of one forward, which is also the state its worker and the
-- waiting API share. `status`: pending (no worker took it yet) → sending (a worker is calling the
-- destination) → succeeded | failed; each move is a conditional UPDATE, so a late worker, the API
-- giving up and the reconciler can't both win. `outbound` is the request as sent, card data
-- included, sealed under `key_id`; it is cleared when the record is final. `request_details`,
-- `response_details` are masked. `failure` says what happened to a failed forward.
CREATE TABLE "forwarding_requests" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "payment_method" TEXT NOT NULL,
    "replacements" TEXT[],
    "url" TEXT NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL,
    "request_details" JSONB NOT NULL,
    "response_details" JSONB,
    "request_context" JSONB,
    "outbound" TEXT,
    "key_id" TEXT,
    "timeout_ms" INTEGER NOT NULL,
    "allow_private_network" BOOLEAN NOT NULL,
    "idempotency_key" TEXT,
    "pickup_deadline" TIMESTAMPTZ(3) NOT NULL,
    "claimed_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "error_code" TEXT,
    "failure" TEXT,

    CONSTRAINT "forwarding_requests_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "forwarding_requests_seq_key" ON "forwarding_requests"("seq");
CREATE INDEX "forwarding_requests_account_id_seq_idx" ON "forwarding_requests"("account_id", "seq");
CREATE INDEX "forwarding_requests_account_id_idempotency_key_idx" ON "forwarding_requests"("account_id", "idempotency_key");
CREATE INDEX "forwarding_requests_status_idx" ON "forwarding_requests"("status");
CREATE INDEX "forwarding_requests_created_idx" ON "forwarding_requests"("created");
ALTER TABLE "forwarding_requests" ADD CONSTRAINT "forwarding_requests_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
