-- An operation's writes, its idempotency claim and its stored answer go to PostgreSQL as one
-- statement (src/kernel/writes.ts). When a write that had to change a row changed none, or the key
-- was taken, this fails the statement, so nothing of it commits; the API then runs the operation
-- step by step, which says why.
CREATE OR REPLACE FUNCTION sandbank_assert(ok boolean) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'one-statement write not applied' USING ERRCODE = 'SBW01';
  END IF;
  RETURN TRUE;
END
$$;
