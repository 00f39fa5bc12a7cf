-- CreateTable
CREATE TABLE "identity_verification_sessions" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "verification_flow" TEXT,
    "status" TEXT NOT NULL,
    "client_reference_id" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "options" JSONB NOT NULL,
    "provided_details" JSONB,
    "related_customer" TEXT,
    "related_customer_account" TEXT,
    "related_person" JSONB,
    "return_url" TEXT,
    "last_error" JSONB,
    "last_verification_report" TEXT,
    "verified_outputs" JSONB,
    "submissions" INTEGER NOT NULL DEFAULT 0,
    "pending_outcome" TEXT,
    "processing_due_at" TIMESTAMPTZ(3),
    "redaction_status" TEXT,
    "redaction_due_at" TIMESTAMPTZ(3),

    CONSTRAINT "identity_verification_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "identity_verification_reports" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "created" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "client_reference_id" TEXT,
    "verification_flow" TEXT,
    "checks" JSONB NOT NULL,

    CONSTRAINT "identity_verification_reports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "identity_verification_links" (
    "token_hash" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "expires_at" INTEGER NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "identity_verification_links_pkey" PRIMARY KEY ("token_hash")
);

-- CreateIndex
CREATE UNIQUE INDEX "identity_verification_sessions_seq_key" ON "identity_verification_sessions"("seq");

-- CreateIndex
CREATE INDEX "identity_verification_sessions_account_id_seq_idx" ON "identity_verification_sessions"("account_id", "seq");

-- CreateIndex
CREATE INDEX "identity_verification_sessions_status_processing_due_at_idx" ON "identity_verification_sessions"("status", "processing_due_at");

-- CreateIndex
CREATE INDEX "identity_verification_sessions_redaction_status_redaction_d_idx" ON "identity_verification_sessions"("redaction_status", "redaction_due_at");

-- CreateIndex
CREATE UNIQUE INDEX "identity_verification_reports_seq_key" ON "identity_verification_reports"("seq");

-- CreateIndex
CREATE INDEX "identity_verification_reports_account_id_seq_idx" ON "identity_verification_reports"("account_id", "seq");

-- CreateIndex
CREATE INDEX "identity_verification_reports_session_id_idx" ON "identity_verification_reports"("session_id");

-- CreateIndex
CREATE INDEX "identity_verification_links_session_id_idx" ON "identity_verification_links"("session_id");

-- AddForeignKey
ALTER TABLE "identity_verification_sessions" ADD CONSTRAINT "identity_verification_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "identity_verification_reports" ADD CONSTRAINT "identity_verification_reports_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "identity_verification_reports" ADD CONSTRAINT "identity_verification_reports_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "identity_verification_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "identity_verification_links" ADD CONSTRAINT "identity_verification_links_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "identity_verification_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
