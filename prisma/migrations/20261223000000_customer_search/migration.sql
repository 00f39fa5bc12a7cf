-- Customer search (`GET /v1/customers/search`): `email~"…"` and `name~"…"` are substring matches
-- (ILIKE '%…%'), which no b-tree serves; a trigram index does. pg_trgm ships with PostgreSQL's
-- contrib (Debian's packages, the official images) and is a trusted extension since 13, so the
-- database's owner may create it. Where it is missing or refused, search still works, by scanning
-- the account's customers newest first, and the migration says so rather than stopping start-up.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
      CREATE INDEX "customers_email_trgm_idx" ON "customers" USING GIN ("email" gin_trgm_ops);
      CREATE INDEX "customers_name_trgm_idx" ON "customers" USING GIN ("name" gin_trgm_ops);
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pg_trgm could not be created (%): customer search by substring scans instead of using an index', SQLERRM;
    END;
  ELSE
    RAISE NOTICE 'pg_trgm is not available: customer search by substring scans instead of using an index';
  END IF;
END $$;
