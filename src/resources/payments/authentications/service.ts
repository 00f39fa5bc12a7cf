import { hashKey as hashToken } from '../../../kernel/auth';
import { unixSeconds } from '../../../lib/clock';
import { newId, randomBase62 } from '../../../lib/ids';
import type { Deps, RequestContext } from '../../../kernel/route';
import type { Tx } from '../../../events/emit';
import { hostedUrl } from '../../../hosted/pages';

// 3-D Secure challenges of PaymentIntents and SetupIntents. An intent that needs its customer to
// authenticate starts one (`startAuthentication`): a row with a single-use hosted page token,
// kept as a hash to look it up and sealed to show the intent's `next_action` again. The page (or
// the expiry worker) answers it; the intent's own resource then moves the intent on, through the
// target it registered (`useAuthenticationTarget`), in the same transaction. This module imports
// neither intent resource: payments/index.ts wires them.

export type IntentType = 'payment_intent' | 'setup_intent';
export type AuthenticationResult = 'succeeded' | 'failed' | 'expired';

/** How long a challenge left unanswered stays open before the intent fails it. */
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
export async function startAuthentication(
  tx: Tx,
  ctx: RequestContext,
  start: { intentType: IntentType; intentId: string; returnUrl: string | null },
): Promise<Record<string, unknown>> {
  const now = unixSeconds(ctx.deps.clock);
  await closeAuthentications(tx, start.intentId, now);
  const token = randomBase62(48);
  await tx.paymentAuthentication.create({
    data: {
      id: newId('payatt'),
      accountId: ctx.caller.accountId,
      created: now,
      intentType: start.intentType,
      intentId: start.intentId,
      tokenHash: hashToken(token),
      token: await ctx.deps.encryption.seal(token),
      returnUrl: start.returnUrl,
      status: 'pending',
      expiresAt: now + AUTHENTICATION_TTL_SECONDS,
    },
    select: { id: true },
  });
  return nextActionOf(challengeUrl(ctx.deps, token), start.returnUrl);
}

/** The `next_action` of an intent's open challenge, or null when it has none. */
export async function pendingNextAction(db: Tx, deps: Pick<Deps, 'config' | 'encryption'>, intentId: string): Promise<Record<string, unknown> | null> {
  const open = await db.paymentAuthentication.findFirst({
    where: { intentId, status: 'pending' },
    orderBy: { seq: 'desc' },
    select: { token: true, returnUrl: true },
  });
  if (!open) return null;
  return nextActionOf(challengeUrl(deps, await deps.encryption.open(open.token)), open.returnUrl);
}

/** Ends an intent's open challenges (it was canceled, or confirmed again): their pages stop working. */
export async function closeAuthentications(tx: Tx, intentId: string, now: number): Promise<void> {
  await tx.paymentAuthentication.updateMany({ where: { intentId, status: 'pending' }, data: { status: 'canceled', answeredAt: now } });
}
