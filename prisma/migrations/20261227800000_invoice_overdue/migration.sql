-- `invoice.overdue`: one row per invoice whose overdue event was written, in the event's
-- transaction, so a repeated or late job can't send it twice.
CREATE TABLE invoice_overdue_notices (
  invoice_id text PRIMARY KEY REFERENCES invoices(id) ON DELETE CASCADE ON UPDATE CASCADE,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE ON UPDATE CASCADE,
  sent_at    integer NOT NULL
);

-- The open send_invoice invoices by due time: what the reconciler and test clocks look through.
CREATE INDEX invoices_open_send_invoice_due_date_idx ON invoices (due_date) WHERE status = 'open' AND collection_method = 'send_invoice' AND due_date IS NOT NULL;
