-- What invoices made through POST /v1/invoices (or changed by their own operations) carry beyond
-- what every invoice has: one row per such invoice, none for a subscription's untouched invoices.
-- `finalize_at` is when a draft with auto_advance finalizes (billing time), null when nothing is due.
CREATE TABLE invoice_details (
  invoice_id              text PRIMARY KEY REFERENCES invoices(id) ON DELETE CASCADE ON UPDATE CASCADE,
  account_id              text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE ON UPDATE CASCADE,
  description             text,
  footer                  text,
  auto_advance            boolean,
  days_until_due          integer,
  discount_records        jsonb NOT NULL DEFAULT '[]',
  marked_uncollectible_at integer,
  sent_at                 integer,
  finalize_at             integer
);

CREATE INDEX invoice_details_finalize_at_idx ON invoice_details (finalize_at);
