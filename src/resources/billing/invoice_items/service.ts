import { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { currencyOf } from '../../../lib/currencies';
import { hasIdShape, newId } from '../../../lib/ids';
import { invalidRequest, parameterMissing, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginateRows, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { previousAttributes, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import type { PriceRow } from '../prices/serializer';
import { priceAmount } from '../invoices/amounts';
import { discountParams, emitIn, lockInvoice, pricesById, refreshDraft, requestScope, taxRatesById, type Scope } from '../invoices/billing';
import { customerDiscountRecords, detailsOfInvoice } from '../invoices/queries';
import type { DiscountRecord } from '../coupons/serializer';
import { deletedInvoiceItem, serializeInvoiceItem, type InvoiceItemRow } from './serializer';
import { lockItem } from './queries';
import { lockCustomer } from '../../payments';
import { TxSql } from '../../../lib/sql';
import { isProductId } from '../products/serializer';

// Invoice items: one-off charges (or credits) for a customer, pending until an invoice takes them:
// the customer's next manual invoice (`pending_invoice_items_behavior=include`), a draft named by
// `invoice`, or, with `subscription`, that subscription's next invoice. An item can change or go
// while it is pending or on a draft; a draft's lines and totals follow it.

const NAME = 'invoice item';

const strip = <T extends { seq: bigint; accountId: string }>({ seq: _s, accountId: _a, ...row }: T) => row;

/** The tax rates and prices invoice items name (older versions show the price whole). */
async function itemRefs(tx: Tx, accountId: string, rows: readonly InvoiceItemRow[]) {
  const [rates, prices] = await Promise.all([taxRatesById(tx, accountId, rows.flatMap((r) => r.taxRates)), pricesById(tx, accountId, rows.map((r) => r.priceId))]);
  return { rates, prices };
}

const serializeItemWith =
  ({ rates, prices }: Awaited<ReturnType<typeof itemRefs>>) =>
  (row: InvoiceItemRow) =>
    serializeInvoiceItem(
      row,
      row.taxRates.flatMap((id) => (rates.has(id) ? [rates.get(id)!] : [])),
      prices.get(row.priceId),
    );

const serializeOne = async (tx: Tx, accountId: string, row: InvoiceItemRow) => serializeItemWith(await itemRefs(tx, accountId, [row]))(row);

export async function retrieveInvoiceItem(ctx: RequestContext) {
  const id = ctx.pathParams.invoiceitem;
  const found = hasIdShape('ii', id) ? await ctx.deps.prisma.invoiceItem.findUnique({ where: { id, accountId: ctx.caller.accountId } }) : null;
  if (!found) throw resourceMissing(NAME, id);
  return serializeOne(ctx.deps.prisma, ctx.caller.accountId, strip(found));
}

export async function listInvoiceItems(ctx: RequestContext) {
  const { params, caller, deps } = ctx;
  const where: Prisma.InvoiceItemWhereInput = {
    accountId: caller.accountId,
    customerId: params.customer,
    date: rangeWhere(params.created),
    ...(params.invoice !== undefined ? { invoiceId: params.invoice } : {}),
    ...(params.pending === true ? { invoiceId: null } : params.pending === false ? { invoiceId: { not: null } } : {}),
  };
  return paginateRows<InvoiceItemRow & { seq: bigint; accountId: string }>({
    params,
    url: '/v1/invoiceitems',
    where: where as Record<string, unknown>,
    model: deps.prisma.invoiceItem as any,
    objectName: NAME,
    serializeAll: async (stored) => {
      const rows = stored.map(strip);
      return rows.map(serializeItemWith(await itemRefs(deps.prisma, caller.accountId, rows)));
    },
  });
}

/** A decimal parameter as the public API shows it (no trailing zeros). */
const normalDecimal = (value: string) => (value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value);

/**
 * A one-time price made for one item (`amount`, `unit_amount_decimal` or `price_data`): inactive,
 * so it is offered nowhere else, as the public API's inline prices are. `amount` and
 * `unit_amount_decimal` have no product: one is made for the item, inactive too.
 */
async function inlinePrice(scope: Scope, currency: string, unitAmountDecimal: string, productId: string | null, name: string, taxBehavior: string | undefined): Promise<PriceRow> {
  let product = productId;
  if (product === null) {
    product = newId('prod');
    await scope.tx.product.create({ data: { id: product, accountId: scope.accountId, created: scope.eventTime, updated: scope.eventTime, active: false, name, images: [] }, select: { id: true } });
  }
  const whole = /^-?\d+$/.test(unitAmountDecimal);
  const { seq: _s, accountId: _a, ...row } = await scope.tx.price.create({
    data: {
      id: newId('price'),
      accountId: scope.accountId,
      productId: product,
      created: scope.eventTime,
      active: false,
      type: 'one_time',
      billingScheme: 'per_unit',
      currency,
      unitAmount: whole ? BigInt(unitAmountDecimal) : null,
      unitAmountDecimal,
      taxBehavior: taxBehavior ?? null,
      metadata: {},
    },
  });
  return row as unknown as PriceRow;
}

const ONE_TIME_MESSAGE = 'The price specified is set to `type=recurring` but this field only accepts prices with `type=one_time`.';

/** The active one-time price `id` of the account, as an item names it (`param`); also what an invoice preview's `invoice_items` name. */
export async function oneTimePrice(tx: Tx, accountId: string, id: string, param: string): Promise<PriceRow> {
  const found = hasIdShape('price', id) ? await tx.price.findUnique({ where: { id, accountId } }) : null;
  if (!found) throw resourceMissing('price', id, param, 400);
  if (found.type !== 'one_time') throw invalidRequest(ONE_TIME_MESSAGE, 'parameter_invalid', param);
  if (!found.active) throw invalidRequest(`The price \`${id}\` is not active and can't be used for new invoice items.`, 'parameter_invalid', param);
  return strip(found) as unknown as PriceRow;
}

/**
 * What the item charges for, from its pricing parameters (`pricing[price]` or `price`,
 * `price_data`, `amount`, `unit_amount_decimal`): its price, or undefined when none is given.
 */
async function pricingOf(scope: Scope, params: Record<string, any>, description: string | null): Promise<PriceRow | undefined> {
  if (params.pricing?.price !== undefined && params.price !== undefined) throw parametersExclusive('pricing[price]', 'price');
  const named: string | undefined = params.pricing?.price ?? params.price;
  const namedParam = params.pricing?.price !== undefined ? 'pricing[price]' : 'price';
  const given = [
    [namedParam, named],
    ['price_data', params.price_data],
    ['amount', params.amount],
    ['unit_amount_decimal', params.unit_amount_decimal],
  ].filter(([, v]) => v !== undefined) as [string, unknown][];
  if (given.length > 1) throw parametersExclusive(given[0][0], given[1][0]);
  if (given.length === 0) return undefined;
  if (named !== undefined) return oneTimePrice(scope.tx, scope.accountId, named, namedParam);
  if (params.price_data !== undefined) {
    const data: Record<string, any> = params.price_data;
    if (data.unit_amount !== undefined && data.unit_amount_decimal !== undefined) throw parametersExclusive('price_data[unit_amount]', 'price_data[unit_amount_decimal]');
    if (data.unit_amount === undefined && data.unit_amount_decimal === undefined) throw parameterMissing('price_data[unit_amount]');
    const product = isProductId(data.product) ? await scope.tx.product.findUnique({ where: { id: data.product, accountId: scope.accountId }, select: { id: true } }) : null;
    if (!product) throw resourceMissing('product', data.product, 'price_data[product]', 400);
    const unit = data.unit_amount !== undefined ? String(data.unit_amount) : normalDecimal(data.unit_amount_decimal);
    return inlinePrice(scope, currencyOf(data.currency, 'price_data[currency]'), unit, product.id, '', data.tax_behavior);
  }
  if (params.currency === undefined) throw parameterMissing('currency');
  const unit = params.amount !== undefined ? String(params.amount) : normalDecimal(params.unit_amount_decimal);
  return inlinePrice(scope, currencyOf(params.currency), unit, null, description ?? 'Invoice item', params.tax_behavior);
}

/** Tax rate ids of the caller's account, each checked; `''` clears. */
async function taxRateIds(scope: Scope, ids: string[] | '' | undefined): Promise<string[] | undefined> {
  if (ids === undefined) return undefined;
  if (ids === '') return [];
  const found = await scope.tx.taxRate.findMany({ where: { accountId: scope.accountId, id: { in: ids.filter((id) => hasIdShape('txr', id)) } }, select: { id: true } });
  const known = new Set(found.map((r) => r.id));
  const missing = ids.findIndex((id) => !known.has(id));
  if (missing !== -1) throw resourceMissing('tax rate', ids[missing], `tax_rates[${missing}]`, 400);
  return [...new Set(ids)];
}

function periodOf(param: { start: number; end: number } | undefined, fallback: { start: number; end: number }) {
  if (param === undefined) return fallback;
  if (param.end < param.start) throw invalidRequest('The period end must be at or after the period start.', 'parameter_invalid', 'period[end]');
  return param;
}

/** Billing time for a customer's objects: its test clock's frozen time, else now. */
async function billingNow(tx: Tx, testClockId: string | null, now: number): Promise<number> {
  if (testClockId === null) return now;
  const clock = await tx.testClock.findUnique({ where: { id: testClockId }, select: { frozenTime: true } });
  return clock?.frozenTime ?? now;
}

const notEditable = (item: string, invoice: string, verb: string) =>
  invalidRequest(`The invoice item ${item} is on invoice ${invoice}, which is already finalized; it can't be ${verb}.`, 'invoice_already_finalized', 'id');

/**
 * The draft an item is (or goes) on, locked; only a draft takes changes. `id` is the item's invoice.
 */
async function lockedDraft(scope: Scope, id: string) {
  const made = await lockInvoice(scope.tx, scope.accountId, id);
  if (!made) throw resourceMissing('invoice', id, 'invoice', 400);
  return made;
}

/** Writes an item row (new or changed) with its discounts' records. */
const itemData = (row: InvoiceItemRow, records: readonly DiscountRecord[]) => ({
  ...row,
  discounts: records.map((r) => r.id),
  discountRecords: records as unknown as Prisma.InputJsonValue,
  discountAmounts: row.discountAmounts as Prisma.InputJsonValue,
  metadata: row.metadata as Prisma.InputJsonValue,
});

const recordsOf = (stored: unknown): DiscountRecord[] => (Array.isArray(stored) ? (stored as DiscountRecord[]) : []);

/**
 * An item's `discounts` parameter as its discounts: coupons and promotion codes redeemed, or
 * (`discount`) one already on the item or its ancestors (its customer, subscription or draft
 * invoice) reused; `''` clears; undefined when not sent.
 */
async function itemDiscounts(
  scope: Scope,
  list: Record<string, string>[] | '' | undefined,
  owner: { customerId: string; subscriptionId: string | null; invoiceId: string | null; own: readonly DiscountRecord[] },
): Promise<DiscountRecord[] | undefined> {
  if (list === undefined) return undefined;
  if (list === '') return [];
  const { tx } = scope;
  const [customer, subscription, invoice] = await Promise.all([
    customerDiscountRecords(tx, owner.customerId),
    owner.subscriptionId === null ? [] : tx.subscription.findUnique({ where: { id: owner.subscriptionId }, select: { discounts: true } }).then((s) => recordsOf(s?.discounts)),
    owner.invoiceId === null ? [] : detailsOfInvoice(tx, owner.invoiceId).then((d) => d.discountRecords),
  ]);
  return discountParams(scope, list, 'discounts', [...owner.own, ...customer, ...subscription, ...invoice]);
}

export async function createInvoiceItem(ctx: RequestContext) {
  const { params, deps } = ctx;
  const accountId = ctx.caller.accountId;
  if (params.customer === undefined) throw parameterMissing('customer');
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const customerId: string = params.customer;
    await lockCustomer(new TxSql(tx), accountId, customerId, 'customer');
    const customer = await tx.customer.findUniqueOrThrow({ where: { id: customerId }, select: { id: true, testClockId: true } });
    const now = await billingNow(tx, customer.testClockId, eventTime);
    const scope = requestScope(ctx, tx, now, eventTime);
    const description: string | null = params.description ?? null;
    const price = await pricingOf(scope, params, description);
    if (!price) throw invalidRequest('You must specify either `amount`, `pricing[price]`, `price_data` or `unit_amount_decimal`.', 'parameter_missing', 'amount');
    if (params.currency !== undefined && currencyOf(params.currency) !== price.currency) {
      throw invalidRequest(`The currency of the price (${price.currency}) must match the invoice item's currency (${params.currency}).`, 'parameter_invalid', 'currency');
    }
    if (params.amount !== undefined && params.quantity !== undefined) throw parametersExclusive('amount', 'quantity');
    const quantity: number = params.quantity ?? 1;
    let invoice: Awaited<ReturnType<typeof lockedDraft>> | null = null;
    if (params.invoice !== undefined) {
      invoice = await lockedDraft(scope, params.invoice);
      if (invoice.row.customerId !== customerId) throw invalidRequest(`The invoice ${params.invoice} belongs to another customer than ${customerId}.`, 'parameter_invalid', 'invoice');
      if (invoice.row.status !== 'draft') throw invalidRequest(`You can only add invoice items to a draft invoice; invoice ${params.invoice} is ${invoice.row.status}.`, 'invoice_already_finalized', 'invoice');
      if (invoice.row.currency !== price.currency) {
        throw invalidRequest(`The invoice item's currency (${price.currency}) must match the currency of invoice ${params.invoice} (${invoice.row.currency}).`, 'parameter_invalid', 'currency');
      }
    }
    let subscriptionId: string | null = null;
    if (params.subscription !== undefined) {
      const sub = hasIdShape('sub', params.subscription) ? await tx.subscription.findUnique({ where: { id: params.subscription, accountId }, select: { id: true, customerId: true, currency: true } }) : null;
      if (!sub) throw resourceMissing('subscription', params.subscription, 'subscription', 400);
      if (sub.customerId !== customerId) throw invalidRequest(`The subscription ${sub.id} belongs to another customer than ${customerId}.`, 'parameter_invalid', 'subscription');
      if (sub.currency !== price.currency) throw invalidRequest(`The invoice item's currency (${price.currency}) must match the subscription's (${sub.currency}).`, 'parameter_invalid', 'currency');
      subscriptionId = sub.id;
    }
    const amount = priceAmount(price, quantity);
    const period = periodOf(params.period, { start: now, end: now });
    const records = (await itemDiscounts(scope, params.discounts, { customerId, subscriptionId, invoiceId: invoice?.row.id ?? null, own: [] })) ?? [];
    const row: InvoiceItemRow = {
      id: newId('ii'),
      customerId,
      subscriptionId,
      subscriptionItemId: null,
      invoiceId: invoice?.row.id ?? null,
      testClockId: customer.testClockId,
      date: now,
      priceId: price.id,
      productId: price.productId,
      quantity,
      unitAmountDecimal: price.unitAmountDecimal,
      amount: BigInt(amount),
      currency: price.currency,
      description,
      proration: false,
      // A credit isn't discounted unless asked, as the public API does.
      discountable: params.discountable ?? amount >= 0,
      periodStart: period.start,
      periodEnd: period.end,
      taxRates: (await taxRateIds(scope, params.tax_rates)) ?? [],
      discounts: records.map((r) => r.id),
      discountAmounts: [],
      metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
    };
    await tx.invoiceItem.create({ data: { ...itemData(row, records), accountId }, select: { id: true } });
    if (invoice) await refreshDraft(scope, invoice.row);
    const object = await serializeOne(tx, accountId, row);
    await emitIn(scope, 'invoiceitem.created', object);
    return { object, events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  return result.object;
}

/** Locks one of the caller's items and the draft it is on; refuses an item on a finalized invoice. */
async function lockEditable(ctx: RequestContext, tx: Tx, verb: string) {
  const id = ctx.pathParams.invoiceitem;
  const eventTime = unixSeconds(ctx.deps.clock);
  if (!hasIdShape('ii', id) || !(await lockItem(tx, ctx.caller.accountId, id))) throw resourceMissing(NAME, id);
  const row = strip(await tx.invoiceItem.findUniqueOrThrow({ where: { id } }));
  const scope = requestScope(ctx, tx, await billingNow(tx, row.testClockId, eventTime), eventTime);
  const invoice = row.invoiceId === null ? null : await lockedDraft(scope, row.invoiceId);
  if (invoice && invoice.row.status !== 'draft') throw notEditable(id, invoice.row.id, verb);
  return { row, scope, invoice };
}

export async function updateInvoiceItem(ctx: RequestContext) {
  const { params, deps } = ctx;
  const accountId = ctx.caller.accountId;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { row: before, scope, invoice } = await lockEditable(ctx, tx, 'updated');
    const description: string | null = params.description === undefined ? before.description : params.description === '' ? null : params.description;
    const newPrice = await pricingOf(scope, { ...params, currency: before.currency }, description);
    if (params.amount !== undefined && params.quantity !== undefined) throw parametersExclusive('amount', 'quantity');
    const price = newPrice ?? ((await pricesById(tx, accountId, [before.priceId])).get(before.priceId) as PriceRow);
    if (newPrice && newPrice.currency !== before.currency) {
      throw invalidRequest(`The invoice item's currency (${before.currency}) can't change to ${newPrice.currency}.`, 'parameter_invalid', 'currency');
    }
    const quantity: number = params.amount !== undefined ? 1 : (params.quantity ?? before.quantity);
    // A proration's amount is its share of a period, not its price times quantity: it stays unless its pricing changes.
    const repriced = newPrice !== undefined || params.quantity !== undefined;
    const period = periodOf(params.period, { start: before.periodStart, end: before.periodEnd });
    const own = recordsOf(before.discountRecords);
    const records = (await itemDiscounts(scope, params.discounts, { ...before, own })) ?? own;
    const row: InvoiceItemRow = {
      ...before,
      description,
      priceId: price.id,
      productId: price.productId,
      unitAmountDecimal: price.unitAmountDecimal,
      quantity,
      amount: repriced ? BigInt(priceAmount(price, quantity)) : before.amount,
      discountable: params.discountable ?? before.discountable,
      periodStart: period.start,
      periodEnd: period.end,
      taxRates: (await taxRateIds(scope, params.tax_rates)) ?? before.taxRates,
      discounts: records.map((r) => r.id),
      metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
    };
    await tx.invoiceItem.update({ where: { id: row.id }, data: itemData(row, records), select: { id: true } });
    if (invoice) await refreshDraft(scope, invoice.row);
    const serialize = serializeItemWith(await itemRefs(tx, accountId, [before, row]));
    const object = serialize(row);
    // Sent as the API did when it documented it (stripe-node v14 and earlier list it; v15 dropped it from the docs).
    await emitIn(scope, 'invoiceitem.updated', object, previousAttributes(serialize(before), object));
    return { object, events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  return result.object;
}

export async function deleteInvoiceItem(ctx: RequestContext) {
  const { deps } = ctx;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { row, scope, invoice } = await lockEditable(ctx, tx, 'deleted');
    const object = await serializeOne(tx, ctx.caller.accountId, row);
    await tx.invoiceItem.delete({ where: { id: row.id }, select: { id: true } });
    if (invoice) await refreshDraft(scope, invoice.row);
    await emitIn(scope, 'invoiceitem.deleted', object);
    return { id: row.id, events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  return deletedInvoiceItem(result.id);
}
