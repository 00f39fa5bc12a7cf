import { embed, embeddedOf, type Embedded } from '../../../kernel/versions';
import { sql, type SqlClient } from '../../../lib/sql';
import { SELECT_ROW } from './queries';
import { SELECT_REFUND } from '../refunds/queries';
import { serializeRefund, type RefundRow } from '../refunds/serializer';
import { serializeCharge, type ChargeObject, type ChargeRow } from './serializer';

export { invoiceKey } from './serializer';

// What versions before 2022-11-15 showed that today's objects don't carry: a PaymentIntent's
// `charges` (all its attempts) and a charge's `refunds`, always. They ride along out of sight
// (`embed`, keyed by the object's id) for payments/versions.ts to put back, and are read only
// when the object is rendered at such a version: the request's, or the account's for its events.

/** The version from which intents show `latest_charge` instead of `charges`, and charges `refunds` only when expanded. */
export const HISTORY_UNTIL = '2022-11-15';

export const showsHistory = (version: string): boolean => version < HISTORY_UNTIL;

/** Embedded keys: an intent's charges, a charge's refunds (an object's invoice: `invoiceKey`). */
export const chargesKey = (intentId: string): string => `${intentId}.charges`;
export const refundsKey = (chargeId: string): string => `${chargeId}.refunds`;

/** The charges a request wrote for one intent (made or changed), by id in the order written. */
export interface WrittenCharges {
  readonly rows: ReadonlyMap<string, ChargeRow>;
  /** The request made the intent, so these are all its charges: nothing is read back. */
  readonly all: boolean;
}

/** How many of a list older versions showed inline (the rest through its `url`), as an expanded list does. */
export const INLINE_LIMIT = 10;

/** The first refunds of a charge, newest first, and how many it has. */
export interface RefundsList {
  readonly data: readonly Record<string, unknown>[];
  readonly total_count: number;
}

/** The refunds of each of `chargeIds` (of the account), newest first: one read for them all. */
async function refundsOf(db: SqlClient, accountId: string, chargeIds: readonly string[]): Promise<ReadonlyMap<string, RefundsList>> {
  const rows = await db.query<RefundRow & { seq: bigint }>(
    sql`${SELECT_REFUND} WHERE charge_id = ANY(${chargeIds as string[]}::text[]) AND account_id = ${accountId} ORDER BY seq DESC`,
  );
  const lists = new Map<string, { data: Record<string, unknown>[]; total_count: number }>();
  for (const { seq: _seq, ...row } of rows) {
    const list = lists.get(row.chargeId) ?? { data: [], total_count: 0 };
    if (list.data.length < INLINE_LIMIT) list.data.push(serializeRefund(row));
    list.total_count += 1;
    lists.set(row.chargeId, list);
  }
  return lists;
}

const EMPTY: RefundsList = { data: [], total_count: 0 };

/** What older versions need of `charges`: each one's refunds. */
async function refundsEmbedded(db: SqlClient, accountId: string, charges: readonly ChargeObject[]): Promise<Record<string, unknown>> {
  const lists = charges.length === 0 ? new Map<string, RefundsList>() : await refundsOf(db, accountId, charges.map((c) => c.id));
  return Object.fromEntries(charges.map((c) => [refundsKey(c.id), lists.get(c.id) ?? EMPTY]));
}

/** `charge` with its refunds embedded, when `version` shows them; `fresh`: made by this request, so it has none (no read). */
export async function withChargeHistory<T extends ChargeObject>(db: SqlClient, accountId: string, charge: T, version: string, fresh = false): Promise<T> {
  if (!showsHistory(version)) return charge;
  return embed(charge, { ...embeddedOf(charge), ...(fresh ? { [refundsKey(charge.id)]: EMPTY } : await refundsEmbedded(db, accountId, [charge])) });
}

/** `charges` (a page) with their refunds embedded, when `version` shows them: one read for the page. */
export async function withChargesHistory<T extends ChargeObject>(db: SqlClient, accountId: string, charges: T[], version: string): Promise<T[]> {
  if (!showsHistory(version)) return charges;
  const embedded = await refundsEmbedded(db, accountId, charges);
  for (const c of charges) embed(c, { ...embeddedOf(c), [refundsKey(c.id)]: embedded[refundsKey(c.id)] });
  return charges;
}

/**
 * `intent` with its charges (newest first, the first INLINE_LIMIT) and their refunds embedded,
 * when `version` shows them. An intent never attempted (no `latest_charge`) has none: no read.
 * Everything is embedded flat on the intent, as an event keeps only its object's embedded.
 */
export async function withIntentHistory<T extends { id: string; latest_charge: string | null }>(
  db: SqlClient,
  accountId: string,
  intent: T,
  version: string,
  written?: WrittenCharges,
): Promise<T> {
  if (!showsHistory(version)) return intent;
  const stored = intent.latest_charge === null || written?.all
    ? []
    : (await db.query<ChargeRow & { seq: bigint }>(sql`${SELECT_ROW} WHERE payment_intent_id = ${intent.id} AND account_id = ${accountId} ORDER BY seq DESC`)).map(({ seq: _seq, ...row }) => row);
  // The request's own charges as it wrote them (newest first): on the one-statement path they aren't stored yet.
  const mine = written?.rows ?? new Map<string, ChargeRow>();
  const storedIds = new Set(stored.map((r) => r.id));
  const made = [...mine.values()].filter((r) => !storedIds.has(r.id)).reverse();
  const rows = [...made, ...stored.map((r) => mine.get(r.id) ?? r)];
  const charges = rows.slice(0, INLINE_LIMIT).map((row) => serializeCharge(row));
  const embedded: Record<string, unknown> = { ...embeddedOf(intent) };
  for (const c of charges) Object.assign(embedded, embeddedOf(c) as Embedded | undefined);
  // Charges this request made have no refunds yet: with only those, nothing to read.
  Object.assign(embedded, written?.all ? Object.fromEntries(charges.map((c) => [refundsKey(c.id), EMPTY])) : await refundsEmbedded(db, accountId, charges));
  embedded[chargesKey(intent.id)] = { data: charges, total_count: rows.length };
  return embed(intent, embedded);
}
