import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { ApiError, invalidRequest, parameterMissing, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginateItems, paginateRows, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import type { ExpandableField } from '../../../kernel/expand';
import { searchRequest } from '../../../kernel/search';
import { previousAttributes, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { insertPrice, newPriceData } from '../prices/service';
import type { PriceRow } from '../prices/serializer';
import { addInterval, isMetered, nextPeriodEnd, priceAmount, prorate } from '../invoices/amounts';
import { attachedPaymentMethodParam, chargeOutcome, discountParams, emitIn, requestScope, amountDueOf, lockSubscriptionRow, paymentMethodFor, type Charge, type DraftLine, type Scope } from '../invoices/billing';
import type { AppliedDiscount } from '../invoices/amounts';
import {
  appliedDiscounts,
  billSubscription,
  discountsBilled,
  endCustomerOnce,
  clientColumns,
  insertProrations,
  jsonOf,
  loadView,
  loadViews,
  nullableJson,
  pendingItemLines,
  periodLines,
  prorationsOf,
  ratesOf,
  saveSettings,
  startPeriod,
  viewOf,
  type ItemChange,
  type Proration,
  type StoredRow,
} from './billing';
import { scheduleSubscriptions } from './jobs';
import { SEARCH, searchedRows } from './queries';
import { isProductId } from '../products/serializer';
import {
  serializeDeletedItem,
  serializeItem,
  serializeSubscription,
  SUBSCRIPTION_OBJECT,
  type ItemRow,
  type PauseCollection,
  type StoredDiscount,
  type StoredPaymentSettings,
  type StoredPendingUpdate,
  type SubscriptionRow,
  type SubscriptionView,
} from './serializer';

const NAME = 'subscription';
const ITEM_NAME = 'subscription item';

/** How long a subscription whose first invoice is unpaid stays `incomplete` before it expires. */
export const INCOMPLETE_SECONDS = 23 * 3600;

/** How long before a trial's end `customer.subscription.trial_will_end` is sent. */
export const TRIAL_WILL_END_SECONDS = 3 * 86_400;

/**
 * When the subscription's own time next asks for work: the end of its period (a renewal, or the
 * end of a trial or of a subscription canceling at period end), a `cancel_at`, a parked change
 * expiring, a trial ending soon, an unpaid first invoice expiring; null once it ended.
 */
export function nextActionOf(row: SubscriptionRow): number | null {
  if (row.status === 'canceled' || row.status === 'incomplete_expired') return null;
  if (row.status === 'incomplete') return row.created + INCOMPLETE_SECONDS;
  // A paused subscription bills nothing until it is resumed.
  if (row.status === 'paused') return null;
  const times = [row.periodEnd];
  if (row.pauseCollection?.resumes_at != null) times.push(row.pauseCollection.resumes_at);
  if (row.cancelAt !== null) times.push(row.cancelAt);
  const pending = row.pendingUpdate as StoredPendingUpdate | null;
  if (pending) times.push(pending.expires_at);
  if (row.status === 'trialing' && row.trialEnd !== null && !row.trialWillEndSent) times.push(Math.max(row.created, row.trialEnd - TRIAL_WILL_END_SECONDS));
  if (upcomingDue(row)) times.push(row.periodEnd - UPCOMING_SECONDS);
  return Math.min(...times);
}

/**
 * How long before a renewal that will be charged `invoice.upcoming` is sent (a dashboard setting
 * of the public API, "X days"; here three), once per period and only in periods longer than that.
 */
export const UPCOMING_SECONDS = 3 * 86_400;

/** Whether this period's `invoice.upcoming` is still to come. */
export const upcomingDue = (row: SubscriptionRow): boolean =>
  ['active', 'past_due', 'trialing'].includes(row.status) &&
  row.collectionMethod === 'charge_automatically' &&
  !row.cancelAtPeriodEnd &&
  row.cancelAt === null &&
  row.upcomingSentFor !== row.periodEnd &&
  row.periodEnd - UPCOMING_SECONDS > row.periodStart;

/** How long a change parked by `pending_if_incomplete` waits for its invoice's payment. */
export const PENDING_UPDATE_SECONDS = 23 * 3600;

/** How the public API refuses a `trial_end` that is not in the future. */
const PAST_TIMESTAMP = 'Invalid timestamp: must be an integer Unix timestamp in the future.';

/** The public API takes at most 20 items on a subscription. */
const MAX_ITEMS = 20;

/** Billing time: a test clock's frozen time for its customers' objects, else now. */
export async function billingNow(tx: Tx, testClockId: string | null, realNow: number): Promise<number> {
  if (testClockId === null) return realNow;
  const clock = await tx.testClock.findUnique({ where: { id: testClockId }, select: { frozenTime: true, status: true } });
  if (clock?.status === 'advancing') {
    throw invalidRequest('The test clock of this customer is advancing; try again once it is ready.', 'test_clock_advancing');
  }
  return clock?.frozenTime ?? realNow;
}

/** One of the caller's subscriptions, locked; 404 (or 400 on `param`) otherwise. */
export async function lockSubscription(tx: Tx, ctx: RequestContext, id: string, param?: string): Promise<SubscriptionView> {
  const missing = () => (param === undefined ? resourceMissing(NAME, id) : resourceMissing(NAME, id, param, 400));
  if (!hasIdShape('sub', id)) throw missing();
  if (!(await lockSubscriptionRow(tx, id, ctx.caller.accountId))) throw missing();
  return loadView(tx, await tx.subscription.findUniqueOrThrow({ where: { id } }), ctx.caller.accountId);
}

const ONE_TIME_MESSAGE = 'The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.';

/**
 * `price`, `plan` or `price_data` of an item parameter: one of the caller's recurring prices (an
 * inline one is made). A plan is a recurring price named by its id (the public API's plans and
 * prices share ids; every version, the newest included, still takes `plan`).
 */
async function priceOfItem(scope: Scope, ctx: RequestContext, item: Record<string, any>, at: (name: string) => string): Promise<PriceRow | undefined> {
  if (item.plan !== undefined && item.price !== undefined) throw parametersExclusive(at('plan'), at('price'));
  const named = item.plan !== undefined ? 'plan' : 'price';
  if (item[named] !== undefined && item.price_data !== undefined) throw parametersExclusive(at(named), at('price_data'));
  if (item[named] !== undefined) {
    const id: string = item[named];
    const row = hasIdShape('price', id) ? await scope.tx.price.findUnique({ where: { id, accountId: scope.accountId } }) : null;
    if (!row) throw resourceMissing(named, id, at(named), 400);
    if (row.type !== 'recurring') throw invalidRequest(ONE_TIME_MESSAGE, 'parameter_invalid', at(named));
    if (!row.active) throw invalidRequest(`The ${named} \`${id}\` is not active and can't be used for new subscription items.`, 'parameter_invalid', at(named));
    return row;
  }
  if (item.price_data === undefined) return undefined;
  const data: Record<string, any> = item.price_data;
  const within = (name: string) => at(`price_data][${name}`).replace('][', '[');
  if (data.unit_amount !== undefined && data.unit_amount_decimal !== undefined) throw parametersExclusive(within('unit_amount'), within('unit_amount_decimal'));
  if (data.unit_amount === undefined && data.unit_amount_decimal === undefined) throw parameterMissing(within('unit_amount'));
  const product = isProductId(data.product) ? await scope.tx.product.findUnique({ where: { id: data.product, accountId: scope.accountId } }) : null;
  if (!product) throw resourceMissing('product', data.product, within('product'), 400);
  const made = await insertPrice(ctx, scope.tx, { ...newPriceData(ctx, data, scope.eventTime, (n) => within(n)), productId: product.id });
  scope.events.push(made.eventId);
  return made.row;
}

/** Tax rate ids of the caller's account, each checked; `''` clears (an empty list). */
export async function taxRateIds(scope: Scope, ids: string[] | '' | undefined, param: string): Promise<string[] | undefined> {
  if (ids === undefined) return undefined;
  if (ids === '') return [];
  const found = await scope.tx.taxRate.findMany({ where: { accountId: scope.accountId, id: { in: ids.filter((id) => hasIdShape('txr', id)) } }, select: { id: true } });
  const known = new Set(found.map((r) => r.id));
  const missing = ids.findIndex((id) => !known.has(id));
  if (missing !== -1) throw resourceMissing('tax rate', ids[missing], `${param}[${missing}]`, 400);
  return [...new Set(ids)];
}

/** `discounts` parameters (coupons or promotion codes) as stored discounts; `''` clears (`preview`: checked, not redeemed). */
export async function discountsOf(
  scope: Scope,
  list: Record<string, string>[] | '' | undefined,
  param: string,
  options: { preview?: boolean } = {},
): Promise<StoredDiscount[] | undefined> {
  if (list === undefined) return undefined;
  if (list === '') return [];
  return discountParams(scope, list, param, null, options);
}

/** Prices of a subscription's live items must share currency and billing interval, and appear once. */
function checkItems(items: readonly { price: PriceRow }[], param: string): void {
  if (items.length === 0) throw invalidRequest('A subscription needs at least one item.', 'parameter_missing', param);
  if (items.length > MAX_ITEMS) throw invalidRequest(`A subscription can have at most ${MAX_ITEMS} items.`, 'parameter_invalid', param);
  const first = items[0].price;
  const interval = (p: PriceRow) => p.recurring as { interval: string; interval_count: number };
  const seen = new Set<string>();
  for (const { price } of items) {
    if (seen.has(price.id)) throw invalidRequest(`Cannot add multiple subscription items with the same price: ${price.id}`, 'parameter_invalid', param);
    seen.add(price.id);
    if (price.currency !== first.currency) {
      throw invalidRequest(`Currency and interval fields must match across all plans on this subscription. Found mismatch in currency: ${first.currency} and ${price.currency}.`, 'parameter_invalid', param);
    }
    if (interval(price).interval !== interval(first).interval || interval(price).interval_count !== interval(first).interval_count) {
      throw invalidRequest(`Currency and interval fields must match across all plans on this subscription. Found mismatch in interval: ${interval(first).interval} and ${interval(price).interval}.`, 'parameter_invalid', param);
    }
  }
}

/** Throws the charge's error for `error_if_incomplete` (a card error is a 402, as the public API answers). */
function failIfIncomplete(charge: Charge): void {
  if (charge.kind === 'paid') return;
  // Nothing stands, so neither does the declined intent's charge: the decline alone, and no writes kept.
  const e = charge.error;
  const declineCode = e.extra?.decline_code;
  throw new ApiError({ status: e.status, type: e.type, code: e.code, message: e.message, extra: declineCode === undefined ? undefined : { decline_code: declineCode } });
}

async function lockCustomer(tx: Tx, ctx: RequestContext, id: string) {
  const missing = () => resourceMissing('customer', id, 'customer', 400);
  if (!hasIdShape('cus', id)) throw missing();
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM customers WHERE id = ${id} AND account_id = ${ctx.caller.accountId} AND NOT deleted FOR UPDATE`;
  if (rows.length === 0) throw missing();
  return tx.customer.findUniqueOrThrow({ where: { id } });
}

const itemRowOf = (sub: string, price: PriceRow, item: Record<string, any>, created: number, taxRates: string[] | undefined, discounts: StoredDiscount[] | undefined): ItemRow => ({
  id: newId('si', 14),
  subscriptionId: sub,
  priceId: price.id,
  quantity: isMetered(price) ? null : (item.quantity ?? 1),
  created,
  metadata: applyMetadata({}, item.metadata as MetadataParam | undefined),
  taxRates: taxRates ?? [],
  taxRatesSet: taxRates !== undefined,
  discounts: jsonOf(discounts ?? []) as Prisma.JsonValue,
  billingThresholds: item.billing_thresholds === undefined || item.billing_thresholds === '' ? null : { usage_gte: item.billing_thresholds.usage_gte },
  billedPriceId: null,
  billedQuantity: null,
});

const insertItem = (tx: Tx, accountId: string, row: ItemRow) =>
  tx.subscriptionItem.create({ data: { ...row, accountId, metadata: jsonOf(row.metadata), discounts: jsonOf(row.discounts), billingThresholds: nullableJson(row.billingThresholds) }, select: { id: true } });

/** A new subscription as its parameters make it, before anything of it is written, and its first invoice. */
export interface NewSubscription {
  /** `incomplete`, without its latest invoice yet. */
  readonly row: SubscriptionRow;
  readonly items: ItemRow[];
  readonly trialEnd: number | null;
  /** The first invoice's lines: the first period's (nothing in a trial; its share when an anchor cuts it short), then the customer's pending items. */
  readonly lines: DraftLine[];
  readonly discounts: AppliedDiscount[];
}

/**
 * What `POST /v1/subscriptions` makes of `params` for `customer` at `scope.now`, and the first
 * invoice it bills: the create's own arithmetic, shared with the preview of a new subscription.
 * It writes nothing but an inline `price_data`'s price and the coupons' redemptions, and with
 * `preview` not those either (a preview takes no `price_data`; its discounts are checked only).
 */
export async function newSubscription(
  scope: Scope,
  ctx: RequestContext,
  customer: { id: string; testClockId: string | null },
  params: Record<string, any>,
  options: { preview?: boolean } = {},
): Promise<NewSubscription> {
  const { tx, now } = scope;
  const id = newId('sub');
  const prices: PriceRow[] = [];
  for (const [i, item] of (params.items as Record<string, any>[]).entries()) {
    const price = await priceOfItem(scope, ctx, item, (n) => `items[${i}][${n}]`);
    if (!price) throw parameterMissing(`items[${i}][price]`);
    prices.push(price);
  }
  checkItems(prices.map((price) => ({ price })), 'items');
  const recurring = prices[0].recurring as { interval: string; interval_count: number };
  let trialEnd: number | null = null;
  if (params.trial_period_days !== undefined && params.trial_period_days > 0) trialEnd = now + params.trial_period_days * 86_400;
  if (params.trial_end !== undefined && params.trial_end !== 'now') {
    if (params.trial_end <= now) throw invalidRequest(PAST_TIMESTAMP, 'parameter_invalid', 'trial_end');
    trialEnd = params.trial_end;
  }
  const anchorParam: number | undefined = params.billing_cycle_anchor;
  const fullPeriodEnd = addInterval(now, recurring.interval, recurring.interval_count);
  if (anchorParam !== undefined && (anchorParam < now || anchorParam > fullPeriodEnd)) {
    throw invalidRequest('`billing_cycle_anchor` must be in the future and no later than one billing period from now.', 'parameter_invalid', 'billing_cycle_anchor');
  }
  const anchor = trialEnd ?? anchorParam ?? now;
  const periodEnd = trialEnd ?? (anchorParam !== undefined && anchorParam > now ? anchorParam : fullPeriodEnd);
  const defaultPm = await attachedPaymentMethodParam(scope, ctx, params.default_payment_method, customer.id);
  const discountsParam = (list: Record<string, string>[] | '' | undefined, param: string) => discountsOf(scope, list, param, options);
  const row: SubscriptionRow = {
    id,
    customerId: customer.id,
    testClockId: customer.testClockId,
    created: now,
    status: 'incomplete',
    currency: prices[0].currency,
    collectionMethod: params.collection_method ?? 'charge_automatically',
    daysUntilDue: params.days_until_due ?? null,
    defaultPaymentMethod: defaultPm ?? null,
    defaultTaxRates: (await taxRateIds(scope, params.default_tax_rates, 'default_tax_rates')) ?? [],
    description: params.description ?? null,
    discounts: jsonOf((await discountsParam(params.discounts, 'discounts')) ?? []) as Prisma.JsonValue,
    billingCycleAnchor: anchor,
    interval: recurring.interval,
    intervalCount: recurring.interval_count,
    periodStart: now,
    periodEnd,
    startDate: now,
    trialStart: trialEnd === null ? null : now,
    trialEnd,
    trialWillEndSent: false,
    upcomingSentFor: null,
    cancelAtPeriodEnd: params.cancel_at_period_end ?? false,
    cancelAt: null,
    canceledAt: null,
    endedAt: null,
    cancellationDetails: null,
    metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
    latestInvoice: null,
    pendingUpdate: null,
    nextActionAt: null,
    trialMissingPaymentMethod: trialMissingPaymentMethodOf(params) ?? 'create_invoice',
    pauseCollection: null,
  };
  const items: ItemRow[] = [];
  for (const [i, item] of (params.items as Record<string, any>[]).entries()) {
    const rates = await taxRateIds(scope, item.tax_rates, `items[${i}][tax_rates]`);
    const discounts = await discountsParam(item.discounts, `items[${i}][discounts]`);
    items.push(itemRowOf(id, prices[i], item, now, rates, discounts));
  }
  const view = await viewOf(tx, row, items, scope.accountId);
  const stub = anchorParam !== undefined && anchorParam > now && trialEnd === null;
  const lines = await periodLines(tx, view, now, periodEnd, { trial: trialEnd !== null });
  // A first period cut short by the anchor bills its share of a whole period (nothing with `none`).
  const first = !stub ? lines : params.proration_behavior === 'none' ? lines.map((l) => ({ ...l, amount: 0 })) : stubLines(lines, now, periodEnd, recurring);
  const discounts = await appliedDiscounts(tx, await discountsBilled(tx, row), now);
  return { row, items, trialEnd, lines: [...first, ...(await pendingItemLines(tx, scope.accountId, row))], discounts };
}

export async function createSubscription(ctx: RequestContext) {
  const { params, deps } = ctx;
  if (params.customer === undefined) throw parameterMissing('customer');
  if (params.items === undefined || params.items.length === 0) throw parameterMissing('items');
  const behavior: string = params.payment_behavior ?? 'allow_incomplete';
  if (behavior === 'pending_if_incomplete') {
    throw invalidRequest('`payment_behavior=pending_if_incomplete` can only be used when updating a subscription.', 'parameter_invalid', 'payment_behavior');
  }
  const collection: string = params.collection_method ?? 'charge_automatically';
  if (collection === 'send_invoice' && params.days_until_due === undefined) throw parameterMissing('days_until_due');
  if (collection !== 'send_invoice' && params.days_until_due !== undefined) {
    throw invalidRequest('`days_until_due` can only be set when `collection_method` is `send_invoice`.', 'parameter_invalid', 'days_until_due');
  }
  if (params.trial_end !== undefined && params.trial_period_days !== undefined) throw parametersExclusive('trial_end', 'trial_period_days');
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const customer = await lockCustomer(tx, ctx, params.customer);
    const now = await billingNow(tx, customer.testClockId, eventTime);
    const scope = requestScope(ctx, tx, now, eventTime);
    const { row, items, trialEnd, lines: draftLines, discounts } = await newSubscription(scope, ctx, customer, params);
    const id = row.id;
    const pm = row.defaultPaymentMethod ?? customer.defaultPaymentMethod;
    const due = amountDueOf({ lines: draftLines, discounts }, customer);
    const collect = !(behavior === 'default_incomplete' && due > 0);
    // The card decides before anything is written: the subscription's event, first, shows the outcome.
    const charge = collection === 'charge_automatically' && collect ? await chargeOutcome(tx, ctx.caller.accountId, pm, due) : null;
    if (charge && behavior === 'error_if_incomplete') failIfIncomplete(charge);
    const status = trialEnd !== null ? 'trialing' : collection === 'send_invoice' ? 'active' : charge === null ? 'incomplete' : charge.kind === 'paid' ? 'active' : 'incomplete';
    const invoiceId = newId('in');
    const onceUsed = discounts.filter((d) => d.coupon.duration === 'once').map((d) => d.id);
    const final: SubscriptionRow = {
      ...row,
      status,
      latestInvoice: invoiceId,
      discounts: jsonOf((row.discounts as unknown as StoredDiscount[]).filter((d) => !onceUsed.includes(d.id))) as Prisma.JsonValue,
    };
    await tx.subscription.create({
      data: {
        ...clientColumns(final),
        nextActionAt: nextActionOf(final),
        accountId: ctx.caller.accountId,
        discounts: jsonOf(final.discounts),
        metadata: jsonOf(final.metadata),
        cancellationDetails: nullableJson(null),
        pendingUpdate: nullableJson(null),
      },
      select: { id: true },
    });
    if (final.trialMissingPaymentMethod !== 'create_invoice') await saveSettings(tx, final);
    const paymentSettings = paymentSettingsOf(params.payment_settings);
    if (paymentSettings) await tx.$executeRaw`UPDATE subscriptions SET payment_settings = ${JSON.stringify(paymentSettings)}::jsonb WHERE id = ${id}`;
    // A trial bills nothing, so there is nothing to credit until its end.
    const billed = items.map((i) => ({ ...i, billedPriceId: trialEnd === null ? i.priceId : null, billedQuantity: trialEnd === null ? i.quantity : null }));
    for (const item of billed) await insertItem(tx, ctx.caller.accountId, item);
    const finalView = await viewOf(tx, final, billed, ctx.caller.accountId);
    await emitIn(scope, 'customer.subscription.created', serializeSubscription(finalView));
    // The invoice bills the discounts the subscription started with (a once-only one included).
    // The first invoice's own period is its creation time, as the public API's; its lines bill the first period.
    await billSubscription(scope, { ...finalView, row }, 'subscription_create', draftLines, { periodStart: now, periodEnd: now, collect, id: invoiceId });
    await endCustomerOnce(tx, row, discounts);
    return { subscription: serializeSubscription(finalView), events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  await scheduleSubscriptions(deps, [result.subscription.id]);
  return result.subscription;
}

/** The cards-only sandbox's payment method types. */
const PAYMENT_METHOD_TYPES = ['card'];

/**
 * `payment_settings` as given (kept whole, shown back): `save_default_payment_method`,
 * `payment_method_types` (cards only here; an empty string is none given) and
 * `payment_method_options`. Undefined when none was given.
 */
function paymentSettingsOf(param: Record<string, any> | undefined): StoredPaymentSettings | undefined {
  if (param === undefined) return undefined;
  const types = param.payment_method_types === undefined || param.payment_method_types === '' ? null : (param.payment_method_types as string[]);
  const unsupported = types?.find((type) => !PAYMENT_METHOD_TYPES.includes(type));
  if (unsupported !== undefined) {
    throw invalidRequest(`The payment method type \`${unsupported}\` is not supported here: only \`card\` payments are.`, 'parameter_invalid', 'payment_settings[payment_method_types]');
  }
  const options = param.payment_method_options === undefined || param.payment_method_options === '' ? null : (param.payment_method_options as Record<string, unknown>);
  return { payment_method_options: options, payment_method_types: types, save_default_payment_method: param.save_default_payment_method ?? 'off' };
}

/** A first period cut short by a billing cycle anchor bills its share of a whole period. */
function stubLines(lines: Awaited<ReturnType<typeof periodLines>>, now: number, anchor: number, recurring: { interval: string; interval_count: number }) {
  const wholeStart = addInterval(anchor, recurring.interval, -recurring.interval_count);
  return lines.map((l) => ({ ...l, amount: prorate(priceAmount(l.price, l.quantity ?? 0), now, wholeStart, anchor), periodStart: now, periodEnd: anchor }));
}

export async function retrieveSubscription(ctx: RequestContext) {
  const id = ctx.pathParams.subscription_exposed_id;
  const tx = ctx.deps.prisma;
  const row = hasIdShape('sub', id) ? await tx.subscription.findUnique({ where: { id, accountId: ctx.caller.accountId } }) : null;
  if (!row) throw resourceMissing(NAME, id);
  return serializeSubscription(await loadView(tx, row, ctx.caller.accountId));
}

/** The public object of one of the caller's subscriptions (for expansion), or null. */
export async function retrieveSubscriptionObject(ctx: RequestContext, id: string) {
  const row = await ctx.deps.prisma.subscription.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  return row ? serializeSubscription(await loadView(ctx.deps.prisma, row, ctx.caller.accountId)) : null;
}

export async function listSubscriptions(ctx: RequestContext) {
  const { params, caller, deps } = ctx;
  const status: string | undefined = params.status;
  const where: Prisma.SubscriptionWhereInput = {
    accountId: caller.accountId,
    customerId: params.customer,
    testClockId: params.test_clock,
    created: rangeWhere(params.created),
    // The default list leaves out canceled subscriptions, as the public API's does.
    status: status === 'all' ? undefined : status === 'ended' ? { in: ['canceled', 'incomplete_expired'] } : (status ?? { not: 'canceled' }),
    ...(params.price !== undefined ? { items: { some: { priceId: params.price } } } : {}),
  };
  return paginateRows<SubscriptionRow & { seq: bigint }>({
    params,
    url: '/v1/subscriptions',
    where: where as Record<string, unknown>,
    model: deps.prisma.subscription as any,
    objectName: NAME,
    serializeAll: (rows) => serializeSubscriptions(ctx, rows),
  });
}

/**
 * A customer's `subscriptions`, which the public API shows on a customer when expanded: its
 * first ten not canceled, newest first, as the default list. Billing gives it to customers
 * (billing/index.ts `objectFields`).
 */
export const customerSubscriptionsField: ExpandableField = {
  type: SUBSCRIPTION_OBJECT,
  list: true,
  expand: (_value, customer, ctx) =>
    paginateRows<SubscriptionRow & { seq: bigint }>({
      params: { limit: 10 },
      url: `/v1/customers/${String(customer.id)}/subscriptions`,
      where: { accountId: ctx.caller.accountId, customerId: String(customer.id), status: { not: 'canceled' } },
      model: ctx.deps.prisma.subscription as any,
      objectName: NAME,
      serializeAll: (rows) => serializeSubscriptions(ctx, rows),
    }),
};

/** Subscriptions as the list and the search render them. */
const serializeSubscriptions = async (ctx: RequestContext, rows: StoredRow[]) =>
  (await loadViews(ctx.deps.prisma, rows, ctx.caller.accountId)).map((view) => serializeSubscription(view));

/** `GET /v1/subscriptions/search`: the matching ids, then their rows read and rendered as the list's. */
export async function searchSubscriptions(ctx: RequestContext) {
  const { caller, deps } = ctx;
  const result = await searchRequest<{ id: string; seq: bigint }>(ctx, SEARCH, searchedRows(caller.accountId), (row) => row.id);
  const ids = result.data as string[];
  const byId = new Map((await deps.prisma.subscription.findMany({ where: { id: { in: ids }, accountId: caller.accountId } })).map((row) => [row.id, row]));
  return { ...result, data: await serializeSubscriptions(ctx, ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []))) };
}

// ------------------------------------------------------------------------------------------
// Changes: a subscription update, and the item operations (each a change of one item).

/** One item parameter of a change: `id` names an existing item; none adds one. */
export type ItemParam = Record<string, any>;

export interface ChangeOptions {
  readonly prorationBehavior: string;
  readonly prorationDate: number | undefined;
  readonly paymentBehavior: string;
  /** Where item parameters sit in the request, for errors (`items[0]`, or the top level). */
  readonly at: (index: number, name: string) => string;
}

/** The parameters `pending_if_incomplete` allows, as the public API lists them. */
const PENDING_ALLOWED = new Set(['items', 'price', 'plan', 'price_data', 'quantity', 'proration_behavior', 'proration_date', 'payment_behavior', 'expand', 'off_session', 'subscription', 'id', 'deleted']);

function checkPendingParams(params: Record<string, any>): void {
  for (const name of Object.keys(params)) {
    if (!PENDING_ALLOWED.has(name)) {
      throw invalidRequest(`The parameter \`${name}\` can't be used with \`payment_behavior=pending_if_incomplete\`.`, 'parameter_invalid', name);
    }
  }
  for (const [i, item] of ((params.items as ItemParam[] | undefined) ?? []).entries()) {
    for (const name of Object.keys(item)) {
      if (!PENDING_ALLOWED.has(name)) throw invalidRequest(`The parameter \`items[${i}][${name}]\` can't be used with \`payment_behavior=pending_if_incomplete\`.`, 'parameter_invalid', `items[${i}][${name}]`);
    }
  }
}

export interface PlannedItem {
  row: ItemRow;
  price: PriceRow;
  isNew: boolean;
  deleted: boolean;
  /** The price or quantity changed (prorations are due). */
  billingChanged: boolean;
}

/** What a change does to the items, worked out before anything is written. */
export async function planItems(scope: Scope, ctx: RequestContext, view: SubscriptionView, items: readonly ItemParam[], options: ChangeOptions): Promise<PlannedItem[]> {
  const planned: PlannedItem[] = view.items.map((i) => ({ row: { ...i.row }, price: i.price, isNew: false, deleted: false, billingChanged: false }));
  for (const [index, param] of items.entries()) {
    const at = (name: string) => options.at(index, name);
    if (param.id === undefined) {
      if (param.deleted === true) throw parameterMissing(at('id'));
      const price = await priceOfItem(scope, ctx, param, at);
      if (!price) throw parameterMissing(at('price'));
      const rates = await taxRateIds(scope, param.tax_rates, at('tax_rates'));
      const discounts = await discountsOf(scope, param.discounts, at('discounts'));
      planned.push({ row: itemRowOf(view.row.id, price, param, scope.now, rates, discounts), price, isNew: true, deleted: false, billingChanged: true });
      continue;
    }
    const target = planned.find((p) => p.row.id === param.id && !p.isNew);
    if (!target) throw resourceMissing(ITEM_NAME, param.id, at('id'), 400);
    if (param.clear_usage !== undefined && !isMetered(target.price)) {
      throw invalidRequest('`clear_usage` can only be used with items of metered prices.', 'parameter_invalid', at('clear_usage'));
    }
    if (param.deleted === true) {
      target.deleted = true;
      target.billingChanged = true;
      continue;
    }
    const price = await priceOfItem(scope, ctx, param, at);
    const row = target.row;
    if (price && price.id !== target.price.id) {
      target.price = price;
      row.priceId = price.id;
      // A new price starts at quantity 1 unless one is given.
      row.quantity = isMetered(price) ? null : (param.quantity ?? 1);
      target.billingChanged = true;
    } else if (param.quantity !== undefined && !isMetered(target.price) && param.quantity !== row.quantity) {
      row.quantity = param.quantity;
      target.billingChanged = true;
    }
    if (param.metadata !== undefined) row.metadata = applyMetadata(row.metadata as Metadata, param.metadata);
    const rates = await taxRateIds(scope, param.tax_rates, at('tax_rates'));
    if (rates !== undefined) {
      row.taxRates = rates;
      row.taxRatesSet = param.tax_rates !== '';
    }
    const discounts = await discountsOf(scope, param.discounts, at('discounts'));
    if (discounts !== undefined) row.discounts = discounts as unknown as Prisma.JsonValue;
    if (param.billing_thresholds !== undefined) row.billingThresholds = param.billing_thresholds === '' ? null : { usage_gte: param.billing_thresholds.usage_gte };
  }
  const live = planned.filter((p) => !p.deleted);
  // An item operation names its own `price`; a subscription update, `items`.
  checkItems(live, options.at(0, 'price') === 'price' ? 'price' : 'items');
  return planned;
}

interface ChangeResult {
  view: SubscriptionView;
  /** The item a single-item operation was about. */
  items: PlannedItem[];
}

/**
 * The prorations a change of items makes at `proration_date` (or now), written nowhere: what an
 * update inserts and what a preview shows. `defaultTaxRates`: the update's, when it sets them.
 */
export async function changeProrations(
  tx: Tx,
  accountId: string,
  view: SubscriptionView,
  planned: readonly PlannedItem[],
  options: Pick<ChangeOptions, 'prorationBehavior' | 'prorationDate'>,
  defaultTaxRates: readonly string[] | undefined,
  now: number,
): Promise<{ t: number; prorating: boolean; prorations: Proration[] }> {
  const sub = view.row;
  const t = options.prorationDate ?? now;
  if (options.prorationDate !== undefined && (t < sub.periodStart || t > sub.periodEnd)) {
    throw invalidRequest('`proration_date` must be within the current billing period.', 'parameter_invalid', 'proration_date');
  }
  const prorating = options.prorationBehavior !== 'none' && sub.status !== 'trialing' && planned.some((p) => p.billingChanged);
  if (!prorating) return { t, prorating, prorations: [] };
  const defaultRates = defaultTaxRates === undefined ? view.defaultTaxRates : (await viewOf(tx, { ...sub, defaultTaxRates: [...defaultTaxRates] }, [], accountId)).defaultTaxRates;
  const billedPrices = await tx.price.findMany({ where: { id: { in: planned.flatMap((p) => (p.row.billedPriceId ? [p.row.billedPriceId] : [])) } } });
  const byId = new Map(billedPrices.map(({ seq: _s, accountId: _a, ...p }) => [p.id, p]));
  const changes: ItemChange[] = planned
    .filter((p) => p.billingChanged)
    .map((p) => {
      const billed = p.isNew || !p.row.billedPriceId ? null : { price: byId.get(p.row.billedPriceId)!, quantity: p.row.billedQuantity };
      const rates = p.row.taxRatesSet ? (view.items.find((i) => i.row.id === p.row.id)?.taxRates ?? null) : null;
      return { itemId: p.row.id, before: billed, after: p.deleted ? null : { price: p.price, quantity: p.row.quantity }, taxRates: rates ?? defaultRates };
    });
  const discounts = await appliedDiscounts(tx, await discountsBilled(tx, sub), sub.periodStart);
  return { t, prorating, prorations: await prorationsOf(tx, changes, discounts, t, sub.periodStart, sub.periodEnd) };
}

/**
 * Applies a change: item changes (with their prorations, per `proration_behavior`, and an
 * invoice charged at once with `always_invoice`, per `payment_behavior`) and the subscription's
 * own fields. Emits what happened; `customer.subscription.updated` when the object changed.
 */
async function applyChange(
  scope: Scope,
  ctx: RequestContext,
  view: SubscriptionView,
  items: readonly ItemParam[],
  fields: Partial<SubscriptionRow>,
  options: ChangeOptions,
  /** What else the change does to the subscription before it is saved (its period, for an update). */
  finish: (after: SubscriptionView) => Promise<SubscriptionView> = async (after) => after,
): Promise<ChangeResult> {
  const { tx } = scope;
  const sub = view.row;
  if (sub.status === 'canceled' || sub.status === 'incomplete_expired') {
    throw invalidRequest(`A canceled subscription can only update its cancellation_details and metadata.`, undefined, undefined);
  }
  const planned = await planItems(scope, ctx, view, items, options);
  const { t, prorating, prorations } = await changeProrations(tx, scope.accountId, view, planned, options, fields.defaultTaxRates, scope.now);
  const invoicing = options.prorationBehavior === 'always_invoice' && prorations.length > 0;
  let charge: Charge = { kind: 'paid' };
  if (invoicing && sub.collectionMethod === 'charge_automatically') {
    const pending = await pendingItemLines(tx, scope.accountId, sub);
    const balance = await tx.customer.findUnique({ where: { id: sub.customerId }, select: { balance: true, currency: true } });
    const due = amountDueOf({ lines: [...pending, ...prorations.map((p) => ({ ...proLine(p, t, sub.periodEnd) }))], discounts: [] }, balance);
    const pm = fields.defaultPaymentMethod ?? (await paymentMethodFor(tx, { defaultPaymentMethod: sub.defaultPaymentMethod, customerId: sub.customerId }));
    charge = await chargeOutcome(tx, scope.accountId, pm, due);
    if (options.paymentBehavior === 'error_if_incomplete') failIfIncomplete(charge);
    if (options.paymentBehavior === 'default_incomplete' && due > 0) charge = { kind: 'declined', error: invalidRequest('The payment waits for confirmation.') };
  }
  const parked = options.paymentBehavior === 'pending_if_incomplete' && charge.kind !== 'paid';
  await insertProrations(scope, { ...sub, periodEnd: sub.periodEnd }, prorations, t);
  let status = sub.status;
  let latestInvoice = sub.latestInvoice;
  let pendingUpdate: StoredPendingUpdate | null = sub.pendingUpdate as StoredPendingUpdate | null;
  if (invoicing) {
    const lines = await pendingItemLines(tx, scope.accountId, sub);
    const deferred = options.paymentBehavior === 'default_incomplete';
    const billed = await billSubscription(scope, view, 'subscription_update', lines, { periodStart: t, periodEnd: sub.periodEnd, prorationDate: options.prorationDate, collect: !deferred });
    latestInvoice = billed.invoice.row.id;
    if (!parked && billed.charge !== null && billed.charge.kind !== 'paid') status = 'past_due';
    if (!parked && deferred && Number(billed.invoice.row.amountDue) > 0) status = 'past_due';
    if (parked) {
      const after = planned.filter((p) => !p.deleted);
      const afterView = await viewOf(tx, sub, after.map((p) => p.row), scope.accountId);
      pendingUpdate = {
        expires_at: scope.now + PENDING_UPDATE_SECONDS,
        invoice: billed.invoice.row.id,
        subscription_items: afterView.items.map((i) => serializeItem(i, sub)),
        changes: planned.map((p) => ({ ...p.row, isNew: p.isNew, deleted: p.deleted, billingChanged: p.billingChanged })) as unknown as Record<string, unknown>[],
      };
    }
  }
  const rowAfter: SubscriptionRow = { ...sub, ...fields, status, latestInvoice, pendingUpdate: pendingUpdate as unknown as Prisma.JsonValue };
  const itemsAfter = parked ? view.items.map((i) => i.row) : await writeItems(scope, planned, prorating);
  const after = await finish(await viewOf(tx, rowAfter, itemsAfter, scope.accountId));
  await saveSubscriptionRow(scope, view, after);
  return { view: after, items: planned };
}

/** A proration as the invoice line it becomes, for working out what an invoice would ask. */
export const proLine = (p: Awaited<ReturnType<typeof prorationsOf>>[number], t: number, end: number) => ({
  invoiceItemId: null,
  subscriptionItemId: p.itemId,
  price: p.price,
  quantity: p.quantity,
  amount: p.amount,
  description: p.description,
  proration: true,
  discountable: false,
  periodStart: t,
  periodEnd: end,
  taxRates: p.taxRates,
  discountAmounts: p.discountAmounts,
});

/** Writes planned items; items with prorations are now billed at their new price and quantity. */
async function writeItems(scope: Scope, planned: readonly PlannedItem[], prorated: boolean): Promise<ItemRow[]> {
  const { tx } = scope;
  const out: ItemRow[] = [];
  for (const p of planned) {
    if (p.deleted) {
      await tx.subscriptionItem.delete({ where: { id: p.row.id }, select: { id: true } });
      continue;
    }
    const billed = prorated && p.billingChanged ? { billedPriceId: p.row.priceId, billedQuantity: p.row.quantity } : {};
    const row = { ...p.row, ...billed };
    if (p.isNew) await insertItem(tx, scope.accountId, row);
    else {
      const { id, subscriptionId: _s, created: _c, ...data } = row;
      await tx.subscriptionItem.update({
        where: { id },
        data: { ...data, metadata: jsonOf(data.metadata), discounts: jsonOf(data.discounts), billingThresholds: nullableJson(data.billingThresholds) },
        select: { id: true },
      });
    }
    out.push(row);
  }
  return out;
}

/** Writes the subscription's own columns and emits `customer.subscription.updated` if its object changed. */
export async function saveSubscriptionRow(scope: Scope, before: SubscriptionView, after: SubscriptionView, type: 'customer.subscription.updated' | 'customer.subscription.deleted' = 'customer.subscription.updated'): Promise<void> {
  const { id, customerId: _c, created: _cr, ...data } = clientColumns(after.row);
  await saveSettings(scope.tx, after.row, before.row);
  await scope.tx.subscription.update({
    where: { id },
    data: {
      ...data,
      nextActionAt: nextActionOf(after.row),
      discounts: jsonOf(data.discounts),
      metadata: jsonOf(data.metadata),
      cancellationDetails: nullableJson(data.cancellationDetails),
      pendingUpdate: nullableJson(data.pendingUpdate),
    },
    select: { id: true },
  });
  const changed = previousAttributes(serializeSubscription(before), serializeSubscription(after));
  if (type === 'customer.subscription.deleted') await emitIn(scope, type, serializeSubscription(after));
  else if (Object.keys(changed).length > 0) await emitIn(scope, type, serializeSubscription(after), changed);
}

/** `cancellation_details` (`comment`, `feedback`; an empty string clears either) over what is stored. */
function cancellationDetailsOf(sub: SubscriptionRow, param: { comment?: string; feedback?: string }): Prisma.JsonValue {
  const current = (sub.cancellationDetails as Record<string, unknown> | null) ?? { comment: null, feedback: null, reason: null };
  const value = (given: string | undefined, was: unknown) => (given === undefined ? was : given === '' ? null : given);
  return { ...current, comment: value(param.comment, current.comment), feedback: value(param.feedback, current.feedback) } as Prisma.JsonValue;
}

export const changeOptionsOf = (params: Record<string, any>, at: ChangeOptions['at']): ChangeOptions => ({
  prorationBehavior: params.proration_behavior ?? 'create_prorations',
  prorationDate: params.proration_date,
  paymentBehavior: params.payment_behavior ?? 'allow_incomplete',
  at,
});

/** The subscription's own fields an update sets (undefined: unchanged). */
async function fieldsOf(scope: Scope, ctx: RequestContext, view: SubscriptionView, params: Record<string, any>): Promise<Partial<SubscriptionRow>> {
  const sub = view.row;
  const fields: Partial<SubscriptionRow> = {};
  if (params.metadata !== undefined) fields.metadata = applyMetadata(sub.metadata as Metadata, params.metadata);
  if (params.description !== undefined) fields.description = params.description === '' ? null : params.description;
  const pm = await attachedPaymentMethodParam(scope, ctx, params.default_payment_method, sub.customerId);
  if (pm !== undefined) fields.defaultPaymentMethod = pm;
  const rates = await taxRateIds(scope, params.default_tax_rates, 'default_tax_rates');
  if (rates !== undefined) fields.defaultTaxRates = rates;
  const discounts = await discountsOf(scope, params.discounts, 'discounts');
  if (discounts !== undefined) fields.discounts = discounts as unknown as Prisma.JsonValue;
  if (params.cancel_at_period_end !== undefined) {
    fields.cancelAtPeriodEnd = params.cancel_at_period_end;
    fields.cancelAt = null;
  }
  if (params.cancel_at !== undefined) {
    if (params.cancel_at !== '' && params.cancel_at <= scope.now) throw invalidRequest('`cancel_at` must be in the future.', 'parameter_invalid', 'cancel_at');
    fields.cancelAt = params.cancel_at === '' ? null : params.cancel_at;
    fields.cancelAtPeriodEnd = false;
  }
  if (params.cancellation_details !== undefined) fields.cancellationDetails = cancellationDetailsOf(sub, params.cancellation_details);
  if (params.collection_method !== undefined) fields.collectionMethod = params.collection_method;
  const collection = fields.collectionMethod ?? sub.collectionMethod;
  if (params.days_until_due !== undefined) {
    if (collection !== 'send_invoice') throw invalidRequest('`days_until_due` can only be set when `collection_method` is `send_invoice`.', 'parameter_invalid', 'days_until_due');
    fields.daysUntilDue = params.days_until_due;
  } else if (collection === 'send_invoice' && sub.daysUntilDue === null) {
    throw parameterMissing('days_until_due');
  }
  if (collection === 'charge_automatically') fields.daysUntilDue = null;
  const trialBehavior = trialMissingPaymentMethodOf(params);
  if (trialBehavior !== undefined) fields.trialMissingPaymentMethod = trialBehavior;
  const pause = pauseCollectionOf(scope, params.pause_collection);
  if (pause !== undefined) fields.pauseCollection = pause;
  return fields;
}

/** `trial_settings[end_behavior][missing_payment_method]` (the schema checks its values). */
const trialMissingPaymentMethodOf = (params: Record<string, any>): string | undefined => params.trial_settings?.end_behavior?.missing_payment_method;

/** `pause_collection` of an update: `''` clears it; `resumes_at` must be ahead (billing time). */
function pauseCollectionOf(scope: Scope, param: { behavior: PauseCollection['behavior']; resumes_at?: number } | '' | undefined): PauseCollection | null | undefined {
  if (param === undefined) return undefined;
  if (param === '') return null;
  if (param.resumes_at !== undefined && param.resumes_at <= scope.now) throw invalidRequest(PAST_TIMESTAMP, 'parameter_invalid', 'pause_collection[resumes_at]');
  return { behavior: param.behavior, resumes_at: param.resumes_at ?? null };
}

/** `trial_end` and `billing_cycle_anchor` of an update, checked before anything is written. */
export function checkPeriodParams(scope: Scope, sub: SubscriptionRow, params: Record<string, any>): void {
  const { trial_end: trialEnd, billing_cycle_anchor: anchor } = params;
  if (trialEnd === undefined && (anchor === undefined || anchor === 'unchanged')) return;
  if (sub.status === 'incomplete') {
    throw invalidRequest('A subscription whose first invoice is unpaid can only change its trial or billing cycle once it is paid.', 'parameter_invalid', trialEnd !== undefined ? 'trial_end' : 'billing_cycle_anchor');
  }
  if (typeof trialEnd === 'number') {
    if (trialEnd <= scope.now) throw invalidRequest(PAST_TIMESTAMP, 'parameter_invalid', 'trial_end');
    if (anchor === 'now') throw invalidRequest('`billing_cycle_anchor=now` can not be combined with a `trial_end` in the future.', 'parameter_invalid', 'billing_cycle_anchor');
  }
}

/**
 * An update's `trial_end` and `billing_cycle_anchor=now`, over the subscription after its other
 * changes (saved by the caller). A future `trial_end` starts or extends a trial running to it
 * (an active subscription's unused time credited, per `proration_behavior`); `trial_end=now`
 * ends a trial and `billing_cycle_anchor=now` resets the cycle: a period starts now and its
 * invoice is made and charged at once, per `payment_behavior`.
 */
async function changePeriod(scope: Scope, view: SubscriptionView, params: Record<string, any>, options: ChangeOptions): Promise<SubscriptionView> {
  const { row } = view;
  const prorating = options.prorationBehavior !== 'none' && row.status !== 'trialing';
  const trialEnd: number | 'now' | undefined = params.trial_end;
  if (typeof trialEnd === 'number') {
    if (prorating) await creditUnused(scope, view, scope.now);
    // A trial bills nothing, so there is nothing to credit until its end.
    await scope.tx.$executeRaw`UPDATE subscription_items SET billed_price_id = NULL, billed_quantity = NULL WHERE subscription_id = ${row.id}`;
    const trialing = row.status === 'trialing';
    return {
      ...view,
      items: view.items.map((i) => ({ ...i, row: { ...i.row, billedPriceId: null, billedQuantity: null } })),
      row: {
        ...row,
        status: 'trialing',
        trialStart: trialing ? row.trialStart : scope.now,
        trialEnd,
        trialWillEndSent: false,
        periodStart: trialing ? row.periodStart : scope.now,
        periodEnd: trialEnd,
        billingCycleAnchor: trialEnd,
      },
    };
  }
  const endsTrial = trialEnd === 'now' && row.status === 'trialing';
  if (!endsTrial && params.billing_cycle_anchor !== 'now') return view;
  if (prorating) await creditUnused(scope, view, scope.now);
  const deferred = options.paymentBehavior === 'default_incomplete';
  const start = scope.now;
  const trialOver = row.status === 'trialing' ? { trialEnd: start } : {};
  const { after, invoice, charge } = await startPeriod(scope, { ...view, row: { ...row, ...trialOver } }, {
    start,
    end: addInterval(start, row.interval, row.intervalCount),
    anchor: start,
    reason: 'subscription_update',
    collect: !deferred,
  });
  if (options.paymentBehavior === 'error_if_incomplete' && charge !== null) failIfIncomplete(charge);
  // An invoice left for the customer to confirm leaves the subscription `past_due` until it is paid.
  if (deferred && row.collectionMethod === 'charge_automatically' && Number(invoice.row.amountDue) > 0) return { ...after, row: { ...after.row, status: 'past_due' } };
  return after;
}

export async function updateSubscription(ctx: RequestContext) {
  const { params, deps } = ctx;
  if (params.payment_behavior === 'pending_if_incomplete') checkPendingParams(params);
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const view = await lockSubscription(tx, ctx, ctx.pathParams.subscription_exposed_id);
    const scope = requestScope(ctx, tx, await billingNow(tx, view.row.testClockId, eventTime), eventTime);
    if (view.row.status === 'canceled' || view.row.status === 'incomplete_expired') {
      const allowed = Object.keys(params).filter((k) => !['metadata', 'cancellation_details', 'expand'].includes(k));
      if (allowed.length > 0) throw invalidRequest('A canceled subscription can only update its cancellation_details and metadata.', undefined, allowed[0]);
      const details = params.cancellation_details === undefined ? view.row.cancellationDetails : cancellationDetailsOf(view.row, params.cancellation_details);
      const after = { ...view, row: { ...view.row, metadata: applyMetadata(view.row.metadata as Metadata, params.metadata), cancellationDetails: details } };
      await saveSubscriptionRow(scope, view, after);
      return { subscription: serializeSubscription(after), events: scope.events };
    }
    const fields = await fieldsOf(scope, ctx, view, params);
    const options = changeOptionsOf(params, (i, name) => `items[${i}][${name}]`);
    checkPeriodParams(scope, view.row, params);
    const { view: after } = await applyChange(scope, ctx, view, params.items ?? [], fields, options, (changed) => changePeriod(scope, changed, params, options));
    return { subscription: serializeSubscription(after), events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  await scheduleSubscriptions(deps, [result.subscription.id]);
  return result.subscription;
}

/**
 * `POST /v1/subscriptions/{id}/resume`: a `paused` subscription bills again. With
 * `billing_cycle_anchor=now` (the default) a period starts now and its invoice is made, finalized
 * and charged; with `unchanged` the period around now (on the old anchor) is the current one,
 * its remaining time prorated per `proration_behavior`. `customer.subscription.resumed`: `active`,
 * or `past_due` when the invoice's charge fails; with `payment_behavior=resume_on_payment_success`
 * a failed charge leaves it `paused` until the invoice is paid.
 */
export async function resumeSubscription(ctx: RequestContext) {
  const { params, deps } = ctx;
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const view = await lockSubscription(tx, ctx, ctx.pathParams.subscription);
    const scope = requestScope(ctx, tx, await billingNow(tx, view.row.testClockId, eventTime), eventTime);
    const { row } = view;
    if (row.status !== 'paused') {
      throw invalidRequest(`Only a subscription whose \`status\` is \`paused\` can be resumed; this subscription is \`${row.status}\`.`, undefined, 'subscription');
    }
    if (row.collectionMethod !== 'charge_automatically') {
      throw invalidRequest('Only subscriptions with `collection_method=charge_automatically` can be resumed.', undefined, 'subscription');
    }
    const behavior: string = params.proration_behavior ?? 'create_prorations';
    // `now` or `unchanged`; newer versions send it as `{type}`.
    const anchor: string = typeof params.billing_cycle_anchor === 'object' ? params.billing_cycle_anchor.type : (params.billing_cycle_anchor ?? 'now');
    let resumed: SubscriptionView;
    let charge: Charge | null = null;
    if (anchor === 'now') {
      if (params.proration_date !== undefined) throw invalidRequest('`proration_date` can only be used with `billing_cycle_anchor=unchanged`.', 'parameter_invalid', 'proration_date');
      const started = await startPeriod(scope, view, { start: scope.now, end: addInterval(scope.now, row.interval, row.intervalCount), anchor: scope.now, reason: 'subscription_update' });
      resumed = started.after;
      charge = started.charge;
    } else {
      // The period of the old cycle that surrounds now.
      const end = nextPeriodEnd(row.billingCycleAnchor, row.interval, row.intervalCount, scope.now);
      const start = Math.max(row.periodEnd, addInterval(end, row.interval, -row.intervalCount));
      const t: number = params.proration_date ?? scope.now;
      if (t < start || t > end) throw invalidRequest('`proration_date` must be within the current billing period.', 'parameter_invalid', 'proration_date');
      const current: SubscriptionView = { ...view, row: { ...row, periodStart: start, periodEnd: end } };
      let items = view.items;
      let latestInvoice = row.latestInvoice;
      if (behavior !== 'none') {
        // The rest of the period is charged (nothing was billed while paused, so nothing is credited).
        const changes: ItemChange[] = view.items.map((i) => ({ itemId: i.row.id, before: null, after: { price: i.price, quantity: i.row.quantity }, taxRates: ratesOf(i, view) }));
        const discounts = await appliedDiscounts(tx, await discountsBilled(tx, row), start);
        await insertProrations(scope, current.row, await prorationsOf(tx, changes, discounts, t, start, end), t);
        await tx.$executeRaw`UPDATE subscription_items SET billed_price_id = price_id, billed_quantity = quantity WHERE subscription_id = ${row.id}`;
        items = view.items.map((i) => ({ ...i, row: { ...i.row, billedPriceId: i.row.priceId, billedQuantity: i.row.quantity } }));
        if (behavior === 'always_invoice') {
          const lines = await pendingItemLines(tx, scope.accountId, row);
          const billed = await billSubscription(scope, current, 'subscription_update', lines, { periodStart: t, periodEnd: end, prorationDate: params.proration_date });
          latestInvoice = billed.invoice.row.id;
          charge = billed.charge;
        }
      }
      resumed = { ...current, items, row: { ...current.row, latestInvoice } };
    }
    const paid = charge === null || charge.kind === 'paid';
    // `resume_on_payment_attempt` (the default) resumes whatever the charge did (`past_due` on a
    // decline); `resume_on_payment_success` waits, paused, for the invoice to be paid.
    const waits = !paid && params.payment_behavior === 'resume_on_payment_success';
    const after: SubscriptionView = { ...resumed, row: { ...resumed.row, status: paid ? 'active' : waits ? 'paused' : 'past_due' } };
    await saveSubscriptionRow(scope, view, after);
    if (!waits) await emitIn(scope, 'customer.subscription.resumed', serializeSubscription(after));
    return { subscription: serializeSubscription(after), events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  await scheduleSubscriptions(deps, [result.subscription.id]);
  return result.subscription;
}

/**
 * Cancels at once (`DELETE`): `prorate` credits the unused time as a pending invoice item, and
 * `invoice_now` invoices what is pending in a final invoice. Emits `customer.subscription.deleted`.
 */
export async function cancelSubscription(ctx: RequestContext) {
  const { params, deps } = ctx;
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const view = await lockSubscription(tx, ctx, ctx.pathParams.subscription_exposed_id);
    if (view.row.status === 'canceled' || view.row.status === 'incomplete_expired') {
      throw invalidRequest(`No such subscription: '${view.row.id}'; it is already canceled.`, 'resource_missing', 'subscription');
    }
    const scope = requestScope(ctx, tx, await billingNow(tx, view.row.testClockId, eventTime), eventTime);
    await endSubscription(scope, view, {
      prorate: params.prorate === true,
      invoiceNow: params.invoice_now === true,
      details: { ...(cancellationDetailsOf(view.row, params.cancellation_details ?? {}) as Record<string, unknown>), reason: 'cancellation_requested' },
    });
    const after = await loadView(tx, await tx.subscription.findUniqueOrThrow({ where: { id: view.row.id } }), ctx.caller.accountId);
    return { subscription: serializeSubscription(after), events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  // An `invoice_now` invoice sent by email waits for its due date.
  await scheduleSubscriptions(deps, [result.subscription.id as string]);
  return result.subscription;
}

/** The credits of the unused time, from `t` to the period's end, of what each item was last billed; written nowhere. */
export async function unusedCredits(tx: Tx, view: SubscriptionView, t: number): Promise<Proration[]> {
  const sub = view.row;
  const changes: ItemChange[] = [];
  const billedPrices = await tx.price.findMany({ where: { id: { in: view.items.flatMap((i) => (i.row.billedPriceId ? [i.row.billedPriceId] : [])) } } });
  const byId = new Map(billedPrices.map(({ seq: _s, accountId: _a, ...p }) => [p.id, p]));
  for (const item of view.items) {
    if (!item.row.billedPriceId) continue;
    changes.push({ itemId: item.row.id, before: { price: byId.get(item.row.billedPriceId)!, quantity: item.row.billedQuantity }, after: null, taxRates: ratesOf(item, view) });
  }
  const discounts = await appliedDiscounts(tx, await discountsBilled(tx, sub), sub.periodStart);
  return prorationsOf(tx, changes, discounts, t, sub.periodStart, sub.periodEnd);
}

/** Credits the unused time as pending invoice items. */
async function creditUnused(scope: Scope, view: SubscriptionView, t: number): Promise<void> {
  await insertProrations(scope, view.row, await unusedCredits(scope.tx, view, t), t);
}

/** Ends a subscription now (a cancel, or its time to end came): `customer.subscription.deleted`. */
export async function endSubscription(scope: Scope, view: SubscriptionView, options: { prorate: boolean; invoiceNow: boolean; details: Record<string, unknown> }): Promise<void> {
  const sub = view.row;
  const t = Math.min(scope.now, sub.periodEnd);
  if (options.prorate && sub.status !== 'trialing') await creditUnused(scope, view, t);
  let latestInvoice = sub.latestInvoice;
  if (options.invoiceNow) {
    const lines = await pendingItemLines(scope.tx, scope.accountId, sub);
    if (lines.length > 0) latestInvoice = (await billSubscription(scope, view, 'subscription_cycle', lines, { periodStart: sub.periodStart, periodEnd: t })).invoice.row.id;
  }
  const after: SubscriptionView = {
    ...view,
    row: { ...sub, status: 'canceled', canceledAt: scope.now, endedAt: scope.now, cancellationDetails: options.details as Prisma.JsonValue, latestInvoice, nextActionAt: null, pendingUpdate: null },
  };
  await saveSubscriptionRow(scope, view, after, 'customer.subscription.deleted');
}

// ------------------------------------------------------------------------------------------
// Subscription items

/** An item of the caller's, with its subscription locked. */
async function lockItem(tx: Tx, ctx: RequestContext, id: string): Promise<{ view: SubscriptionView; item: ItemRow }> {
  if (!hasIdShape('si', id)) throw resourceMissing(ITEM_NAME, id);
  const item = await tx.subscriptionItem.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!item) throw resourceMissing(ITEM_NAME, id);
  const view = await lockSubscription(tx, ctx, item.subscriptionId);
  const current = view.items.find((i) => i.row.id === id);
  // Deleted while this request waited for the lock.
  if (!current) throw resourceMissing(ITEM_NAME, id);
  return { view, item: current.row };
}

const topLevel = (_i: number, name: string) => name;

/** One item's change, as a subscription update with that one item, answering the item. */
async function changeOneItem(ctx: RequestContext, subscriptionId: string | undefined, itemId: string | undefined, param: ItemParam) {
  const { params, deps } = ctx;
  if (params.payment_behavior === 'pending_if_incomplete') checkPendingParams(Object.fromEntries(Object.entries(params).filter(([k]) => k !== 'subscription')));
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const view = itemId !== undefined ? (await lockItem(tx, ctx, itemId)).view : await lockSubscription(tx, ctx, subscriptionId!, 'subscription');
    const scope = requestScope(ctx, tx, await billingNow(tx, view.row.testClockId, eventTime), eventTime);
    const { view: after, items } = await applyChange(scope, ctx, view, [param], {}, changeOptionsOf(params, topLevel));
    const target = itemId ?? items[items.length - 1].row.id;
    const planned = items.find((p) => p.row.id === target)!;
    const shown = after.items.find((i) => i.row.id === target);
    const item = shown ? serializeItem(shown, after.row) : planned.deleted ? serializeDeletedItem(target) : serializeItem({ row: planned.row, price: planned.price, taxRates: null }, after.row);
    return { item, events: scope.events, subscription: view.row.id };
  });
  await handOffEvents(deps.queues, result.events);
  await scheduleSubscriptions(deps, [result.subscription]);
  return result.item;
}

const itemParamOf = (params: Record<string, any>): ItemParam => {
  const out: ItemParam = {};
  for (const name of ['price', 'price_data', 'quantity', 'metadata', 'tax_rates', 'discounts', 'billing_thresholds', 'plan', 'clear_usage']) {
    if (params[name] !== undefined) out[name] = params[name];
  }
  return out;
};

export async function createItem(ctx: RequestContext) {
  const { params } = ctx;
  if (params.subscription === undefined) throw parameterMissing('subscription');
  if (params.price === undefined && params.plan === undefined && params.price_data === undefined) throw parameterMissing('price');
  return changeOneItem(ctx, params.subscription, undefined, itemParamOf(params));
}

export async function updateItem(ctx: RequestContext) {
  const id = ctx.pathParams.item;
  return changeOneItem(ctx, undefined, id, { ...itemParamOf(ctx.params), id });
}

export async function deleteItem(ctx: RequestContext) {
  const id = ctx.pathParams.item;
  return changeOneItem(ctx, undefined, id, { id, deleted: true, ...(ctx.params.clear_usage !== undefined ? { clear_usage: ctx.params.clear_usage } : {}) });
}

export async function retrieveItem(ctx: RequestContext) {
  const id = ctx.pathParams.item;
  const tx = ctx.deps.prisma;
  const item = hasIdShape('si', id) ? await tx.subscriptionItem.findUnique({ where: { id, accountId: ctx.caller.accountId } }) : null;
  if (!item) throw resourceMissing(ITEM_NAME, id);
  const view = await loadView(tx, await tx.subscription.findUniqueOrThrow({ where: { id: item.subscriptionId } }), ctx.caller.accountId);
  return serializeItem(view.items.find((i) => i.row.id === id)!, view.row);
}

export async function listItems(ctx: RequestContext) {
  const { params } = ctx;
  if (params.subscription === undefined) throw parameterMissing('subscription');
  const id: string = params.subscription;
  const tx = ctx.deps.prisma;
  const row = hasIdShape('sub', id) ? await tx.subscription.findUnique({ where: { id, accountId: ctx.caller.accountId } }) : null;
  if (!row) throw resourceMissing(NAME, id, 'subscription', 400);
  const view = await loadView(tx, row, ctx.caller.accountId);
  return paginateItems({
    params,
    url: '/v1/subscription_items',
    // Newest first, as every list.
    items: [...view.items].reverse().map((i) => ({ id: i.row.id, view: i })),
    objectName: ITEM_NAME,
    serialize: (i) => serializeItem(i.view, row),
  });
}

/** Applies a parked change whose invoice got paid (`customer.subscription.pending_update_applied`). */
export async function applyPendingUpdate(scope: Scope, view: SubscriptionView): Promise<SubscriptionView> {
  const pending = view.row.pendingUpdate as StoredPendingUpdate | null;
  if (!pending) return view;
  const prices = await scope.tx.price.findMany({ where: { id: { in: pending.changes.map((c) => c.priceId as string) } } });
  const byId = new Map(prices.map(({ seq: _s, accountId: _a, ...p }) => [p.id, p]));
  const planned: PlannedItem[] = pending.changes.map((c) => {
    const { isNew, deleted, billingChanged, ...row } = c as Record<string, any>;
    return { row: row as ItemRow, price: byId.get(row.priceId)!, isNew, deleted, billingChanged };
  });
  const items = await writeItems(scope, planned, true);
  const after = await viewOf(scope.tx, { ...view.row, pendingUpdate: null }, items, scope.accountId);
  await saveSubscriptionRow(scope, view, after);
  await emitIn(scope, 'customer.subscription.pending_update_applied', serializeSubscription(after), previousAttributes(serializeSubscription(view), serializeSubscription(after)));
  return after;
}
