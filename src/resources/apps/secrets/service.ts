import { createHash } from 'node:crypto';
import { unixSeconds } from '../../../lib/clock';
import { Encryption } from '../../../lib/encryption';
import { newId } from '../../../lib/ids';
import type { PrismaClient } from '../../../lib/prisma';
import { invalidRequest, parameterMissing, resourceMissing } from '../../../kernel/errors';
import { paginate } from '../../../kernel/list';
import type { RequestContext } from '../../../kernel/route';
import { serializeSecret, type AppSecretRow } from './serializer';

const NAME = 'secret';
const ROW = { id: true, created: true, name: true, scopeType: true, scopeUser: true, expiresAt: true } as const;

interface ScopeParam {
  type: 'account' | 'user';
  user?: string;
}

interface Scope {
  type: 'account' | 'user';
  user: string | null;
  /** What rows are keyed by: names and user ids may be 5000 characters, too long for an index. */
  hash: string;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** `user` is required exactly when `type` is `user`. */
function scopeOf(param: ScopeParam): Scope {
  if (param.type === 'user' && param.user === undefined) throw parameterMissing('scope[user]');
  if (param.type === 'account' && param.user !== undefined) {
    throw invalidRequest('Invalid scope: scope[user] may only be given when scope[type] is user.', 'parameter_invalid', 'scope[user]');
  }
  const user = param.user ?? null;
  return { type: param.type, user, hash: sha256(JSON.stringify([param.type, user])) };
}

/** A secret past its expires_at is gone, whether or not the sweep has deleted its row yet. */
const isLive = (row: { expiresAt: number | null }, now: number): boolean => row.expiresAt === null || row.expiresAt > now;

const missing = (name: string) => resourceMissing(NAME, name, 'name');

export async function createSecret(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const scope = scopeOf(params.scope);
  const now = unixSeconds(deps.clock);
  const expiresAt: number | null = params.expires_at ?? null;
  if (expiresAt !== null && expiresAt <= now) {
    throw invalidRequest(`Invalid expires_at: ${expiresAt} is not in the future (it is now ${now}).`, 'parameter_invalid', 'expires_at');
  }
  const payload = await deps.encryption.seal(params.payload);
  const row: AppSecretRow = { id: newId('appsecret'), created: now, name: params.name, scopeType: scope.type, scopeUser: scope.user, expiresAt };
  // Replacing makes a new secret (new id, created and list position) in place of the old one,
  // atomically, so concurrent sets of one name leave exactly one secret.
  await deps.prisma.$executeRaw`
    INSERT INTO app_secrets (id, account_id, created, name, name_hash, scope_type, scope_user, scope_hash, payload, key_id, expires_at)
    VALUES (${row.id}, ${caller.accountId}, ${now}, ${row.name}, ${sha256(row.name)}, ${scope.type}, ${scope.user}, ${scope.hash},
            ${payload}, ${Encryption.keyIdOf(payload)}, ${expiresAt})
    ON CONFLICT (account_id, scope_hash, name_hash) DO UPDATE
      SET id = EXCLUDED.id, seq = DEFAULT, created = EXCLUDED.created, payload = EXCLUDED.payload,
          key_id = EXCLUDED.key_id, expires_at = EXCLUDED.expires_at`;
  return serializeSecret(row);
}

export async function findSecret(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const scope = scopeOf(params.scope);
  const row = await deps.prisma.appSecret.findUnique({
    where: { accountId_scopeHash_nameHash: { accountId: caller.accountId, scopeHash: scope.hash, nameHash: sha256(params.name) } },
    select: { ...ROW, payload: true },
  });
  if (!row || !isLive(row, unixSeconds(deps.clock))) throw missing(params.name);
  return serializeSecret(row, { payload: await deps.encryption.open(row.payload) });
}

export async function deleteSecret(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const scope = scopeOf(params.scope);
  const rows = await deps.prisma.$queryRaw<{ id: string; created: number; expires_at: number | null }[]>`
    DELETE FROM app_secrets WHERE account_id = ${caller.accountId} AND scope_hash = ${scope.hash} AND name_hash = ${sha256(params.name)}
    RETURNING id, created, expires_at`;
  // An expired secret was already gone for the caller; deleting its row is the sweep's work done early.
  if (rows.length === 0 || !isLive({ expiresAt: rows[0].expires_at }, unixSeconds(deps.clock))) throw missing(params.name);
  const { id, created, expires_at: expiresAt } = rows[0];
  return serializeSecret({ id, created, name: params.name, scopeType: scope.type, scopeUser: scope.user, expiresAt }, { deleted: true });
}

export async function listSecrets(ctx: RequestContext) {
  const scope = scopeOf(ctx.params.scope);
  const now = unixSeconds(ctx.deps.clock);
  return paginate<AppSecretRow & { seq: bigint }>({
    params: ctx.params,
    url: '/v1/apps/secrets',
    where: { accountId: ctx.caller.accountId, scopeHash: scope.hash, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    model: ctx.deps.prisma.appSecret as any,
    objectName: NAME,
    serialize: (row: AppSecretRow) => serializeSecret(row),
  });
}

/**
 * Deletes secrets past their expires_at, `batchSize` rows per statement so a large backlog never
 * holds many locks at once; returns how many. Concurrent sweeps skip each other's rows.
 */
export async function sweepExpiredSecrets(prisma: PrismaClient, now: number, batchSize = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await prisma.$executeRaw`
      DELETE FROM app_secrets WHERE id IN (
        SELECT id FROM app_secrets WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      )`;
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
