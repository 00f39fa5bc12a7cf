-- API processes cache which connected accounts a platform may act as (Stripe-Account); a deleted
-- one is announced on commit so every process forgets it at once.
CREATE FUNCTION notify_account_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('account_revoked', OLD.id);
  RETURN OLD;
END;
$$;

CREATE TRIGGER accounts_revoked AFTER DELETE ON accounts
  FOR EACH ROW WHEN (OLD.parent_account_id IS NOT NULL) EXECUTE FUNCTION notify_account_revoked();
