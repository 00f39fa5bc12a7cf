import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { ApiError, invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import { searchRequest } from '../../../kernel/search';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { causeOf, emit, emitIn, eventInsert, previousAttributes, type EmitOptions, type Tx } from '../../../events/emit';
import type { EventType } from '../../../events/types';
import { handOffEvents } from '../../../events/jobs';
import { attachPaymentMethod, resolvePaymentMethod } from '../payment_methods/service';
import { addTaxIds } from '../tax_ids/service';
import { SEARCH, insertCustomer, listedRows, searchedRows, selectOwned, selectOwnedForUpdate, updateCustomerRow } from './queries';
import { embed, type Embedded } from '../../../kernel/versions';
import { serializeCustomer, serializeDeletedCustomer, serializeDeletedDiscount, type CustomerDiscount, type CustomerRow } from './serializer';
import { prismaDb, type Db } from '../../../kernel/writes';
import { prismaOf } from '../../../kernel/transaction';

const NAME = 'customer';
const ROW = {
  id: true,
  created: true,
  email: true,
  name: true,
  phone: true,
  description: true,
  address: true,
  shipping: true,
  metadata: true,
  preferredLocales: true,
  taxExempt: true,
  defaultPaymentMethod: true,
  testClockId: true,
  balance: true,
  currency: true,
} as const;

/**
 * What a customer's discount needs from billing, where coupons live (payments imports no other
 * area): the registry fills it in with billing's (`useCustomerDiscounts`). Until then customers
 * have no discount to show, and a `coupon` sent is refused.
 */
export interface CustomerDiscounts {
  /** The discount `coupon` or `promotion_code` (one of them) redeems for the customer, at its billing time (its test clock's). */
  redeem(tx: Tx, ctx: RequestContext, customer: { id: string; testClockId: string | null }, sent: { coupon?: string; promotion_code?: string }): Promise<CustomerDiscount>;
  /** The `discount` objects of customers' discounts, with their coupons, by id. */
  objects(tx: Tx, owned: readonly { customer: string; discount: CustomerDiscount }[], now: number): Promise<Embedded>;
}

let discounts: CustomerDiscounts | undefined;

/** Billing's customer discounts, for every customer served from now on (the registry calls it once). */
export function useCustomerDiscounts(given: CustomerDiscounts): void {
  discounts = given;
}

/** The `discount` objects of `rows`' discounts, by id (none without billing or a discount). */
async function discountObjects(tx: Tx, rows: readonly Pick<CustomerRow, 'id' | 'discounts'>[], now: number): Promise<Embedded> {
  const owned = rows.flatMap((r) => r.discounts.slice(0, 1).map((discount) => ({ customer: r.id, discount })));
  return owned.length === 0 || !discounts ? {} : discounts.objects(tx, owned, now);
}

/** Customers as the public objects, their discounts whole. */
async function serializeAll(tx: Tx, rows: readonly CustomerRow[], now: number) {
  const embedded = await discountObjects(tx, rows, now);
  return rows.map((row) => serializeCustomer(row, embedded));
}

/** One customer; without a discount there is nothing to read, so no promise to wait for. */
const serializeOne = (tx: Tx, row: CustomerRow, now: number) =>
  row.discounts.length === 0 ? serializeCustomer(row) : serializeAll(tx, [row], now).then((all) => all[0]);

/**
 * The discount a request at a version before 2025-03-31.basil sent (`coupon` or `promotion_code`,
 * kept as sent: see ../requestVersions.ts): a new one replaces the customer's, `''` removes it;
 * undefined when it sent neither.
 */
async function discountsSent(tx: Tx, ctx: RequestContext, customer: { id: string; testClockId: string | null }): Promise<CustomerDiscount[] | undefined> {
  const name = (['coupon', 'promotion_code'] as const).find((n) => ctx.params[n] !== undefined);
  if (name === undefined) return undefined;
  const value: string = ctx.params[name];
  if (value === '') return [];
  if (!discounts) throw invalidRequest(`Received unknown parameter: ${name}`, 'parameter_unknown', name);
  return [await discounts.redeem(tx, ctx, customer, { [name]: value })];
}

const ADDRESS_KEYS = ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const;

type AddressParam = Partial<Record<(typeof ADDRESS_KEYS)[number], string>>;

/** An address as the public object shows it: every member, null when not given. */
const addressOf = (param: AddressParam): Record<string, string | null> =>
  Object.fromEntries(ADDRESS_KEYS.map((k) => [k, param[k] === undefined || param[k] === '' ? null : param[k]!]));

/** `''` clears a field (null); undefined leaves it. */
const emptyToNull = (value: string | undefined): string | null | undefined => (value === '' ? null : value);

function shippingOf(param: { address: AddressParam; name: string; phone?: string } | '' | undefined) {
  if (param === undefined) return undefined;
  if (param === '') return null;
  return { address: addressOf(param.address), name: param.name, phone: param.phone ?? null };
}

/** The columns a create or update parameter set writes (undefined: unchanged). */
function fieldsOf(params: Record<string, any>) {
  return {
    email: emptyToNull(params.email),
    name: emptyToNull(params.name),
    phone: emptyToNull(params.phone),
    description: emptyToNull(params.description),
    address: params.address === undefined ? undefined : params.address === '' ? null : addressOf(params.address),
    shipping: shippingOf(params.shipping),
    preferredLocales: params.preferred_locales === undefined ? undefined : params.preferred_locales === '' ? [] : (params.preferred_locales as string[]),
    taxExempt: emptyToNull(params.tax_exempt) === null ? 'none' : params.tax_exempt,
  };
}

const json = (value: unknown) => (value === null ? (null as unknown as Prisma.InputJsonValue) : (value as Prisma.InputJsonValue));

const customerEventOptions = (ctx: RequestContext, previous?: Record<string, unknown>): EmitOptions => ({
  accountId: ctx.caller.accountId,
  apiVersion: ctx.caller.defaultApiVersion,
  created: unixSeconds(ctx.deps.clock),
  cause: causeOf(ctx),
  previousAttributes: previous,
});

const emitCustomer = async (tx: Tx, ctx: RequestContext, type: EventType, row: CustomerRow, previous?: Record<string, unknown>) =>
  emit(tx, type, await serializeOne(tx, row, unixSeconds(ctx.deps.clock)), customerEventOptions(ctx, previous));

/** A `customer.discount.*` event of the discount `embedded` shows whole (its coupon beside it, for older versions). */
const emitDiscount = (tx: Tx, ctx: RequestContext, type: EventType, id: string, embedded: Embedded) =>
  emit(tx, type, embed({ ...(embedded[id] as Record<string, unknown>) }, embedded), customerEventOptions(ctx));

/**
 * The `customer.discount.*` events of a change of discount (created, deleted, or updated when one
 * replaced another), with the objects of both sides.
 */
async function emitDiscountChange(tx: Tx, ctx: RequestContext, before: CustomerRow, after: CustomerRow, embedded: Embedded): Promise<string[]> {
  const [was] = before.discounts;
  const [now] = after.discounts;
  if (was?.id === now?.id) return [];
  if (now === undefined) return [await emitDiscount(tx, ctx, 'customer.discount.deleted', was.id, embedded)];
  return [await emitDiscount(tx, ctx, was === undefined ? 'customer.discount.created' : 'customer.discount.updated', now.id, embedded)];
}

/** One of the caller's customers, locked, deleted ones included; `resource_missing` otherwise. */
async function lockOwned(tx: Tx, ctx: RequestContext, id: string): Promise<CustomerRow & { deleted: boolean }> {
  if (!hasIdShape('cus', id)) throw resourceMissing(NAME, id);
  // `discounts` by SQL: the column is newer than some generated clients.
  const rows = await tx.$queryRaw<{ id: string; discounts: CustomerDiscount[] }[]>`SELECT id, discounts FROM customers WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE`;
  if (rows.length === 0) throw resourceMissing(NAME, id);
  return { ...(await tx.customer.findUniqueOrThrow({ where: { id }, select: { ...ROW, deleted: true } })), discounts: rows[0].discounts };
}

const DEFAULT_PM_PARAM = 'invoice_settings[default_payment_method]';

/** A default payment method must be one attached to this customer. */
async function checkDefaultPaymentMethod(db: Db, ctx: RequestContext, customerId: string, id: string): Promise<string> {
  const pm = await resolvePaymentMethod(db, ctx, id, DEFAULT_PM_PARAM);
  if (pm.customerId !== customerId) {
    throw new ApiError({
      status: 400,
      code: 'resource_missing',
      param: DEFAULT_PM_PARAM,
      message: `The customer does not have a payment method with the ID ${id}. The payment method must be attached to the customer.`,
    });
  }
  return pm.id;
}

/** A test clock of the caller's that a new customer lives on (`test_clock`), or null. */
async function testClockOf(tx: Tx, ctx: RequestContext, id: string | undefined): Promise<string | null> {
  if (id === undefined) return null;
  const clock = hasIdShape('clock', id) ? await tx.testClock.findFirst({ where: { id, accountId: ctx.caller.accountId, deleted: false }, select: { id: true } }) : null;
  if (!clock) throw resourceMissing('test clock', id, 'test_clock', 400);
  return clock.id;
}

/** An update that sends no discount: billing's (Prisma) isn't needed unless the customer has one. */
export const updatesAlone = (params: Record<string, any>): boolean => params.coupon === undefined && params.promotion_code === undefined;

/** A create with nothing to read or lock first: the route sends it as one statement. */
export const createsAlone = (params: Record<string, any>): boolean =>
  params.coupon === undefined &&
  params.promotion_code === undefined &&
  params.payment_method === undefined && params.test_clock === undefined && params.invoice_settings?.default_payment_method === undefined &&
  params.tax_id_data === undefined;

export async function createCustomer(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const fields = fieldsOf(params);
  // In the operation's transaction (the ordinary path, as every create that isn't `createsAlone` takes).
  const tx: Tx = deps.prisma;
  const id = newId('cus', 14);
  const testClockId = await testClockOf(tx, ctx, params.test_clock);
  let row: CustomerRow = {
    id,
    created: unixSeconds(deps.clock),
    email: fields.email ?? null,
    name: fields.name ?? null,
    phone: fields.phone ?? null,
    description: fields.description ?? null,
    address: fields.address ?? null,
    shipping: fields.shipping ?? null,
    metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
    preferredLocales: fields.preferredLocales ?? [],
    taxExempt: fields.taxExempt ?? 'none',
    defaultPaymentMethod: null,
    testClockId,
    discounts: (await discountsSent(tx, ctx, { id, testClockId })) ?? [],
    balance: 0n,
    currency: null,
  };
  await deps.write(insertCustomer(row, caller.accountId));
  const attachedEvents: string[] = [];
  let attached: string | undefined;
  if (params.payment_method !== undefined) {
    const pm = await resolvePaymentMethod(prismaDb(tx), ctx, params.payment_method, 'payment_method');
    const result = await attachPaymentMethod(tx, ctx, pm, row.id);
    attached = pm.id;
    attachedEvents.push(...result.eventIds);
  }
  const defaultId: string | undefined = params.invoice_settings?.default_payment_method;
  if (defaultId !== undefined && defaultId !== '') {
    // Naming the payment method just attached (a test id makes a new one per use) means that one.
    const id = defaultId === params.payment_method && attached ? attached : await checkDefaultPaymentMethod(prismaDb(tx), ctx, row.id, defaultId);
    row = { ...row, defaultPaymentMethod: id };
    await tx.customer.update({ where: { id: row.id }, data: { defaultPaymentMethod: id }, select: { id: true } });
  }
  const embedded = await discountObjects(tx, [row], row.created);
  // customer.created comes first, as the public API sends it.
  const created = eventInsert('customer.created', serializeCustomer(row, embedded), customerEventOptions(ctx));
  await deps.write(created.write);
  const discountEvents = row.discounts.length > 0 ? [await emitDiscount(tx, ctx, 'customer.discount.created', row.discounts[0].id, embedded)] : [];
  // Its tax ids after it (`customer.tax_id.created` each), as the public API sends them.
  const taxIds = params.tax_id_data === undefined ? [] : (await addTaxIds(tx, ctx, row.id, params.tax_id_data, (i) => `tax_id_data[${i}][value]`)).eventIds;
  await handOffEvents(deps.queues, [created.id, ...discountEvents, ...attachedEvents, ...taxIds]);
  return serializeCustomer(row, embedded);
}

export async function retrieveCustomer(ctx: RequestContext) {
  const id = ctx.pathParams.customer;
  if (!hasIdShape('cus', id)) throw resourceMissing(NAME, id);
  const customer = await retrieveCustomerObject(ctx, id);
  if (!customer) throw resourceMissing(NAME, id);
  return customer;
}

/** The public object of one of the caller's customers (for expansion), or null when it is gone. */
export async function retrieveCustomerObject(ctx: RequestContext, id: string) {
  const [row] = await ctx.deps.sql.query<CustomerRow & { deleted: boolean }>(selectOwned(id, ctx.caller.accountId));
  if (!row) return null;
  return row.deleted ? serializeDeletedCustomer(id) : serializeOne(ctx.deps.prisma, row, unixSeconds(ctx.deps.clock));
}

/**
 * `POST /v1/customers/{customer}`: on the route's one-statement path (sqlOnly) BEGIN, the locked
 * read, the update with its event and the idempotent result as one statement, COMMIT. A discount
 * (billing's, through Prisma) sends it the ordinary way (prismaOf).
 */
export async function updateCustomer(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.customer;
  if (!hasIdShape('cus', id)) throw resourceMissing(NAME, id);
  const fields = fieldsOf(params);
  const [before] = await deps.sql.query<CustomerRow & { deleted: boolean }>(selectOwnedForUpdate(id, ctx.caller.accountId));
  if (!before || before.deleted) throw resourceMissing(NAME, id);
  const defaultParam: string | undefined = params.invoice_settings?.default_payment_method;
  const defaultPaymentMethod =
    defaultParam === undefined ? before.defaultPaymentMethod : defaultParam === '' ? null : await checkDefaultPaymentMethod(deps, ctx, id, defaultParam);
  const sent = params.coupon !== undefined || params.promotion_code !== undefined;
  const row: CustomerRow = {
    id,
    created: before.created,
    email: fields.email === undefined ? before.email : fields.email,
    name: fields.name === undefined ? before.name : fields.name,
    phone: fields.phone === undefined ? before.phone : fields.phone,
    description: fields.description === undefined ? before.description : fields.description,
    address: fields.address === undefined ? before.address : fields.address,
    shipping: fields.shipping === undefined ? before.shipping : fields.shipping,
    metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
    preferredLocales: fields.preferredLocales ?? before.preferredLocales,
    taxExempt: fields.taxExempt ?? before.taxExempt,
    defaultPaymentMethod,
    testClockId: before.testClockId,
    discounts: (sent ? await discountsSent(prismaOf(deps), ctx, before) : undefined) ?? before.discounts,
    balance: before.balance,
    currency: before.currency,
  };
  await deps.write(updateCustomerRow(row));
  const discounted = before.discounts.length > 0 || row.discounts.length > 0;
  // Only a discount needs billing's objects (and Prisma) to be shown.
  const embedded = discounted ? await discountObjects(prismaOf(deps), [before, row], unixSeconds(deps.clock)) : {};
  const changed = previousAttributes(serializeCustomer(before, embedded), serializeCustomer(row, embedded));
  const eventIds = Object.keys(changed).length > 0 ? [await emitIn(deps, 'customer.updated', serializeCustomer(row, embedded), customerEventOptions(ctx, changed))] : [];
  if (discounted) eventIds.push(...(await emitDiscountChange(prismaOf(deps), ctx, before, row, embedded)));
  if (eventIds.length > 0) await handOffEvents(deps.queues, eventIds);
  return serializeCustomer(row, embedded);
}

/** Deleting the discount of a customer or subscription that has none (the public API's wording as remembered: no reference found). */
export const noActiveDiscount = (kind: 'customer' | 'subscription', id: string): ApiError =>
  new ApiError({ status: 404, code: 'resource_missing', message: `No active discount for ${kind}: ${id}` });

/**
 * `DELETE /v1/customers/{customer}/discount`: the customer's discount ends now (its subscriptions
 * without one of their own stop billing it); answers it deleted, with `customer.discount.deleted`.
 */
export async function deleteCustomerDiscount(ctx: RequestContext) {
  const { deps } = ctx;
  const id = ctx.pathParams.customer;
  const { deleted, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const before = await lockOwned(tx, ctx, id);
    if (before.deleted) throw resourceMissing(NAME, id);
    const [was] = before.discounts;
    if (was === undefined) throw noActiveDiscount('customer', id);
    await tx.$executeRaw`UPDATE customers SET discounts = '[]'::jsonb WHERE id = ${id}`;
    const embedded = await discountObjects(tx, [before], unixSeconds(deps.clock));
    const eventIds = await emitDiscountChange(tx, ctx, before, { ...before, discounts: [] }, embedded);
    return { deleted: serializeDeletedDiscount(embedded[was.id] as Record<string, unknown>, embedded), eventIds };
  });
  await handOffEvents(deps.queues, eventIds);
  return deleted;
}

export async function deleteCustomer(ctx: RequestContext) {
  const { deps } = ctx;
  const id = ctx.pathParams.customer;
  const eventId = await deps.prisma.$transaction(async (tx) => {
    const row = await lockOwned(tx, ctx, id);
    if (row.deleted) throw resourceMissing(NAME, id);
    await tx.customer.update({ where: { id }, data: { deleted: true, defaultPaymentMethod: null }, select: { id: true } });
    // A deleted customer's cards can't be used any more.
    await tx.paymentMethod.updateMany({ where: { customerId: id }, data: { customerId: null } });
    return emitCustomer(tx, ctx, 'customer.deleted', row);
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeDeletedCustomer(id);
}

export async function listCustomers(ctx: RequestContext) {
  const { params, caller } = ctx;
  const page = await paginateSql<CustomerRow & { seq: bigint }>({
    params,
    url: '/v1/customers',
    rows: listedRows(caller.accountId, { email: params.email, testClock: params.test_clock, created: rangeConditions('created', params.created) }),
    db: ctx.deps.sql,
    objectName: NAME,
    serialize: (row: CustomerRow) => row,
  });
  return { ...page, data: await serializeAll(ctx.deps.prisma, page.data as CustomerRow[], unixSeconds(ctx.deps.clock)) };
}

export async function searchCustomers(ctx: RequestContext) {
  const { caller, deps } = ctx;
  const result = await searchRequest<CustomerRow & { seq: bigint }>(ctx, SEARCH, searchedRows(caller.accountId), (row: CustomerRow) => row);
  return { ...result, data: await serializeAll(deps.prisma, result.data as CustomerRow[], unixSeconds(deps.clock)) };
}

/**
 * Clears a customer's default payment method when it is `paymentMethodId` (just detached);
 * returns the `customer.updated` event's id, if it changed.
 */
export async function clearDefaultPaymentMethod(tx: Tx, ctx: RequestContext, customerId: string, paymentMethodId: string): Promise<string | undefined> {
  const found = await tx.customer.findUnique({ where: { id: customerId }, select: ROW });
  if (!found || found.defaultPaymentMethod !== paymentMethodId) return undefined;
  const [{ discounts: stored }] = await tx.$queryRaw<{ discounts: CustomerDiscount[] }[]>`SELECT discounts FROM customers WHERE id = ${customerId}`;
  const before: CustomerRow = { ...found, discounts: stored };
  const row = { ...before, defaultPaymentMethod: null };
  await tx.customer.update({ where: { id: customerId }, data: { defaultPaymentMethod: null }, select: { id: true } });
  const embedded = await discountObjects(tx, [before], unixSeconds(ctx.deps.clock));
  return emitCustomer(tx, ctx, 'customer.updated', row, previousAttributes(serializeCustomer(before, embedded), serializeCustomer(row, embedded)));
}

/**
 * Moves customer `customerId`'s balance by `amount` (negative: more credit) in `currency`, which
 * becomes its balance's currency, and emits `customer.updated` through `db` (with the balance
 * and currency it had). The caller holds the customer's lock. Answers the balance before and after.
 */
export async function moveCustomerBalance(tx: Tx, db: Pick<Db, 'write'>, customerId: string, amount: bigint, currency: string, options: EmitOptions): Promise<{ before: bigint; after: bigint; eventId: string }> {
  const found = await tx.customer.findUniqueOrThrow({ where: { id: customerId }, select: ROW });
  const [{ discounts: stored }] = await tx.$queryRaw<{ discounts: CustomerDiscount[] }[]>`SELECT discounts FROM customers WHERE id = ${customerId}`;
  const before: CustomerRow = { ...found, discounts: stored };
  const row: CustomerRow = { ...before, balance: before.balance + amount, currency };
  await tx.customer.update({ where: { id: customerId }, data: { balance: row.balance, currency }, select: { id: true } });
  const embedded = await discountObjects(tx, [before], options.created);
  const changed = previousAttributes(serializeCustomer(before, embedded), serializeCustomer(row, embedded));
  const eventId = await emitIn(db, 'customer.updated', serializeCustomer(row, embedded), { ...options, previousAttributes: changed });
  return { before: before.balance, after: row.balance, eventId };
}
