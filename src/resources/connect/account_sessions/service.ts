import { createHash } from 'node:crypto';
import type { RequestContext } from '../../../kernel/route';
import { invalidRequest, parametersExclusive } from '../../../kernel/errors';
import { unixSeconds } from '../../../lib/clock';
import { randomBase62 } from '../../../lib/ids';
import { findOwned } from '../accounts/service';
import {
  fillComponents,
  PUBLIC_AUTH_FEATURE,
  serializeAccountSession,
  serializeClaim,
  SPEC_AUTH_FEATURE,
  type Components,
} from './serializer';

// Account sessions: a single-use client secret that lets an embedded component act for one
// connected account. Only the secret's SHA-256 hash is stored; the secret is in the create
// response and nowhere else (never in a log line or an error message).

export const SECRET_PREFIX = 'accs_secret__';

export const hashSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

/** POST /v1/account_sessions */
export async function createAccountSession(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  // The spec's and the public spelling of one feature: either, not both.
  for (const [name, component] of Object.entries<{ features?: Record<string, boolean> }>(params.components)) {
    if (component.features?.[SPEC_AUTH_FEATURE] !== undefined && component.features?.[PUBLIC_AUTH_FEATURE] !== undefined) {
      throw parametersExclusive(`components[${name}][features][${PUBLIC_AUTH_FEATURE}]`, `components[${name}][features][${SPEC_AUTH_FEATURE}]`);
    }
  }
  const account = await findOwned(ctx, params.account, 'account');
  const components = fillComponents(params.components);
  const now = unixSeconds(deps.clock);
  const expiresAt = now + deps.config.accountSessionTtlSeconds;
  const clientSecret = `${SECRET_PREFIX}${randomBase62(48)}`;
  await deps.prisma.$transaction(async (tx) => {
    // Records that a session exists; the account may have been deleted since the lookup.
    const marked = await tx.account.updateMany({
      where: { id: account.id, parentAccountId: caller.accountId },
      data: { sessionCreatedAt: now },
    });
    if (marked.count === 0) throw invalidRequest(`No such account: '${account.id}'`, 'resource_missing', 'account');
    await tx.accountSession.create({
      data: { secretHash: hashSecret(clientSecret), accountId: account.id, created: now, expiresAt, components },
    });
  });
  return serializeAccountSession({ account: account.id, clientSecret, components, expiresAt });
}

const noSuchSecret = () =>
  invalidRequest('No such account session: the client secret is not valid.', 'resource_missing', 'client_secret');

/**
 * POST /sandbox/v1/account_sessions/claim: what an embedded component calls with the client
 * secret. One conditional UPDATE claims it, so of concurrent claims exactly one succeeds. The
 * session must belong to the caller: the platform that made it, or the connected account itself.
 */
export async function claimAccountSession(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const secret = String(params.client_secret);
  if (!secret.startsWith(SECRET_PREFIX)) throw noSuchSecret();
  const hash = hashSecret(secret);
  const now = unixSeconds(deps.clock);
  const claimed = await deps.prisma.$queryRaw<{ account_id: string; components: Components; expires_at: number }[]>`
    UPDATE account_sessions AS s SET claimed_at = ${new Date(deps.clock.nowMs())}
    FROM accounts AS a
    WHERE s.secret_hash = ${hash} AND s.claimed_at IS NULL AND s.expires_at > ${now}
      AND a.id = s.account_id AND (a.id = ${caller.accountId} OR a.parent_account_id = ${caller.accountId})
    RETURNING s.account_id, s.components, s.expires_at`;
  if (claimed.length === 1) {
    const row = claimed[0];
    return serializeClaim({ account: row.account_id, components: row.components, expiresAt: row.expires_at });
  }
  // Why not: say so without telling another caller anything about the session.
  const session = await deps.prisma.accountSession.findUnique({
    where: { secretHash: hash },
    select: { claimedAt: true, expiresAt: true, account: { select: { id: true, parentAccountId: true } } },
  });
  if (!session || (session.account.id !== caller.accountId && session.account.parentAccountId !== caller.accountId)) throw noSuchSecret();
  if (session.claimedAt !== null) {
    throw invalidRequest(
      'This account session has already been claimed. A client secret can be used once; create a new account session.',
      'account_session_already_claimed',
      'client_secret',
    );
  }
  throw invalidRequest(
    `This account session expired at ${session.expiresAt}. Create a new account session.`,
    'account_session_expired',
    'client_secret',
  );
}
