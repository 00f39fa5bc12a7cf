import { Prisma } from '../../../generated/prisma/client';
import { hashKey as hashToken } from '../../../kernel/auth';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginate } from '../../../kernel/list';
import { handOffEvents } from '../../../events/jobs';
import type { Deps, RequestContext } from '../../../kernel/route';
import { AfterCommit } from '../../../kernel/transaction';
import type { Db } from '../../../kernel/writes';
import type { SqlClient } from '../../../lib/sql';
import { closeOpen, insertChallenge, selectOpen } from './queries';
import type { Tx } from '../../../events/emit';
import { hostedUrl } from '../../../hosted/pages';
import { authenticationQueue, expiryJob } from './jobs';
import { serializeAuthentication } from './serializer';

// 3-D Secure challenges of PaymentIntents and SetupIntents. An intent that needs its customer to
// authenticate starts one (`startAuthentication`): a row with a single-use hosted page token,
// kept as a hash to look it up and sealed to show the intent's `next_action` again. The page (or
// the expiry worker) answers it; the intent's own resource then moves the intent on, through the
// target it registered (`useAuthenticationTarget`), in the same transaction. This module imports
// neither intent resource: payments/index.ts wires them.

export type IntentType = 'payment_intent' | 'setup_intent';
export type AuthenticationResult = 'succeeded' | 'failed' | 'expired';

/** How long a challenge left unanswered stays open before the intent fails it, unless THREE_D_SECURE_TTL_SECONDS says otherwise. */
export const AUTHENTICATION_TTL_SECONDS = 60 * 60;

export const TOKEN_SHAPE = /^[A-Za-z0-9]{48}$/;

/** What an intent's resource does when its challenge is answered (or expires). */
export interface AuthenticationTarget {
  /**
   * Moves intent `intentId` (of `accountId`) on after its challenge ended with `result`, in `tx`
   * (the intent is locked by it). Answers the ids of the events written and the query parameters
   * the page's redirect to the return URL carries (`payment_intent`, `payment_intent_client_secret`,
   * `redirect_status`; the `setup_intent…` ones for SetupIntents).
   */
  finish(
    tx: Tx,
    deps: Deps,
    accountId: string,
    intentId: string,
    result: AuthenticationResult,
  ): Promise<{ eventIds: string[]; redirectParams: Record<string, string> }>;
}

const targets = new Map<IntentType, AuthenticationTarget>();

/** Registers an intent resource's target (payments/index.ts does, once per type). */
export function useAuthenticationTarget(type: IntentType, target: AuthenticationTarget): void {
  targets.set(type, target);
}

export function authenticationTarget(type: IntentType): AuthenticationTarget {
  const target = targets.get(type);
  if (!target) throw new Error(`no authentication target for ${type}`);
  return target;
}

export const PAGE_PATH = '/three_d_secure';

/** The hosted challenge page's URL for a token. */
export const challengeUrl = (deps: Pick<Deps, 'config'>, token: string): string => hostedUrl(deps.config, `${PAGE_PATH}/${token}`);

/**
 * The `next_action` of an intent waiting on a challenge: `redirect_to_url` when the intent has a
 * return URL, else `use_stripe_sdk` (Stripe.js, or its stand-in, opens the same page).
 */
export function nextActionOf(url: string, returnUrl: string | null): Record<string, unknown> {
  if (returnUrl !== null) return { type: 'redirect_to_url', redirect_to_url: { return_url: returnUrl, url } };
  return { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: url, source: null } };
}

/**
 * Starts a challenge for an intent (locked by the caller), ending any it still had open; answers
 * the intent's `next_action`.
 */
/** Who starts a challenge: a request, or billing collecting an invoice (a worker's renewal too). */
export interface ChallengeStarter {
  readonly deps: Pick<Deps, 'clock' | 'config' | 'encryption' | 'queues'>;
  readonly caller: { readonly accountId: string };
}

export async function startAuthentication(
  db: Db,
  ctx: ChallengeStarter,
  start: { intentType: IntentType; intentId: string; returnUrl: string | null },
): Promise<Record<string, unknown>> {
  const now = unixSeconds(ctx.deps.clock);
  await closeAuthentications(db, start.intentId, now);
  const token = randomBase62(48);
  const id = newId('payatt');
  const expiresAt = now + (ctx.deps.config.threeDSecureTtlSeconds ?? AUTHENTICATION_TTL_SECONDS);
  await db.write(
    insertChallenge({
      id,
      accountId: ctx.caller.accountId,
      created: now,
      intentType: start.intentType,
      intentId: start.intentId,
      tokenHash: hashToken(token),
      token: await ctx.deps.encryption.seal(token),
      returnUrl: start.returnUrl,
      expiresAt,
    }),
  );
  // Within an operation the job is added once its transaction committed; the reconciler re-adds it if Redis loses it.
  await ctx.deps.queues.add(authenticationQueue, [expiryJob(id, expiresAt, ctx.deps.clock.nowMs())]);
  return nextActionOf(challengeUrl(ctx.deps, token), start.returnUrl);
}

/** The `next_action` of an intent's open challenge, or null when it has none. */
export async function pendingNextAction(sql: SqlClient, deps: Pick<Deps, 'config' | 'encryption'>, intentId: string): Promise<Record<string, unknown> | null> {
  const [open] = await sql.query<{ token: string; returnUrl: string | null }>(selectOpen(intentId));
  if (!open) return null;
  return nextActionOf(challengeUrl(deps, await deps.encryption.open(open.token)), open.returnUrl);
}

/** Ends an intent's open challenges (it was canceled, or confirmed again): their pages stop working. */
export async function closeAuthentications(db: Db, intentId: string, now: number): Promise<void> {
  await db.write(closeOpen(intentId, now));
}

/** The table of each intent type, to lock an intent before its challenge (the order confirmations and cancels take). */
const INTENT_TABLES: Readonly<Record<IntentType, string>> = { payment_intent: 'payment_intents', setup_intent: 'setup_intents' };

/** A challenge as the page and the expiry read it. */
export interface Challenge {
  readonly id: string;
  readonly intentType: IntentType;
  readonly intentId: string;
  readonly returnUrl: string | null;
  readonly status: string;
  readonly expiresAt: number;
}

const CHALLENGE = { id: true, intentType: true, intentId: true, returnUrl: true, status: true, expiresAt: true } as const;

/** The challenge a page token opens, or null for a token that never was one. */
export async function challengeOfToken(db: Tx, token: string): Promise<Challenge | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  return (await db.paymentAuthentication.findUnique({ where: { tokenHash: hashToken(token) }, select: CHALLENGE })) as Challenge | null;
}

/** What answering a challenge did: the events to hand off after commit, and where the customer goes back to. */
export interface Answered {
  readonly challenge: Challenge;
  readonly eventIds: string[];
  readonly redirectParams: Record<string, string>;
}

/**
 * Ends a pending challenge with `result` and moves its intent on through its target, in one
 * transaction: the intent is locked first, then the challenge is claimed with one conditional
 * UPDATE (pending, and before its expiry for an answer, after it for `expired`), so it is answered
 * once whoever comes second. Undefined when there was nothing to claim.
 */
export async function answerChallenge(deps: Deps, where: { tokenHash: string } | { id: string }, result: AuthenticationResult): Promise<Answered | undefined> {
  const now = unixSeconds(deps.clock);
  // Jobs the target adds (a capture to settle later, say) go to Redis once this commits, as an operation's do.
  const afterCommit = new AfterCommit(deps.queues);
  const answered = await deps.prisma.$transaction(async (tx) => {
    const found = (await tx.paymentAuthentication.findUnique({ where, select: { ...CHALLENGE, accountId: true } })) as (Challenge & { accountId: string }) | null;
    if (!found || found.status !== 'pending') return undefined;
    await tx.$queryRaw`SELECT id FROM ${Prisma.raw(INTENT_TABLES[found.intentType])} WHERE id = ${found.intentId} FOR UPDATE`;
    const due = result === 'expired' ? Prisma.sql`expires_at <= ${now}` : Prisma.sql`expires_at > ${now}`;
    const claimed = await tx.$queryRaw<{ id: string }[]>`
      UPDATE payment_authentications SET status = ${result}, answered_at = ${now} WHERE id = ${found.id} AND status = 'pending' AND ${due} RETURNING id`;
    if (claimed.length === 0) return undefined;
    const { eventIds, redirectParams } = await authenticationTarget(found.intentType).finish(tx, { ...deps, queues: afterCommit }, found.accountId, found.intentId, result);
    return { challenge: found, eventIds, redirectParams };
  });
  await afterCommit.flush();
  return answered;
}

// The sandbox's operations on challenges (the console's test outcomes use them): the caller's
// challenges, and answering one as its hosted page's buttons do, without the page's token.

const NAME = 'payment authentication';
const ROW = { id: true, seq: true, created: true, intentType: true, intentId: true, status: true, expiresAt: true, answeredAt: true } as const;

/** `GET /sandbox/v1/payment_authentications`: the caller's challenges, newest first (`status` filters). */
export async function listAuthentications(ctx: RequestContext) {
  const model = {
    findUnique: (args: { where: Record<string, unknown>; select: { seq: true } }) => ctx.deps.prisma.paymentAuthentication.findFirst(args),
    findMany: (args: { where: Record<string, unknown>; orderBy: { seq: 'asc' | 'desc' }; take: number }) =>
      ctx.deps.prisma.paymentAuthentication.findMany({ ...args, select: ROW }),
  };
  return paginate({
    params: ctx.params,
    url: '/sandbox/v1/payment_authentications',
    where: { accountId: ctx.caller.accountId, ...(ctx.params.status !== undefined ? { status: ctx.params.status } : {}) },
    model,
    objectName: NAME,
    serialize: serializeAuthentication,
  });
}

/** `POST /sandbox/v1/payment_authentications/{id}/complete` and `/fail`: answers a pending challenge of the caller's. */
export async function answerAuthentication(ctx: RequestContext, result: 'succeeded' | 'failed') {
  const id = ctx.pathParams.payment_authentication;
  const where = { id, accountId: ctx.caller.accountId };
  const found = hasIdShape('payatt', id) ? await ctx.deps.prisma.paymentAuthentication.findFirst({ where, select: ROW }) : null;
  if (!found) throw resourceMissing(NAME, id);
  const answered = found.status === 'pending' ? await answerChallenge(ctx.deps, { id }, result) : undefined;
  if (!answered) {
    // Answered, canceled by a new confirmation, or past its expiry (the expiry job fails it): as its page says.
    const now = await ctx.deps.prisma.paymentAuthentication.findFirstOrThrow({ where, select: ROW });
    const why = now.status === 'pending' ? 'has expired' : now.status === 'canceled' ? 'was replaced or canceled' : `has already been answered (${now.status})`;
    throw invalidRequest(`This authentication ${why}: only a pending one can be answered.`);
  }
  await handOffEvents(ctx.deps.queues, answered.eventIds);
  return serializeAuthentication(await ctx.deps.prisma.paymentAuthentication.findUniqueOrThrow({ where: { id }, select: ROW }));
}
