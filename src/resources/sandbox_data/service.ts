import type { RequestContext } from '../../kernel/route';
import { serializeDataReset, type DeletedCounts } from './serializer';

/**
 * `DELETE /sandbox/v1/data`: everything of the key's platform and its connected accounts, in the
 * operation's transaction. The platform account and its keys stay, so the key keeps working.
 * Rows are deleted table by table (children first) rather than through the accounts' cascades, so
 * the answer can say how many of each went.
 */
export async function resetData(ctx: RequestContext) {
  const platform = ctx.caller.platformAccountId;
  return ctx.deps.prisma.$transaction(async (tx) => {
    const connected = (await tx.$queryRaw<{ id: string }[]>`SELECT id FROM accounts WHERE parent_account_id = ${platform} FOR UPDATE`).map((r) => r.id);
    const ids = [platform, ...connected];
    const deleted: DeletedCounts = {
      identity_verification_reports: await tx.$executeRaw`DELETE FROM identity_verification_reports WHERE account_id = ANY(${ids})`,
      // Their links go with them (cascade).
      identity_verification_sessions: await tx.$executeRaw`DELETE FROM identity_verification_sessions WHERE account_id = ANY(${ids})`,
      apps_secrets: await tx.$executeRaw`DELETE FROM app_secrets WHERE account_id = ANY(${ids})`,
      account_links: await tx.$executeRaw`DELETE FROM account_links WHERE account_id = ANY(${ids})`,
      account_sessions: await tx.$executeRaw`DELETE FROM account_sessions WHERE account_id = ANY(${ids})`,
      // Deliveries and their attempts go with the events (cascade).
      events: await tx.$executeRaw`DELETE FROM events WHERE account_id = ANY(${ids})`,
      webhook_endpoints: await tx.$executeRaw`DELETE FROM webhook_endpoints WHERE account_id = ANY(${ids})`,
      accounts: await tx.$executeRaw`DELETE FROM accounts WHERE id = ANY(${connected})`,
      idempotency_records: await tx.$executeRaw`DELETE FROM idempotency_records WHERE account_id = ANY(${ids})`,
    };
    await tx.$executeRaw`UPDATE accounts SET webhook_endpoint_count = 0 WHERE id = ${platform}`;
    ctx.deps.logger.info({ account: platform, deleted }, 'sandbox data reset');
    return serializeDataReset(platform, deleted);
  });
}
