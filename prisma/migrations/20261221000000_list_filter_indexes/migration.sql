-- List filters that an account with many rows made scan all of them (measured with
-- `npm run bench:scale`, 1M rows a table, a quarter on one account; bench/README.md):
-- `GET /v1/customers?email=…` took a sequential scan of customers (170 ms), and
-- `GET /v1/prices?active=false` / `GET /v1/products?active=false` one of prices or products
-- (100 ms each) when few or none match. Each list reads newest first, hence the trailing seq.
CREATE INDEX "customers_account_id_email_seq_idx" ON "customers"("account_id", "email", "seq");
CREATE INDEX "prices_account_id_active_seq_idx" ON "prices"("account_id", "active", "seq");
CREATE INDEX "products_account_id_active_seq_idx" ON "products"("account_id", "active", "seq");
