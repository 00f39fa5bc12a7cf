-- `invoice.overdue`: one row per invoice whose overdue event was written, in the event's
-- transaction, so a repeated or late job can't send it twice.
CREATE TABLE invoice_overdue_notices (
  invoice_id text PRIMARY KEY REFERENCES invoices(id) ON DELETE CASCADE ON UPDATE CASCADE,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE ON UPDATE CASCADE,
  sent_at    integer NOT NULL
);

-- Invoices by due time: what the reconciler and test clocks look through for overdue ones (a
-- plain index, as schema.prisma can declare it).
CREATE INDEX "invoices_due_date_idx" ON "invoices"("due_date");
