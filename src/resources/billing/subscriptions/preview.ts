import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { ApiError, invalidRequest, parameterMissing, parametersExclusive, resourceMissing, unrecognizedUrl } from '../../../kernel/errors';
import { currencyOf } from '../../../lib/currencies';
import { paginateItems } from '../../../kernel/list';
import { API_VERSIONS, embed, embeddedOf } from '../../../kernel/versions';
import type { RequestContext } from '../../../kernel/route';
import { addInterval, nextPeriodEnd, priceAmount } from '../invoices/amounts';
import type { Tx } from '../../../events/emit';
import { draftInvoice, itemLines, lineRefs, requestScope, taxRatesById, type DraftLine, type InvoiceSpec, type MadeInvoice, type Scope } from '../invoices/billing';
import { oneTimePrice } from '../invoice_items/service';
import type { PriceRow } from '../prices/serializer';
import { serializeInvoice, serializeLine, type LineRefs } from '../invoices/serializer';
import { appliedDiscounts, discountsBilled, loadView, pendingItemLines, periodLines, viewOf } from './billing';
import type { SubscriptionView } from './serializer';
import { billingNow, changeOptionsOf, changeProrations, checkPeriodParams, discountsOf, newSubscription, planItems, proLine, taxRateIds, unusedCredits, type ItemParam } from './service';
import { isProductId } from '../products/serializer';

// Invoice previews (`POST /v1/invoices/create_preview`, and `GET /v1/invoices/upcoming` before
// 2025-03-31.basil): the invoice a subscription change would make, worked out by the update's
// own functions (planItems, changeProrations, unusedCredits, periodLines); the first invoice of a
// new subscription, by the create's own (newSubscription); a customer's next invoice. Written nowhere.

/** `subscription_details` as a preview takes it (`schedule_details` is not taken). */
export interface PreviewDetails {
  readonly items?: ItemParam[];
  readonly proration_date?: number;
  readonly proration_behavior?: string;
  /** A timestamp for a new subscription only. */
  readonly billing_cycle_anchor?: 'now' | 'unchanged' | number;
  readonly trial_end?: number | 'now';
  readonly default_tax_rates?: string[] | '';
}

export interface PreviewRequest {
  readonly customer?: string;
  readonly subscription?: string;
  readonly details: PreviewDetails;
  /** The invoice's discounts instead of the subscription's or customer's (a new subscription's own). */
  readonly discounts?: Record<string, string>[] | '';
  /** `invoice_items`: one-off items added to the preview (written nowhere). */
  readonly invoiceItems?: Record<string, any>[];
  /** `customer` alone previews the customer's next invoice (the upcoming invoice; create_preview before 2025-03-31.basil). */
  readonly customerAlone: boolean;
}

export interface Preview {
  readonly invoice: MadeInvoice;
  readonly refs: LineRefs;
}

const NONE_GIVEN = 'You must provide at least one of: `subscription`, `schedule`, `subscription_details.items`, `schedule_details.phases`, `invoice_items`.';

/**
 * The invoice a change of `request.subscription` would bill, as the public API's preview shows it:
 * - `billing_cycle_anchor=now` (or `trial_end=now` ending a trial): the invoice the update makes at
 *   once (the new period, the item prorations and the unused time credited, what is pending);
 * - `proration_behavior=always_invoice` with prorations: the invoice of the prorations (and what
 *   is pending) the update makes at once;
 * - otherwise the next renewal's invoice: the next period's lines after the change (at a future
 *   `trial_end`, the period that starts there) with what is pending and the change's prorations.
 */
export async function previewInvoice(ctx: RequestContext, request: PreviewRequest): Promise<Preview> {
  try {
    return await preview(ctx, request);
  } catch (error) {
    throw error instanceof ApiError ? inDetails(error) : error;
  }
}

/** The update's checks name its top-level parameters; here they sit in `subscription_details`. */
const DETAILS = new Set(['items', 'proration_date', 'proration_behavior', 'billing_cycle_anchor', 'trial_end', 'default_tax_rates']);

function inDetails(error: ApiError): ApiError {
  const root = error.param?.split('[')[0];
  if (error.param === undefined || root === undefined || !DETAILS.has(root)) return error;
  const param = `subscription_details[${root}]${error.param.slice(root.length)}`;
  const message = error.kind === 'parameter' ? error.message.split(`\`${error.param}\``).join(`\`${param}\``) : error.message;
  return new ApiError({ ...error, message, param, kind: error.kind, keepsWrites: error.keepsWrites });
}

async function preview(ctx: RequestContext, request: PreviewRequest): Promise<Preview> {
  const tx = ctx.deps.prisma;
  if (request.subscription !== undefined) {
    const id = request.subscription;
    const stored = hasIdShape('sub', id) ? await tx.subscription.findUnique({ where: { id, accountId: ctx.caller.accountId } }) : null;
    if (!stored) throw resourceMissing('subscription', id, 'subscription', 400);
    return previewChange(ctx, request, stored);
  }
  if (request.details.items !== undefined) return previewNew(ctx, request);
  if (request.customer !== undefined && (request.customerAlone || request.invoiceItems !== undefined)) return previewCustomer(ctx, request);
  throw invalidRequest(NONE_GIVEN, 'parameter_missing', 'subscription');
}

/** One of the caller's customers, by the `customer` parameter. */
async function customerOf(tx: Tx, ctx: RequestContext, id: string) {
  const customer = hasIdShape('cus', id) ? await tx.customer.findFirst({ where: { id, accountId: ctx.caller.accountId, deleted: false } }) : null;
  if (!customer) throw resourceMissing('customer', id, 'customer', 400);
  return customer;
}

/** The scope a preview works in: the customer's billing time; its events (none are written) go nowhere. */
async function previewScope(ctx: RequestContext, testClockId: string | null): Promise<Scope> {
  const eventTime = unixSeconds(ctx.deps.clock);
  return requestScope(ctx, ctx.deps.prisma, await billingNow(ctx.deps.prisma, testClockId, eventTime), eventTime);
}

/** `discounts` as the preview's invoice applies them at `at`, checked as a redemption would check them and redeemed nowhere. */
async function givenDiscounts(scope: Scope, request: PreviewRequest, at: number) {
  const stored = await discountsOf(scope, request.discounts, 'discounts', { preview: true });
  return stored === undefined ? undefined : appliedDiscounts(scope.tx, stored, at);
}

/**
 * The preview invoice of `spec`: an id no invoice has (`upcoming_in_…`, as the public API's) and
 * temporary line ids, the same for the same preview (`key`), so `GET /v1/invoices/upcoming/lines` pages by them.
 */
async function previewOf(scope: Scope, spec: InvoiceSpec, customer: Parameters<typeof draftInvoice>[1], key: string): Promise<Preview> {
  const draft = draftInvoice(spec, customer, scope.now, `upcoming_${newId('in')}`);
  const invoice = { row: draft.row, lines: draft.lines.map((l, i) => ({ ...l, id: `il_tmp_${key}${String(i).padStart(3, '0')}` })) };
  return { invoice, refs: await lineRefs(scope.tx, scope.accountId, invoice.lines, [invoice.row], scope.now) };
}

/**
 * `invoice_items`: one-off lines the preview adds after its own, as invoice items would bill them
 * (a one-time `price` × `quantity`, or `amount`, `unit_amount`/`unit_amount_decimal` × `quantity`
 * or `price_data` in `currency`, by default the invoice's), written nowhere: an inline amount's
 * price is made in memory only. Each must be in the invoice's currency.
 */
async function addedLines(scope: Scope, request: PreviewRequest, currency: string | undefined): Promise<DraftLine[]> {
  const lines: DraftLine[] = [];
  for (const [i, item] of (request.invoiceItems ?? []).entries()) {
    const at = (name: string) => `invoice_items[${i}][${name}]`;
    const given = ['price', 'price_data', 'amount', 'unit_amount', 'unit_amount_decimal'].filter((name) => item[name] !== undefined);
    if (given.length > 1) throw parametersExclusive(at(given[0]), at(given[1]));
    if (given.length === 0) throw invalidRequest('You must specify either `amount`, `price`, `price_data`, `unit_amount` or `unit_amount_decimal`.', 'parameter_missing', at('amount'));
    if (item.amount !== undefined && item.quantity !== undefined) throw parametersExclusive(at('amount'), at('quantity'));
    let price: PriceRow;
    if (item.price !== undefined) {
      price = await oneTimePrice(scope.tx, scope.accountId, item.price, at('price'));
    } else {
      const data: Record<string, any> | undefined = item.price_data;
      const named = data?.currency ?? item.currency ?? currency;
      if (named === undefined) throw parameterMissing(at('currency'));
      let productId = newId('prod');
      if (data !== undefined) {
        if (data.unit_amount !== undefined && data.unit_amount_decimal !== undefined) throw parametersExclusive(`invoice_items[${i}][price_data][unit_amount]`, `invoice_items[${i}][price_data][unit_amount_decimal]`);
        const product = isProductId(data.product) ? await scope.tx.product.findUnique({ where: { id: data.product, accountId: scope.accountId }, select: { id: true } }) : null;
        if (!product) throw resourceMissing('product', data.product, `invoice_items[${i}][price_data][product]`, 400);
        productId = product.id;
      }
      const unit = String(item.amount ?? item.unit_amount ?? item.unit_amount_decimal ?? data?.unit_amount ?? data?.unit_amount_decimal);
      price = previewPrice(currencyOf(named, data?.currency !== undefined ? `invoice_items[${i}][price_data][currency]` : at('currency')), unit, productId, scope.eventTime);
    }
    if (currency !== undefined && price.currency !== currency) {
      throw invalidRequest(`The currency of invoice_items[${i}] (${price.currency}) must match the invoice's (${currency}).`, 'parameter_invalid', at('currency'));
    }
    currency = price.currency;
    const quantity: number = item.quantity ?? 1;
    const amount = priceAmount(price, quantity);
    if (item.period !== undefined && item.period.end < item.period.start) throw invalidRequest('The period end must be at or after the period start.', 'parameter_invalid', `invoice_items[${i}][period][end]`);
    const rates = await taxRatesById(scope.tx, scope.accountId, (await taxRateIds(scope, item.tax_rates, at('tax_rates'))) ?? []);
    lines.push({
      invoiceItemId: null,
      subscriptionItemId: null,
      price,
      quantity,
      amount,
      description: item.description ?? '',
      proration: false,
      // A credit isn't discounted unless asked, as invoice items aren't.
      discountable: item.discountable ?? amount >= 0,
      periodStart: item.period?.start ?? scope.now,
      periodEnd: item.period?.end ?? scope.now,
      taxRates: [...rates.values()],
      discountAmounts: [],
    });
  }
  return lines;
}

/** The one-time price an inline amount bills at, as an invoice item's would be, kept in memory. */
const previewPrice = (currency: string, unitAmountDecimal: string, productId: string, created: number): PriceRow =>
  ({
    id: newId('price'),
    productId,
    created,
    active: false,
    type: 'one_time',
    billingScheme: 'per_unit',
    currency,
    unitAmount: /^-?\d+$/.test(unitAmountDecimal) ? BigInt(unitAmountDecimal) : null,
    unitAmountDecimal,
    customUnitAmount: null,
    recurring: null,
    tiersMode: null,
    tiers: null,
    transformQuantity: null,
    taxBehavior: null,
    lookupKey: null,
    nickname: null,
    metadata: {},
  }) as PriceRow;

/**
 * The first invoice a new subscription (`customer` and `subscription_details[items]`) would make,
 * as `POST /v1/subscriptions` makes it (newSubscription): the first period (a trial's zero lines,
 * an anchor's prorated share) and the customer's pending items, with its discounts.
 */
async function previewNew(ctx: RequestContext, request: PreviewRequest): Promise<Preview> {
  if (request.customer === undefined) throw parameterMissing('customer');
  const customer = await customerOf(ctx.deps.prisma, ctx, request.customer);
  const scope = await previewScope(ctx, customer.testClockId);
  const { details } = request;
  if (details.proration_date !== undefined) {
    throw invalidRequest('`proration_date` can only be used when previewing a change of an existing `subscription`.', 'parameter_invalid', 'proration_date');
  }
  // What names an existing item means nothing to a new subscription.
  for (const [i, item] of (details.items ?? []).entries()) {
    const named = ['id', 'deleted', 'clear_usage'].find((name) => item[name] !== undefined);
    if (named !== undefined) {
      throw invalidRequest(`\`subscription_details[items][${i}][${named}]\` can only be used when previewing a change of an existing \`subscription\`.`, 'parameter_invalid', `items[${i}][${named}]`);
    }
  }
  const made = await newSubscription(
    scope,
    ctx,
    customer,
    {
      items: details.items,
      trial_end: details.trial_end,
      // `now` is where a new subscription's cycle starts anyway.
      billing_cycle_anchor: typeof details.billing_cycle_anchor === 'number' ? details.billing_cycle_anchor : undefined,
      proration_behavior: details.proration_behavior,
      default_tax_rates: details.default_tax_rates,
      discounts: request.discounts,
    },
    { preview: true },
  );
  const spec: InvoiceSpec = {
    customerId: customer.id,
    subscription: null,
    currency: made.row.currency,
    billingReason: 'upcoming',
    periodStart: scope.now,
    periodEnd: scope.now,
    lines: [...made.lines, ...(await addedLines(scope, request, made.row.currency))],
    discounts: made.discounts,
  };
  return previewOf(scope, spec, customer, customer.id.slice(4));
}

/**
 * `customer` alone: its next invoice. The renewal of its subscription that renews soonest (one
 * that bills again: not ended, paused or ending at its period's end), else an invoice of its
 * pending items; with neither, 404 `invoice_upcoming_none`, as the public API answers.
 */
async function previewCustomer(ctx: RequestContext, request: PreviewRequest): Promise<Preview> {
  const tx = ctx.deps.prisma;
  const customer = await customerOf(tx, ctx, request.customer!);
  // From 2025-03-31.basil `invoice_items` without a subscription preview them (and what is pending) alone.
  const next = !request.customerAlone ? null : await tx.subscription.findFirst({
    where: { accountId: ctx.caller.accountId, customerId: customer.id, status: { in: ['active', 'trialing', 'past_due', 'unpaid'] }, cancelAtPeriodEnd: false },
    orderBy: [{ periodEnd: 'asc' }, { seq: 'asc' }],
  });
  if (next) return previewChange(ctx, { ...request, subscription: next.id }, next);
  const scope = await previewScope(ctx, customer.testClockId);
  const pending = await tx.invoiceItem.findMany({ where: { accountId: ctx.caller.accountId, customerId: customer.id, invoiceId: null, subscriptionId: null }, orderBy: { seq: 'asc' } });
  if (pending.length === 0 && request.invoiceItems === undefined) {
    throw new ApiError({ status: 404, code: 'invoice_upcoming_none', message: `No upcoming invoices for customer: ${customer.id}` });
  }
  // One invoice has one currency: the first pending item's (as a manual invoice takes them), else the first added one's.
  const added = await addedLines(scope, request, pending[0]?.currency);
  const currency = pending[0]?.currency ?? added[0].price.currency;
  const lines = [...(await itemLines(tx, ctx.caller.accountId, pending.filter((i) => i.currency === currency))), ...added];
  const discounts = (await givenDiscounts(scope, request, scope.now)) ?? (await appliedDiscounts(tx, await discountsBilled(tx, { discounts: [], customerId: customer.id }), scope.now));
  const spec: InvoiceSpec = { customerId: customer.id, subscription: null, currency, billingReason: 'upcoming', periodStart: scope.now, periodEnd: scope.now, lines, discounts };
  return previewOf(scope, spec, customer, customer.id.slice(4));
}

/** A change of an existing subscription (nothing changed: its next renewal). */
async function previewChange(ctx: RequestContext, request: PreviewRequest, stored: Parameters<typeof loadView>[1]): Promise<Preview> {
  const { deps, caller } = ctx;
  const tx = deps.prisma;
  const { details } = request;
  const view = await loadView(tx, stored, caller.accountId);
  const sub = view.row;
  if (request.customer !== undefined && request.customer !== sub.customerId) {
    throw invalidRequest(`The subscription ${sub.id} does not belong to the customer ${request.customer}.`, 'parameter_invalid', 'customer');
  }
  if (sub.status === 'canceled' || sub.status === 'incomplete_expired') {
    throw invalidRequest(`No upcoming invoices for subscription: ${sub.id}; it has ended.`, 'invoice_upcoming_none', 'subscription');
  }
  const eventTime = unixSeconds(deps.clock);
  const scope = requestScope(ctx, tx, await billingNow(tx, sub.testClockId, eventTime), eventTime);
  const options = changeOptionsOf(details, (i, name) => `subscription_details[items][${i}][${name}]`);
  checkPeriodParams(scope, sub, details);
  // Without `items` nothing about them changes (and there is nothing to check).
  const planned =
    details.items === undefined
      ? view.items.map((i) => ({ row: i.row, price: i.price, isNew: false, deleted: false, billingChanged: false }))
      : await planItems(scope, ctx, view, details.items, options);
  const { t, prorating, prorations } = await changeProrations(tx, caller.accountId, view, planned, options, undefined, scope.now);
  // The items as the update leaves them: those prorated are billed at their new price from then on.
  const items = planned.filter((p) => !p.deleted).map((p) => (prorating && p.billingChanged ? { ...p.row, billedPriceId: p.row.priceId, billedQuantity: p.row.quantity } : p.row));
  const after = await viewOf(tx, sub, items, caller.accountId);
  const pending = await pendingItemLines(tx, caller.accountId, sub);
  const changeLines = prorations.map((p) => proLine(p, t, sub.periodEnd));
  const credits = async (v: SubscriptionView): Promise<DraftLine[]> =>
    options.prorationBehavior !== 'none' && sub.status !== 'trialing' ? (await unusedCredits(tx, v, scope.now)).map((p) => proLine(p, scope.now, sub.periodEnd)) : [];

  let period: { start: number; end: number };
  let lines: DraftLine[];
  if (details.billing_cycle_anchor === 'now' || (details.trial_end === 'now' && sub.status === 'trialing')) {
    period = { start: scope.now, end: addInterval(scope.now, sub.interval, sub.intervalCount) };
    const next = { ...after, row: { ...sub, periodStart: period.start, periodEnd: period.end, billingCycleAnchor: period.start } };
    lines = [...(await periodLines(tx, next, period.start, period.end)), ...pending, ...changeLines, ...(await credits(after))];
  } else if (options.prorationBehavior === 'always_invoice' && prorations.length > 0) {
    period = { start: t, end: sub.periodEnd };
    lines = [...pending, ...changeLines];
  } else {
    const trialEnd = typeof details.trial_end === 'number' ? details.trial_end : null;
    const start = trialEnd ?? sub.periodEnd;
    const anchor = trialEnd ?? sub.billingCycleAnchor;
    period = { start, end: nextPeriodEnd(anchor, sub.interval, sub.intervalCount, start) };
    const next = { ...after, row: { ...sub, periodStart: period.start, periodEnd: period.end, billingCycleAnchor: anchor } };
    lines = [...(await periodLines(tx, next, period.start, period.end)), ...pending, ...changeLines, ...(trialEnd !== null ? await credits(after) : [])];
  }
  const customer = await tx.customer.findUniqueOrThrow({ where: { id: sub.customerId } });
  const spec: InvoiceSpec = {
    customerId: sub.customerId,
    subscription: sub,
    currency: sub.currency,
    billingReason: 'upcoming',
    periodStart: period.start,
    periodEnd: period.end,
    lines: [...lines, ...(await addedLines(scope, request, sub.currency))],
    discounts: (await givenDiscounts(scope, request, period.start)) ?? (await appliedDiscounts(tx, await discountsBilled(tx, sub), period.start)),
    prorationDate: prorations.length > 0 ? t : undefined,
  };
  return previewOf(scope, spec, customer, sub.id.slice(4));
}

/** `POST /v1/invoices/create_preview`. */
export async function createPreview(ctx: RequestContext) {
  const { params } = ctx;
  const { invoice, refs } = await previewInvoice(ctx, { ...requestOf(params), customerAlone: before(ctx, UPCOMING_REMOVED) });
  return serializeInvoice(invoice.row, invoice.lines, [], refs);
}

/** The version that removed `GET /v1/invoices/upcoming` and its lines, for `POST /v1/invoices/create_preview`. */
export const UPCOMING_REMOVED = '2025-03-31.basil';

/** Whether the request's version is older than `version`. */
function before(ctx: RequestContext, version: string): boolean {
  const versions: readonly string[] = API_VERSIONS;
  return versions.indexOf(ctx.apiVersion) < versions.indexOf(version);
}

/** At the removal's version and after, the public API has no such endpoint. */
function upcomingRemoved(ctx: RequestContext, path: string): void {
  if (!before(ctx, UPCOMING_REMOVED)) throw unrecognizedUrl('GET', path);
}

const requestOf = (params: Record<string, any>) => ({
  customer: params.customer as string | undefined,
  subscription: params.subscription as string | undefined,
  details: (params.subscription_details ?? {}) as PreviewDetails,
  discounts: params.discounts as PreviewRequest['discounts'],
  invoiceItems: params.invoice_items as PreviewRequest['invoiceItems'],
});

/** The preview as `GET /v1/invoices/upcoming` answered it: without an id (its parameters were upgraded to `subscription_details`). */
async function upcomingOf(ctx: RequestContext, path: string): Promise<Preview> {
  upcomingRemoved(ctx, path);
  const { params } = ctx;
  return previewInvoice(ctx, { ...requestOf(params), customerAlone: true });
}

/** `GET /v1/invoices/upcoming`, before 2025-03-31.basil. */
export async function retrieveUpcoming(ctx: RequestContext) {
  const { invoice, refs } = await upcomingOf(ctx, '/v1/invoices/upcoming');
  const object = serializeInvoice(invoice.row, invoice.lines, [], refs);
  const { id: _none, ...preview } = object;
  return embed({ ...preview, lines: { ...preview.lines, url: '/v1/invoices/upcoming/lines' } }, embeddedOf(object) ?? {});
}

/** `GET /v1/invoices/upcoming/lines`, before 2025-03-31.basil: the same preview's lines, paged. */
export async function listUpcomingLines(ctx: RequestContext) {
  const { invoice, refs } = await upcomingOf(ctx, '/v1/invoices/upcoming/lines');
  return paginateItems({ params: ctx.params, url: '/v1/invoices/upcoming/lines', items: invoice.lines, objectName: 'line item', serialize: (line) => serializeLine(line, refs) });
}
