-- CreateIndex
-- The sandbox's list of an account's 3-D Secure challenges (GET /sandbox/v1/payment_authentications), by status, newest first.
CREATE INDEX "payment_authentications_account_id_status_seq_idx" ON "payment_authentications"("account_id", "status", "seq");
