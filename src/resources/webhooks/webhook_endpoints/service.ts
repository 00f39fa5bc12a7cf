import { unixSeconds } from '../../../lib/clock';
import { Encryption } from '../../../lib/encryption';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginateSql } from '../../../kernel/list';
import { checkHttpUrl } from '../../../kernel/urls';
import { cancelPendingDeliveries } from '../../../events/delivery';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import { sealStoredResponses } from '../../../kernel/idempotency';
import type { Deps, RequestContext } from '../../../kernel/route';
import { insertEndpoint, ownedRows, selectOwned, takeSlot } from './queries';
import { serializeDeletedWebhookEndpoint, serializeWebhookEndpoint, type WebhookEndpointRow } from './serializer';

const NAME = 'webhook endpoint';
const ROW = {
  id: true,
  created: true,
  url: true,
  enabledEvents: true,
  apiVersion: true,
  description: true,
  metadata: true,
  status: true,
  connect: true,
} as const;

/** `*` stands for every event and can't be combined with named types. */
function checkEnabledEvents(events: string[]): string[] {
  const unique = [...new Set(events)];
  if (unique.includes('*') && unique.length > 1) {
    throw invalidRequest("Invalid enabled_events: '*' enables every event and can't be combined with other event types.", 'parameter_invalid', 'enabled_events');
  }
  return unique;
}

const emptyToNull = (value: string | undefined): string | null | undefined => (value === '' ? null : value);

/**
 * One of the caller's endpoints, or `resource_missing`: 404 on `id` for a path parameter, or
 * (with `param`) 400 on that body parameter.
 */
export async function findOwned(ctx: RequestContext, id: string, param?: string): Promise<WebhookEndpointRow & { connect: boolean }> {
  const missing = () => (param === undefined ? resourceMissing(NAME, id) : resourceMissing(NAME, id, param, 400));
  if (!hasIdShape('we', id)) throw missing();
  const [row] = await ctx.deps.sql.query<WebhookEndpointRow & { connect: boolean }>(selectOwned(id, ctx.caller.accountId));
  if (!row) throw missing();
  return row;
}

export async function createWebhookEndpoint(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  checkHttpUrl(params.url, 'url');
  const row: WebhookEndpointRow = {
    id: newId('we'),
    created: unixSeconds(deps.clock),
    url: params.url,
    enabledEvents: checkEnabledEvents(params.enabled_events),
    apiVersion: params.api_version ?? null,
    description: emptyToNull(params.description) ?? null,
    metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
    status: 'enabled',
  };
  const secret = `whsec_${randomBase62(32)}`;
  const sealed = await deps.encryption.seal(secret);
  const limit = deps.config.maxWebhookEndpoints;
  // The slot first: its row lock makes concurrent creates count one after another, never past the limit.
  await deps.write(
    takeSlot(caller.accountId, limit, () =>
      invalidRequest(`You have reached the maximum of ${limit} test webhook endpoints on this account. Delete one before adding another.`, 'webhook_endpoint_limit_reached'),
    ),
  );
  await deps.write(insertEndpoint(row, caller.accountId, params.connect ?? false, sealed, Encryption.keyIdOf(sealed)));
  return serializeWebhookEndpoint(row, { secret });
}

export async function retrieveWebhookEndpoint(ctx: RequestContext) {
  return serializeWebhookEndpoint(await findOwned(ctx, ctx.pathParams.webhook_endpoint));
}

export async function updateWebhookEndpoint(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.webhook_endpoint;
  if (params.url !== undefined) checkHttpUrl(params.url, 'url');
  const enabledEvents = params.enabled_events !== undefined ? checkEnabledEvents(params.enabled_events) : undefined;
  if (!hasIdShape('we', id)) throw resourceMissing(NAME, id);
  const row = await deps.prisma.$transaction(async (tx) => {
    // Lock the row so concurrent metadata edits don't overwrite each other.
    const locked = await tx.$queryRaw<{ metadata: Metadata }[]>`
      SELECT metadata FROM webhook_endpoints WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE`;
    if (locked.length === 0) throw resourceMissing(NAME, id);
    // A disabled endpoint gets nothing more: its pending deliveries and retries stop here.
    if (params.disabled === true) await cancelPendingDeliveries(tx, { endpointId: id });
    return tx.webhookEndpoint.update({
      where: { id },
      data: {
        url: params.url,
        enabledEvents,
        status: params.disabled === undefined ? undefined : params.disabled ? 'disabled' : 'enabled',
        description: emptyToNull(params.description),
        metadata: params.metadata === undefined ? undefined : applyMetadata(locked[0].metadata, params.metadata),
      },
      select: ROW,
    });
  });
  return serializeWebhookEndpoint(row);
}

export async function deleteWebhookEndpoint(ctx: RequestContext) {
  const id = ctx.pathParams.webhook_endpoint;
  if (!hasIdShape('we', id)) throw resourceMissing(NAME, id);
  await ctx.deps.prisma.$transaction(async (tx) => {
    const deleted = await tx.$queryRaw<{ id: string }[]>`
      WITH gone AS (
        DELETE FROM webhook_endpoints WHERE id = ${id} AND account_id = ${ctx.caller.accountId} RETURNING account_id
      )
      UPDATE accounts SET webhook_endpoint_count = webhook_endpoint_count - 1
      FROM gone WHERE accounts.id = gone.account_id
      RETURNING accounts.id`;
    if (deleted.length === 0) throw resourceMissing(NAME, id);
    await cancelPendingDeliveries(tx, { endpointId: id });
  });
  return serializeDeletedWebhookEndpoint(id);
}

export async function listWebhookEndpoints(ctx: RequestContext) {
  return paginateSql<WebhookEndpointRow & { seq: bigint }>({
    params: ctx.params,
    url: '/v1/webhook_endpoints',
    rows: ownedRows(ctx.caller.accountId),
    db: ctx.deps.sql,
    objectName: NAME,
    serialize: (row: WebhookEndpointRow) => serializeWebhookEndpoint(row),
  });
}

/**
 * Seals the signing secrets earlier versions kept in plain text (rows without a key_id), and the
 * stored create responses that repeat them; returns how many were sealed. Every process runs it
 * at start: concurrent runs skip each other's rows, and delivery reads either state meanwhile.
 */
export async function sealPlaintextSecrets(deps: Pick<Deps, 'prisma' | 'encryption'>, batchSize = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const sealed = await deps.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ id: string; secret: string }[]>`
        SELECT id, secret FROM webhook_endpoints WHERE key_id IS NULL LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
      const secrets = await Promise.all(rows.map((r) => (Encryption.isSealed(r.secret) ? r.secret : deps.encryption.seal(r.secret))));
      await tx.$executeRaw`
        UPDATE webhook_endpoints w SET secret = s.secret, key_id = s.key_id
        FROM unnest(${rows.map((r) => r.id)}::text[], ${secrets}::text[], ${secrets.map(Encryption.keyIdOf)}::text[]) AS s(id, secret, key_id)
        WHERE w.id = s.id`;
      return rows.length;
    });
    total += sealed;
    if (sealed < batchSize) break;
  }
  return total + (await sealStoredResponses(deps.prisma, deps.encryption, '"secret":"whsec_'));
}
