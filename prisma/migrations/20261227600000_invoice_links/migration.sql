-- The link of a finalized invoice's hosted page and PDF: the token kept as a hash (the page finds
-- the invoice by it) and sealed (the invoice shows its URLs again); one per invoice, never changed.
CREATE TABLE invoice_links (
  invoice_id text PRIMARY KEY REFERENCES invoices(id) ON DELETE CASCADE ON UPDATE CASCADE,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE ON UPDATE CASCADE,
  created    integer NOT NULL,
  token_hash text NOT NULL,
  token      text NOT NULL
);

CREATE UNIQUE INDEX invoice_links_token_hash_key ON invoice_links (token_hash);
