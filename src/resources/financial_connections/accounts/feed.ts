import { createHash } from 'node:crypto';
import { CURRENCY, type TestAccount } from './institutions';

// The data a test account's bank would report, generated from a per-account seed (its institution
// and template) and the refresh's number, never from chance: the same account always has the same
// balances, owners and history. A first transaction refresh reports up to 180 days; each later
// one adds what happened since the last and settles some pending transactions, as a feed does.

const DAY = 86_400;
export const HISTORY_DAYS = 180;
/** Transactions younger than this are still pending in the first report. */
const PENDING_SECONDS = 2 * DAY;

/** A small deterministic generator (mulberry32) seeded from a string. */
export function rngOf(...parts: (string | number)[]): () => number {
  let state = createHash('sha256').update(parts.join('\u0000')).digest().readUInt32LE(0);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const between = (rng: () => number, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: () => number, items: readonly T[]): T => items[Math.floor(rng() * items.length)];

export const seedOf = (institution: string, template: string): string => `${institution}/${template}`;

/** The account's balance at its `step`-th balance refresh, in the public shape. */
export function balanceOf(seed: string, template: TestAccount, step: number, asOf: number): Record<string, unknown> {
  const rng = rngOf(seed, 'balance', step);
  // Within ±5% of the template's figure, moving a little at each refresh.
  const amount = Math.round(template.balance * (0.95 + rng() * 0.1));
  if (template.category === 'credit') {
    return { as_of: asOf, type: 'credit', credit: { used: { [CURRENCY]: amount } }, current: { [CURRENCY]: -amount } };
  }
  const pending = template.category === 'cash' ? between(rng, 0, Math.min(50_000, amount)) : 0;
  return { as_of: asOf, type: 'cash', cash: { available: { [CURRENCY]: amount - pending } }, current: { [CURRENCY]: amount } };
}

export interface OwnerData {
  readonly name: string;
  readonly email: string | null;
  readonly phone: string | null;
  readonly raw_address: string | null;
}

const FIRST = ['Jenny', 'Sam', 'Alex', 'Maria', 'Chris', 'Priya', 'Jordan', 'Lee'];
const LAST = ['Rosen', 'Nakamura', 'Okafor', 'Garcia', 'Smith', 'Patel', 'Kowalski', 'Chen'];
const STREETS = ['Main Street', 'Market Street', 'Oak Avenue', 'Elm Street', 'Pine Road'];

/** The owners an ownership refresh finds: several for joint accounts, none where the bank has no data. */
export function ownersOf(seed: string, template: TestAccount): OwnerData[] {
  const rng = rngOf(seed, 'owners');
  const count = { single: 1, joint: 2, partial: 1, none: 0 }[template.owners];
  const address = `${between(rng, 10, 9999)} ${pick(rng, STREETS)}, San Francisco, CA 94111, US`;
  const owners: OwnerData[] = [];
  for (let i = 0; i < count; i++) {
    const first = pick(rng, FIRST);
    const last = pick(rng, LAST);
    if (template.owners === 'partial') {
      owners.push({ name: `${first} ${last}`, email: null, phone: null, raw_address: null });
      continue;
    }
    owners.push({
      name: `${first} ${last}`,
      email: `${first}.${last}@example.com`.toLowerCase(),
      phone: `+1555555${String(between(rng, 0, 9999)).padStart(4, '0')}`,
      raw_address: address,
    });
  }
  return owners;
}

export interface NewTransaction {
  readonly ordinal: number;
  readonly amount: number;
  readonly description: string;
  readonly status: 'pending' | 'posted' | 'void';
  readonly transactedAt: number;
  readonly postedAt: number | null;
  readonly voidAt: number | null;
}

const SPENDING = ['Coffee shop', 'Grocery store', 'Restaurant', 'Gas station', 'Online purchase', 'Pharmacy', 'Bookstore', 'Electric bill', 'Phone bill', 'Streaming service'];
const CREDITS: Record<string, readonly string[]> = {
  checking: ['Payroll deposit', 'Transfer from savings', 'Refund'],
  savings: ['Interest payment', 'Transfer from checking'],
  credit_card: ['Card payment - thank you'],
  line_of_credit: ['Payment received'],
  mortgage: ['Mortgage payment received'],
  other: ['Dividend', 'Deposit'],
};

/** One transaction at `transactedAt`, drawn from `rng`: mostly money out, sometimes in. */
function draw(rng: () => number, template: TestAccount, ordinal: number, transactedAt: number): Omit<NewTransaction, 'status' | 'postedAt' | 'voidAt'> {
  const credit = rng() < (template.subcategory === 'savings' ? 0.4 : 0.15);
  if (credit) {
    const amount = template.subcategory === 'checking' ? between(rng, 50_000, 300_000) : between(rng, 500, 150_000);
    return { ordinal, amount, description: pick(rng, CREDITS[template.subcategory] ?? CREDITS.other), transactedAt };
  }
  return { ordinal, amount: -between(rng, 250, 25_000), description: pick(rng, SPENDING), transactedAt };
}

/** What a first transaction refresh at `now` reports: about 180 days, oldest first, the last two days pending. */
export function initialHistory(seed: string, template: TestAccount, now: number): NewTransaction[] {
  const out: NewTransaction[] = [];
  for (let daysAgo = HISTORY_DAYS - 1; daysAgo >= 0; daysAgo--) {
    // Each day's transactions depend on the day's distance from the refresh, not on the calendar.
    const rng = rngOf(seed, 'day', daysAgo);
    const count = Math.floor(rng() * 2.2);
    for (let i = 0; i < count; i++) {
      const transactedAt = now - daysAgo * DAY - between(rng, 60, DAY - 60);
      const base = draw(rng, template, out.length, transactedAt);
      const age = now - transactedAt;
      if (age < PENDING_SECONDS) {
        out.push({ ...base, status: 'pending', postedAt: null, voidAt: null });
      } else if (rng() < 0.03) {
        out.push({ ...base, status: 'void', postedAt: null, voidAt: transactedAt + DAY });
      } else {
        out.push({ ...base, status: 'posted', postedAt: transactedAt + DAY, voidAt: null });
      }
    }
  }
  return out;
}

/** What the `step`-th later refresh (step ≥ 2) adds: one to three transactions between the last refresh and now, pending. */
export function laterTransactions(seed: string, template: TestAccount, step: number, firstOrdinal: number, since: number, now: number): NewTransaction[] {
  const rng = rngOf(seed, 'refresh', step);
  const count = between(rng, 1, 3);
  const span = Math.max(count, now - since);
  const out: NewTransaction[] = [];
  for (let i = 0; i < count; i++) {
    const transactedAt = Math.min(now, since + Math.ceil((span * (i + 1)) / (count + 1)));
    out.push({ ...draw(rng, template, firstOrdinal + i, transactedAt), status: 'pending', postedAt: null, voidAt: null });
  }
  return out;
}

/** Whether a pending transaction settles at the `step`-th refresh, and how: most post, a few are voided. */
export function settlementOf(seed: string, step: number, ordinal: number): 'posted' | 'void' | null {
  const roll = rngOf(seed, 'settle', step, ordinal)();
  if (roll < 0.08) return 'void';
  if (roll < 0.75) return 'posted';
  return null;
}
