-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "api_version" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "request_id" TEXT,
    "idempotency_key" TEXT,
    "pending_webhooks" INTEGER NOT NULL DEFAULT 0,
    "fanned_out_at" TIMESTAMPTZ(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "resend_number" INTEGER NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "locked_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "response_excerpt" TEXT,
    "succeeded" BOOLEAN NOT NULL,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "events_seq_key" ON "events"("seq");

-- CreateIndex
CREATE INDEX "events_account_id_seq_idx" ON "events"("account_id", "seq");

-- CreateIndex
CREATE INDEX "events_fanned_out_at_idx" ON "events"("fanned_out_at");

-- CreateIndex
CREATE INDEX "events_created_idx" ON "events"("created");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_status_idx" ON "webhook_deliveries"("endpoint_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_event_id_endpoint_id_resend_number_key" ON "webhook_deliveries"("event_id", "endpoint_id", "resend_number");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_attempts_seq_key" ON "webhook_attempts"("seq");

-- CreateIndex
CREATE INDEX "webhook_attempts_endpoint_id_seq_idx" ON "webhook_attempts"("endpoint_id", "seq");

-- CreateIndex
CREATE INDEX "webhook_attempts_delivery_id_idx" ON "webhook_attempts"("delivery_id");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;
