-- Dunning: an open subscription invoice whose automatic payment failed waits here for its next
-- attempt (`next_attempt_at`, billing time: the test clock's for invoices on one). `retries_done`
-- counts the retries already run and `policy` is the retry schedule it started with
-- (BILLING_RETRY_SCHEDULE's entry then), so a changed setting doesn't move a running schedule.
-- No row: no retry is due (never failed, paid, or the schedule ran out).
CREATE TABLE invoice_payment_retries (
  invoice_id      text PRIMARY KEY REFERENCES invoices(id) ON DELETE CASCADE ON UPDATE CASCADE,
  account_id      text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE ON UPDATE CASCADE,
  test_clock_id   text,
  next_attempt_at integer NOT NULL,
  retries_done    integer NOT NULL DEFAULT 0,
  policy          jsonb NOT NULL
);

CREATE INDEX invoice_payment_retries_next_attempt_at_idx ON invoice_payment_retries (next_attempt_at);
CREATE INDEX invoice_payment_retries_test_clock_id_next_attempt_at_idx ON invoice_payment_retries (test_clock_id, next_attempt_at);
