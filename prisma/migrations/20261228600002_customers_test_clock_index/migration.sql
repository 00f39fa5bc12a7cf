-- CreateIndex
-- GET /v1/customers?test_clock=…: the customers living on a clock, newest first (a clock holds a few, the account many).
CREATE INDEX "customers_test_clock_id_seq_idx" ON "customers"("test_clock_id", "seq");
