import { ConfigError, type Config } from '../../../config';
import type { Tx } from '../../../events/emit';

// Dunning's schedule (BILLING_RETRY_SCHEDULE): when a subscription invoice whose automatic charge
// failed is charged again, and what happens after the last retry fails. Parsed once per config,
// checked as a process starts (billing's `checkConfig`), so a bad setting stops start-up.

export interface RetryPolicy {
  /** Days from each attempt to the next retry: one retry per entry. */
  readonly days: readonly number[];
  /** The subscription after the last retry failed: `past_due` leaves it so. */
  readonly subscription: 'canceled' | 'unpaid' | 'past_due';
  /** The invoice after the last retry failed: `open` leaves it so. */
  readonly invoice: 'uncollectible' | 'open';
}

export interface RetrySchedules {
  readonly default: RetryPolicy;
  /** By platform account id; a connected account follows its platform's. */
  readonly platforms: ReadonlyMap<string, RetryPolicy>;
}

/** Smart Retries' recommended default, "8 tries within 2 weeks", as a fixed schedule: 14 days in all. */
export const RECOMMENDED_POLICY: RetryPolicy = Object.freeze({ days: Object.freeze([1, 2, 2, 2, 2, 2, 2, 1]), subscription: 'canceled', invoice: 'open' });

const MAX_RETRIES = 25;
const MAX_TOTAL_DAYS = 365;
const SUBSCRIPTION_OUTCOMES = ['canceled', 'unpaid', 'past_due'] as const;
const INVOICE_OUTCOMES = ['uncollectible', 'open'] as const;

class ScheduleError extends Error {}

function policyOf(where: string, value: unknown, base: RetryPolicy): RetryPolicy {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ScheduleError(`${where} must be an object with \`days\`, \`subscription\` and \`invoice\``);
  const entry = value as Record<string, unknown>;
  const unknown = Object.keys(entry).filter((k) => !['days', 'subscription', 'invoice'].includes(k));
  if (unknown.length > 0) throw new ScheduleError(`${where} has unknown field(s) ${unknown.map((k) => `\`${k}\``).join(', ')} (only \`days\`, \`subscription\`, \`invoice\`)`);
  let days = base.days;
  if (entry.days !== undefined) {
    const d = entry.days;
    if (!Array.isArray(d) || d.length === 0 || d.length > MAX_RETRIES || !d.every((n) => typeof n === 'number' && Number.isFinite(n) && n > 0)) {
      throw new ScheduleError(`${where}.days must be an array of 1 to ${MAX_RETRIES} positive numbers of days (one retry each), got ${JSON.stringify(d)}`);
    }
    if (d.reduce((a: number, b: number) => a + b, 0) > MAX_TOTAL_DAYS) throw new ScheduleError(`${where}.days must add up to at most ${MAX_TOTAL_DAYS} days`);
    days = Object.freeze([...(d as number[])]);
  }
  const pick = <T extends string>(name: 'subscription' | 'invoice', allowed: readonly T[], fallback: T): T => {
    const v = entry[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'string' || !allowed.includes(v as T)) throw new ScheduleError(`${where}.${name} must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${JSON.stringify(v)}`);
    return v as T;
  };
  return Object.freeze({ days, subscription: pick('subscription', SUBSCRIPTION_OUTCOMES, base.subscription), invoice: pick('invoice', INVOICE_OUTCOMES, base.invoice) });
}

/**
 * BILLING_RETRY_SCHEDULE: empty for the recommended schedule, else a JSON object of `default` and
 * platform accounts' entries; a platform's entry takes what it leaves out from `default`.
 */
export function parseRetrySchedules(raw: string): RetrySchedules {
  if (raw.trim() === '') return { default: RECOMMENDED_POLICY, platforms: new Map() };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new ScheduleError(`is not valid JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ScheduleError('must be a JSON object: {"default": {...}, "acct_...": {...}}');
  const entries = parsed as Record<string, unknown>;
  const fallback = entries.default === undefined ? RECOMMENDED_POLICY : policyOf('default', entries.default, RECOMMENDED_POLICY);
  const platforms = new Map<string, RetryPolicy>();
  for (const [key, value] of Object.entries(entries)) {
    if (key === 'default') continue;
    if (!/^acct_[A-Za-z0-9]+$/.test(key)) throw new ScheduleError(`has the key "${key}": keys are "default" or a platform account id (acct_...)`);
    platforms.set(key, policyOf(key, value, fallback));
  }
  return { default: fallback, platforms };
}

const parsedOf = new WeakMap<Config, RetrySchedules>();

/** The config's BILLING_RETRY_SCHEDULE, parsed once; a bad one throws the ConfigError start-up stops with. */
export function retrySchedules(config: Pick<Config, 'billingRetrySchedule'>): RetrySchedules {
  let parsed = parsedOf.get(config as Config);
  if (!parsed) {
    try {
      parsed = parseRetrySchedules(config.billingRetrySchedule);
    } catch (err) {
      if (err instanceof ScheduleError) throw new ConfigError(`BILLING_RETRY_SCHEDULE ${err.message}`);
      throw err;
    }
    parsedOf.set(config as Config, parsed);
  }
  return parsed;
}

/** The policy of an account: its platform's entry (itself, or its parent for a connected account), else the default. */
export function policyFor(schedules: RetrySchedules, accountId: string, parentAccountId: string | null): RetryPolicy {
  return schedules.platforms.get(parentAccountId ?? accountId) ?? schedules.default;
}

/** The same, reading the account's platform. */
export async function accountPolicy(tx: Tx, config: Pick<Config, 'billingRetrySchedule'>, accountId: string): Promise<RetryPolicy> {
  const schedules = retrySchedules(config);
  if (schedules.platforms.size === 0) return schedules.default;
  const account = await tx.account.findUnique({ where: { id: accountId }, select: { parentAccountId: true } });
  return policyFor(schedules, accountId, account?.parentAccountId ?? null);
}

/** Seconds from an attempt to the retry `days` after it. */
export const retryDelaySeconds = (days: number): number => Math.round(days * 86_400);

/** Every retry's due time of a schedule started by a failed attempt at `failedAt` (each counted from the one before). */
export function retryDueTimes(failedAt: number, days: readonly number[]): number[] {
  const out: number[] = [];
  let at = failedAt;
  for (const d of days) out.push((at += retryDelaySeconds(d)));
  return out;
}
