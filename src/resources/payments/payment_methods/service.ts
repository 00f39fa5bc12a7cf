import { createHash } from 'node:crypto';
import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { Encryption } from '../../../lib/encryption';
import { hasIdShape, newId } from '../../../lib/ids';
import type { PrismaClient } from '../../../lib/prisma';
import { invalidRequest, parameterMissing, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginate } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { prismaDb, type Db } from '../../../kernel/writes';
import type { SqlClient } from '../../../lib/sql';
import { causeOf, emit, emitIn, previousAttributes, type Tx } from '../../../events/emit';
import type { EventType } from '../../../events/types';
import { handOffEvents } from '../../../events/jobs';
import { EMPTY_BILLING_DETAILS, serializePaymentMethod, type PaymentMethodRow, type StoredPaymentMethod } from './serializer';
import { attachTo, insertCard as insertCardRow, lockLiveCustomerRow, selectById, selectOwnedForUpdate, updateCard } from './queries';
import {
  attachError,
  cardError,
  cvcLength,
  liveCardError,
  luhnValid,
  numberOfTestPaymentMethod,
  numberOfTestToken,
  testCardOf,
  unavailableTypeError,
  type CardOutcome,
  type TestCard,
} from './testCards';

const NAME = 'PaymentMethod';
export const ROW = {
  id: true,
  created: true,
  customerId: true,
  billingDetails: true,
  metadata: true,
  brand: true,
  funding: true,
  country: true,
  last4: true,
  expMonth: true,
  expYear: true,
  fingerprint: true,
  cvcCheck: true,
  outcome: true,
  allowRedisplay: true,
} as const;

export type { StoredPaymentMethod };

interface CardParam {
  number?: string;
  exp_month?: number;
  exp_year?: number;
  cvc?: string;
  token?: string;
}

interface BillingDetailsParam {
  address?: Record<string, string> | '';
  email?: string;
  name?: string;
  phone?: string;
  tax_id?: string;
}

/** What a new card payment method is made of, checked. */
interface CheckedCard {
  readonly card: TestCard;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvc: string | undefined;
}

const ADDRESS_KEYS = ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const;

/** Two-digit years are this century's, as the public API reads them. */
const fullYear = (year: number): number => (year < 100 ? 2000 + year : year);

/** Names a parameter of `card[…]` where it was sent: `card[number]` itself, or inside `payment_method_data`. */
type ParamAt = (name: string) => string;
const topLevel: ParamAt = (name) => name;

/** The public API's card checks, in its order: number, test card, expiry, CVC. */
function checkCard(param: CardParam, now: Date, at: ParamAt = topLevel): CheckedCard {
  const number = param.number!;
  if (!/^\d{12,19}$/.test(number) || !luhnValid(number)) throw cardError('Your card number is incorrect.', 'incorrect_number', { param: at('card[number]') });
  const card = testCardOf(number);
  if (!card) throw liveCardError();
  if (param.exp_month === undefined) throw parameterMissing(at('card[exp_month]'));
  if (param.exp_year === undefined) throw parameterMissing(at('card[exp_year]'));
  const { expMonth, expYear } = checkExpiry(param.exp_month, param.exp_year, now, at);
  if (param.cvc !== undefined && !new RegExp(`^\\d{${cvcLength(card.brand)}}$`).test(param.cvc)) {
    throw cardError("Your card's security code is invalid.", 'invalid_cvc', { param: at('card[cvc]') });
  }
  return { card, expMonth, expYear, cvc: param.cvc };
}

function checkExpiry(month: number, year: number, now: Date, at: ParamAt = topLevel): { expMonth: number; expYear: number } {
  const expYear = fullYear(year);
  const thisYear = now.getUTCFullYear();
  if (month < 1 || month > 12) throw cardError("Your card's expiration month is invalid.", 'invalid_expiry_month', { param: at('card[exp_month]') });
  if (expYear < thisYear || expYear > thisYear + 50) throw cardError("Your card's expiration year is invalid.", 'invalid_expiry_year', { param: at('card[exp_year]') });
  if (expYear === thisYear && month < now.getUTCMonth() + 1) {
    throw cardError("Your card's expiration month is invalid.", 'invalid_expiry_month', { param: at('card[exp_month]') });
  }
  return { expMonth: month, expYear };
}

/** `card[…]` as sent: a test token (`tok_visa`) or a test card's details, checked. */
function checkedCardOf(card: CardParam | undefined, now: Date, at: ParamAt = topLevel): CheckedCard {
  if (card === undefined) throw parameterMissing(at('card'));
  if (card.token !== undefined && card.number !== undefined) throw parametersExclusive(at('card[number]'), at('card[token]'));
  if (card.token !== undefined) {
    const number = numberOfTestToken(card.token);
    if (number === undefined) throw resourceMissing('token', card.token, at('card[token]'), 400);
    return testCardExpiry(number, now);
  }
  if (card.number !== undefined) return checkCard(card, now, at);
  throw parameterMissing(at('card[number]'));
}

/** A public test card as its PaymentMethod id or token gives it: valid for a year from now. */
function testCardExpiry(number: string, now: Date): CheckedCard {
  return { card: testCardOf(number)!, expMonth: now.getUTCMonth() + 1, expYear: now.getUTCFullYear() + 1, cvc: undefined };
}

/** Stable per platform and number, as the public API's fingerprints are; no number can be read back from it. */
const fingerprintOf = (platformAccountId: string, number: string): string =>
  createHash('sha256').update(`${platformAccountId}:${number}`).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 16);

function billingDetailsOf(param: BillingDetailsParam | undefined, current: Record<string, unknown> = EMPTY_BILLING_DETAILS): Record<string, unknown> {
  if (param === undefined) return current;
  const out: Record<string, unknown> = { ...current };
  for (const key of ['email', 'name', 'phone', 'tax_id'] as const) if (param[key] !== undefined) out[key] = param[key] === '' ? null : param[key];
  if (param.address !== undefined) {
    if (param.address === '') out.address = null;
    else {
      const before = (current.address as Record<string, string | null> | null) ?? Object.fromEntries(ADDRESS_KEYS.map((k) => [k, null]));
      out.address = { ...before, ...Object.fromEntries(Object.entries(param.address).map(([k, v]) => [k, v === '' ? null : v])) };
    }
  }
  return out;
}

/** Writes a new card payment method; the number and the CVC are sealed before they reach the database. */
async function insertCard(
  db: Db,
  ctx: RequestContext,
  checked: CheckedCard,
  extra: { billingDetails?: Record<string, unknown>; metadata?: Metadata; allowRedisplay?: string } = {},
): Promise<StoredPaymentMethod> {
  const { deps, caller } = ctx;
  const now = unixSeconds(deps.clock);
  const number = await deps.encryption.seal(checked.card.number);
  // A public test card given without one (pm_card_visa, tok_visa, a number alone) still has a
  // CVC for its first forward, as the public API's test cards do; only one sent is checked.
  const cvc = await deps.encryption.seal(checked.cvc ?? TEST_CVC.slice(0, cvcLength(checked.card.brand)));
  const row: StoredPaymentMethod = {
    id: newId('pm'),
    created: now,
    customerId: null,
    billingDetails: (extra.billingDetails ?? EMPTY_BILLING_DETAILS) as Prisma.JsonValue,
    metadata: extra.metadata ?? {},
    brand: checked.card.brand,
    funding: checked.card.funding,
    country: checked.card.country,
    last4: checked.card.number.slice(-4),
    expMonth: checked.expMonth,
    expYear: checked.expYear,
    fingerprint: fingerprintOf(caller.platformAccountId, checked.card.number),
    cvcCheck: checked.cvc === undefined ? null : 'unchecked',
    outcome: checked.card.outcome,
    offSessionReady: false,
    allowRedisplay: extra.allowRedisplay ?? 'unspecified',
  };
  await db.write(
    insertCardRow(row, {
      accountId: caller.accountId,
      number,
      cvc,
      cvcExpiresAt: now + deps.config.cardCvcTtlSeconds,
      keyId: Encryption.keyIdOf(number),
    }),
  );
  return row;
}

const clock = (ctx: RequestContext): Date => new Date(ctx.deps.clock.nowMs());

/** The CVC a public test card carries when none was sent (its first digits, by the brand's length). */
const TEST_CVC = '1234';

/** `payment_method_data` of a PaymentIntent or SetupIntent: a card, as POST /v1/payment_methods takes it. */
export interface PaymentMethodDataParam {
  type: string;
  card?: CardParam;
  billing_details?: BillingDetailsParam;
  metadata?: MetadataParam;
  allow_redisplay?: string;
}

/**
 * Makes the card a PaymentIntent's or SetupIntent's `payment_method_data` describes, with `db`'s
 * writes (held on the one-statement path, as a `pm_card_…` id's card is): checked as POST
 * /v1/payment_methods checks it, its errors naming `payment_method_data[…]`. A type other than a
 * card is the public 400 for a type that isn't available (`code`: the intent's own).
 */
export async function createPaymentMethodFromData(db: Db, ctx: RequestContext, data: PaymentMethodDataParam, code: string): Promise<StoredPaymentMethod> {
  if (data.type !== 'card') throw unavailableTypeError(data.type, code, 'payment_method_data[type]');
  const checked = checkedCardOf(data.card, clock(ctx), (name) => name.replace(/^(\w+)/, 'payment_method_data[$1]'));
  return insertCard(db, ctx, checked, {
    billingDetails: billingDetailsOf(data.billing_details),
    metadata: applyMetadata({}, data.metadata),
    allowRedisplay: data.allow_redisplay,
  });
}

/**
 * The payment method an API parameter names: one of the caller's own, or a fresh one made from a
 * public test PaymentMethod id (`pm_card_visa`), as the public API makes one per use. Not found is
 * `resource_missing`: 404 on the path's id, or 400 on `param`.
 */
export async function resolvePaymentMethod(db: Db, ctx: RequestContext, id: string, param?: string): Promise<StoredPaymentMethod> {
  const testNumber = numberOfTestPaymentMethod(id);
  if (testNumber !== undefined) return insertCard(db, ctx, testCardExpiry(testNumber, clock(ctx)));
  const missing = () => (param === undefined ? resourceMissing(NAME, id) : resourceMissing(NAME, id, param, 400));
  if (!hasIdShape('pm', id)) throw missing();
  const [row] = await db.sql.query<StoredPaymentMethod>(selectOwnedForUpdate(id, ctx.caller.accountId));
  if (!row) throw missing();
  return row;
}

/** A payment method an object of its account names (an intent's). */
export async function loadPaymentMethod(sql: SqlClient, id: string): Promise<StoredPaymentMethod> {
  const [row] = await sql.query<StoredPaymentMethod>(selectById(id));
  if (!row) throw new Error(`payment method ${id} is gone`);
  return row;
}

/** Saves a card to a customer, or readies it for off-session payments (`offSessionReady`), with `db`'s writes. */
export async function savePaymentMethodSetup(db: Db, pm: StoredPaymentMethod, customerId: string | null, offSessionReady: boolean): Promise<void> {
  await db.write(attachTo(pm.id, customerId, offSessionReady));
}

/** The public object of one of the caller's payment methods (for expansion), or null when it is gone. */
export async function retrievePaymentMethodObject(ctx: RequestContext, id: string) {
  const row = await ctx.deps.prisma.paymentMethod.findUnique({ where: { id, accountId: ctx.caller.accountId }, select: ROW });
  return row ? serializePaymentMethod(row) : null;
}

const emitOptions = (ctx: RequestContext, previous?: Record<string, unknown>) => ({
  accountId: ctx.caller.accountId,
  apiVersion: ctx.caller.defaultApiVersion,
  created: unixSeconds(ctx.deps.clock),
  cause: causeOf(ctx),
  previousAttributes: previous,
});

const emitPaymentMethod = (tx: Tx, ctx: RequestContext, type: EventType, row: PaymentMethodRow, previous?: Record<string, unknown>) =>
  emit(tx, type, serializePaymentMethod(row), emitOptions(ctx, previous));

/**
 * Attaches a payment method to one of the caller's customers (already locked by the caller):
 * the card is checked with its issuer first, so most declining test cards fail here already.
 * Attaching it again to its own customer changes nothing; another customer's is refused.
 */
export async function attachPaymentMethod(
  tx: Tx,
  ctx: RequestContext,
  pm: StoredPaymentMethod,
  customerId: string,
): Promise<{ row: StoredPaymentMethod; eventIds: string[] }> {
  if (pm.customerId === customerId) return { row: pm, eventIds: [] };
  if (pm.customerId !== null) {
    throw invalidRequest('The payment method you provided has already been attached to a customer.', undefined);
  }
  const declined = attachError(pm.outcome as CardOutcome);
  if (declined) throw declined;
  await tx.paymentMethod.update({ where: { id: pm.id }, data: { customerId }, select: { id: true } });
  const row = { ...pm, customerId };
  return { row, eventIds: [await emitPaymentMethod(tx, ctx, 'payment_method.attached', row)] };
}

/** Locks one of the account's live customers; false when it has none of that id. */
export async function lockLiveCustomer(sql: SqlClient, accountId: string, id: string): Promise<boolean> {
  if (!hasIdShape('cus', id)) return false;
  return (await sql.query(lockLiveCustomerRow(id, accountId))).length > 0;
}

/** Locks one of the account's live customers named by `param`; `resource_missing` on it otherwise. */
export async function lockCustomer(sql: SqlClient, accountId: string, id: string, param: string): Promise<string> {
  if (!(await lockLiveCustomer(sql, accountId, id))) throw resourceMissing('customer', id, param, 400);
  return id;
}

export async function createPaymentMethod(ctx: RequestContext) {
  const { params, deps } = ctx;
  const checked = checkedCardOf(params.card, clock(ctx));
  const row = await deps.prisma.$transaction((tx) =>
    insertCard(prismaDb(tx), ctx, checked, {
      billingDetails: billingDetailsOf(params.billing_details),
      metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      allowRedisplay: params.allow_redisplay,
    }),
  );
  return serializePaymentMethod(row);
}

/** A card of the caller's account from a public test card's number, checked as `card[…]` of POST /v1/payment_methods is (the hosted invoice page's form). */
export async function createCardPaymentMethod(ctx: RequestContext, card: Pick<CardParam, 'number' | 'exp_month' | 'exp_year' | 'cvc'>): Promise<StoredPaymentMethod> {
  const checked = checkCard(card, clock(ctx));
  return ctx.deps.prisma.$transaction((tx) => insertCard(prismaDb(tx), ctx, checked));
}

export async function retrievePaymentMethod(ctx: RequestContext) {
  const id = ctx.pathParams.payment_method;
  // A public test id makes a fresh payment method, so the read runs in a transaction too.
  return serializePaymentMethod(await ctx.deps.prisma.$transaction((tx) => resolvePaymentMethod(prismaDb(tx), ctx, id)));
}

/** One commit in 4 round trips (the route is sqlOnly + oneStatement): the locked read, then the change and its event as held writes. */
export async function updatePaymentMethod(ctx: RequestContext) {
  const { params, deps } = ctx;
  const before = await resolvePaymentMethod(deps, ctx, ctx.pathParams.payment_method);
  // The public API updates only saved cards.
  if (before.customerId === null) throw invalidRequest('You must save this PaymentMethod to a customer before you can update it.', undefined);
  let { expMonth, expYear } = before;
  if (params.card?.exp_month !== undefined || params.card?.exp_year !== undefined) {
    ({ expMonth, expYear } = checkExpiry(params.card?.exp_month ?? before.expMonth, params.card?.exp_year ?? before.expYear, clock(ctx)));
  }
  const row: StoredPaymentMethod = {
    ...before,
    expMonth,
    expYear,
    billingDetails: billingDetailsOf(params.billing_details, before.billingDetails as Record<string, unknown>) as Prisma.JsonValue,
    metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
    allowRedisplay: params.allow_redisplay ?? before.allowRedisplay,
  };
  await deps.write(updateCard(row));
  const object = serializePaymentMethod(row);
  const changed = previousAttributes(serializePaymentMethod(before), object);
  if (Object.keys(changed).length > 0) await handOffEvents(deps.queues, [await emitIn(deps, 'payment_method.updated', object, emitOptions(ctx, changed))]);
  return object;
}

export async function listPaymentMethods(ctx: RequestContext) {
  const { params, caller } = ctx;
  if (params.customer !== undefined && !hasIdShape('cus', params.customer)) throw resourceMissing('customer', params.customer, 'customer', 400);
  if (params.customer !== undefined) {
    const owned = await ctx.deps.prisma.customer.findUnique({ where: { id: params.customer, accountId: caller.accountId }, select: { id: true } });
    if (!owned) throw resourceMissing('customer', params.customer, 'customer', 400);
  }
  return paginate<PaymentMethodRow & { seq: bigint }>({
    params,
    url: '/v1/payment_methods',
    // `type` is card or absent: cards are the only payment methods here.
    where: { accountId: caller.accountId, ...(params.customer !== undefined ? { customerId: params.customer } : {}) },
    model: ctx.deps.prisma.paymentMethod as any,
    objectName: NAME,
    serialize: (row: PaymentMethodRow) => serializePaymentMethod(row),
  });
}

/** The path's customer: one of the caller's live customers, or 404 as the public API answers. */
async function pathCustomer(ctx: RequestContext): Promise<string> {
  const id = ctx.pathParams.customer;
  const owned = hasIdShape('cus', id) && (await ctx.deps.prisma.customer.findFirst({ where: { id, accountId: ctx.caller.accountId, deleted: false }, select: { id: true } }));
  if (!owned) throw resourceMissing('customer', id);
  return id;
}

/** `GET /v1/customers/{customer}/payment_methods`: the customer's saved cards, newest first (`type`, `allow_redisplay`). */
export async function listCustomerPaymentMethods(ctx: RequestContext) {
  const { params, caller } = ctx;
  const customerId = await pathCustomer(ctx);
  return paginate<PaymentMethodRow & { seq: bigint }>({
    params,
    url: `/v1/customers/${customerId}/payment_methods`,
    // `type` is card or absent: cards are the only payment methods here.
    where: { accountId: caller.accountId, customerId, ...(params.allow_redisplay !== undefined ? { allowRedisplay: params.allow_redisplay } : {}) },
    model: ctx.deps.prisma.paymentMethod as any,
    objectName: NAME,
    serialize: (row: PaymentMethodRow) => serializePaymentMethod(row),
  });
}

/** `GET /v1/customers/{customer}/payment_methods/{payment_method}`: one of its saved cards; another's (or none) is 404. */
export async function retrieveCustomerPaymentMethod(ctx: RequestContext) {
  const customerId = await pathCustomer(ctx);
  const id = ctx.pathParams.payment_method;
  const row = hasIdShape('pm', id) ? await ctx.deps.prisma.paymentMethod.findFirst({ where: { id, accountId: ctx.caller.accountId, customerId }, select: ROW }) : null;
  if (!row) throw resourceMissing(NAME, id);
  return serializePaymentMethod(row);
}

export async function attachPaymentMethodToCustomer(ctx: RequestContext) {
  const { params, deps } = ctx;
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const db = prismaDb(tx);
    await lockCustomer(db.sql, ctx.caller.accountId, params.customer, 'customer');
    const pm = await resolvePaymentMethod(db, ctx, ctx.pathParams.payment_method);
    return attachPaymentMethod(tx, ctx, pm, params.customer);
  });
  if (eventIds.length > 0) await handOffEvents(deps.queues, eventIds);
  return serializePaymentMethod(row);
}

/**
 * What a card's detach does to the customer it leaves, in the same transaction; answers the id of
 * the event it wrote, if any. Customers implement it (a default that was this card is cleared),
 * and the route passes it in: customers call payment methods, never the other way.
 */
export type DetachedFromCustomer = (tx: Tx, ctx: RequestContext, customerId: string, paymentMethodId: string) => Promise<string | undefined>;

export async function detachPaymentMethod(ctx: RequestContext, detached: DetachedFromCustomer) {
  const { deps } = ctx;
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const before = await resolvePaymentMethod(prismaDb(tx), ctx, ctx.pathParams.payment_method);
    if (before.customerId === null) {
      throw invalidRequest('The payment method you provided is not attached to a customer so detachment is impossible.', undefined);
    }
    await tx.paymentMethod.update({ where: { id: before.id }, data: { customerId: null }, select: { id: true } });
    const row = { ...before, customerId: null };
    const eventIds = [await emitPaymentMethod(tx, ctx, 'payment_method.detached', row, { customer: before.customerId })];
    // A detached card can't stay its customer's default.
    const customerEvent = await detached(tx, ctx, before.customerId, before.id);
    if (customerEvent) eventIds.push(customerEvent);
    return { row, eventIds };
  });
  await handOffEvents(deps.queues, eventIds);
  return serializePaymentMethod(row);
}

/**
 * Opens a payment method's CVC and clears it: a CVC serves one forward. Undefined when it was
 * never given, already used, or past CARD_CVC_TTL_SECONDS.
 */
export async function takeCvc(tx: Tx, ctx: RequestContext, id: string): Promise<string | undefined> {
  const now = unixSeconds(ctx.deps.clock);
  const rows = await tx.$queryRaw<{ cvc: string | null }[]>`
    UPDATE payment_methods p SET cvc = NULL, cvc_expires_at = NULL
    FROM (SELECT id, cvc, cvc_expires_at FROM payment_methods WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE) old
    WHERE p.id = old.id
    RETURNING CASE WHEN old.cvc_expires_at > ${now} THEN old.cvc END AS cvc`;
  const sealed = rows[0]?.cvc;
  return sealed ? ctx.deps.encryption.open(sealed) : undefined;
}

/**
 * Deletes the CVCs past their CARD_CVC_TTL_SECONDS, `batchSize` rows per statement; returns how
 * many. Concurrent purges skip each other's rows.
 */
export async function purgeExpiredCvcs(prisma: PrismaClient, now: number, batchSize = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const purged = await prisma.$executeRaw`
      UPDATE payment_methods SET cvc = NULL, cvc_expires_at = NULL WHERE id IN (
        SELECT id FROM payment_methods WHERE cvc_expires_at <= ${now} ORDER BY cvc_expires_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      )`;
    total += purged;
    if (purged < batchSize) return total;
  }
}
