import { ACCOUNT_REVOKED_CHANNEL } from '../../../kernel/auth';
import type { RequestContext } from '../../../kernel/route';
import { serializeDataReset, type DeletedCounts } from './serializer';

/**
 * What a reset deletes: the name it answers and the table, children before parents (prices before
 * their products, promotion codes before their coupons). Every table with an `account_id` is here
 * but `api_keys` (the key keeps working), `console_sessions` (so do its console sessions) and
 * `stripecli_sessions` (a running `stripe listen` keeps its secret and its cursor); connected
 * accounts go last; test/resources/sandbox/data.test.ts
 * fails when a new one is missing. Other rows go with these by cascade (deliveries with events,
 * persons and external accounts with their accounts).
 */
export const RESET_TABLES = [
  ['financial_connections_transactions', 'financial_connections_transactions'],
  ['financial_connections_owners', 'financial_connections_owners'],
  ['financial_connections_ownerships', 'financial_connections_ownerships'],
  ['financial_connections_refreshes', 'financial_connections_refreshes'],
  ['financial_connections_accounts', 'financial_connections_accounts'],
  ['financial_connections_sessions', 'financial_connections_sessions'],
  ['identity_verification_reports', 'identity_verification_reports'],
  ['identity_verification_sessions', 'identity_verification_sessions'],
  ['apps_secrets', 'app_secrets'],
  ['account_links', 'account_links'],
  ['account_sessions', 'account_sessions'],
  ['login_links', 'login_links'],
  ['events', 'events'],
  ['webhook_endpoints', 'webhook_endpoints'],
  ['invoice_items', 'invoice_items'],
  // What invoices carry beside their own row: dunning's due retries, payments, hosted links, overdue notices, manual details.
  ['invoice_payment_retries', 'invoice_payment_retries'],
  ['invoice_payments', 'invoice_payments'],
  ['invoice_links', 'invoice_links'],
  ['invoice_overdue_notices', 'invoice_overdue_notices'],
  ['invoice_details', 'invoice_details'],
  // Their lines go with them by cascade.
  ['invoices', 'invoices'],
  ['subscription_items', 'subscription_items'],
  ['subscriptions', 'subscriptions'],
  ['promotion_codes', 'promotion_codes'],
  ['coupons', 'coupons'],
  ['forwarding_requests', 'forwarding_requests'],
  ['refunds', 'refunds'],
  ['charges', 'charges'],
  ['payment_intents', 'payment_intents'],
  ['payment_authentications', 'payment_authentications'],
  ['setup_intents', 'setup_intents'],
  ['payment_methods', 'payment_methods'],
  ['customer_tax_ids', 'customer_tax_ids'],
  ['customer_balance_transactions', 'customer_balance_transactions'],
  ['customers', 'customers'],
  ['prices', 'prices'],
  ['products', 'products'],
  ['tax_rates', 'tax_rates'],
  ['test_clocks', 'test_clocks'],
  ['idempotency_records', 'idempotency_records'],
  // What a seed applied is forgotten with it, so the next seed (SEED_FILE at a restart) applies it again.
  ['seed_runs', 'seed_runs'],
] as const satisfies readonly (readonly [Exclude<keyof DeletedCounts, 'accounts'>, string])[];

/**
 * `DELETE /sandbox/v1/data`: everything of the key's platform and its connected accounts, in the
 * operation's transaction. The platform account and its keys stay, so the key keeps working.
 * Rows are deleted table by table rather than through the accounts' cascades, so the answer can
 * say how many of each went.
 */
export async function resetData(ctx: RequestContext) {
  const platform = ctx.caller.platformAccountId;
  return ctx.deps.prisma.$transaction(async (tx) => {
    const connected = (await tx.$queryRaw<{ id: string }[]>`SELECT id FROM accounts WHERE parent_account_id = ${platform} FOR UPDATE`).map((r) => r.id);
    const ids = [platform, ...connected];
    const deleted = {} as DeletedCounts;
    for (const [name, table] of RESET_TABLES) {
      // A constant table name, never input.
      deleted[name] = await tx.$executeRawUnsafe(`DELETE FROM "${table}" WHERE account_id = ANY($1)`, ids);
    }
    deleted.accounts = await tx.$executeRaw`DELETE FROM accounts WHERE id = ANY(${connected})`;
    // This process forgets them before answering; the others hear the trigger's NOTIFY on commit.
    for (const id of connected) ctx.deps.notifications.announce(ACCOUNT_REVOKED_CHANNEL, id);
    await tx.$executeRaw`UPDATE accounts SET webhook_endpoint_count = 0 WHERE id = ${platform}`;
    ctx.deps.logger.info({ account: platform, deleted }, 'sandbox data reset');
    return serializeDataReset(platform, deleted);
  });
}
