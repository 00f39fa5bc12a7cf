import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { ApiError, invalidRequest, resourceMissing, unrecognizedUrl } from '../../../kernel/errors';
import { paginateItems } from '../../../kernel/list';
import { API_VERSIONS, embed, embeddedOf } from '../../../kernel/versions';
import type { RequestContext } from '../../../kernel/route';
import { addInterval, nextPeriodEnd } from '../invoices/amounts';
import { draftInvoice, lineRefs, requestScope, type DraftLine, type MadeInvoice } from '../invoices/billing';
import { serializeInvoice, serializeLine, type LineRefs } from '../invoices/serializer';
import { appliedDiscounts, discountsBilled, loadView, pendingItemLines, periodLines, viewOf } from './billing';
import type { SubscriptionView } from './serializer';
import { billingNow, changeOptionsOf, changeProrations, checkPeriodParams, planItems, proLine, unusedCredits, type ItemParam } from './service';

// Invoice previews (`POST /v1/invoices/create_preview`, and `GET /v1/invoices/upcoming` before
// 2025-03-31.basil): the invoice a subscription change would make, worked out by the update's
// own functions (planItems, changeProrations, unusedCredits, periodLines) and written nowhere.

/** `subscription_details` as a preview takes it (`schedule_details` is not taken). */
export interface PreviewDetails {
  readonly items?: ItemParam[];
  readonly proration_date?: number;
  readonly proration_behavior?: string;
  readonly billing_cycle_anchor?: 'now' | 'unchanged';
  readonly trial_end?: number | 'now';
}

export interface PreviewRequest {
  readonly customer?: string;
  readonly subscription?: string;
  readonly details: PreviewDetails;
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
const DETAILS = new Set(['items', 'proration_date', 'proration_behavior', 'billing_cycle_anchor', 'trial_end']);

function inDetails(error: ApiError): ApiError {
  if (error.param === undefined || !DETAILS.has(error.param)) return error;
  const param = `subscription_details[${error.param}]`;
  const message = error.kind === 'parameter' ? error.message.split(`\`${error.param}\``).join(`\`${param}\``) : error.message;
  return new ApiError({ ...error, message, param, kind: error.kind, keepsWrites: error.keepsWrites });
}

async function preview(ctx: RequestContext, request: PreviewRequest): Promise<Preview> {
  const { deps, caller } = ctx;
  const tx = deps.prisma;
  const { details } = request;
  if (request.subscription === undefined) {
    if (details.items !== undefined) {
      throw invalidRequest('Previewing a new subscription is not supported here: name the `subscription` to preview a change of.', 'parameter_missing', 'subscription');
    }
    throw invalidRequest(NONE_GIVEN, 'parameter_missing', 'subscription');
  }
  const id = request.subscription;
  const stored = hasIdShape('sub', id) ? await tx.subscription.findUnique({ where: { id, accountId: caller.accountId } }) : null;
  if (!stored) throw resourceMissing('subscription', id, 'subscription', 400);
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
  const pending = await pendingItemLines(tx, caller.accountId, sub.id);
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
  const spec = {
    customerId: sub.customerId,
    subscription: sub,
    currency: sub.currency,
    billingReason: 'upcoming',
    periodStart: period.start,
    periodEnd: period.end,
    lines,
    discounts: await appliedDiscounts(tx, await discountsBilled(tx, sub), period.start),
    prorationDate: prorations.length > 0 ? t : undefined,
  };
  // The public API's preview ids: `upcoming_in_…`; its lines' ids are temporary, the same for
  // the same preview, so the lines of `GET /v1/invoices/upcoming/lines` page by them.
  const draft = draftInvoice(spec, customer, scope.now, `upcoming_${newId('in')}`);
  const invoice = { row: draft.row, lines: draft.lines.map((l, i) => ({ ...l, id: `il_tmp_${sub.id.slice(4)}${String(i).padStart(3, '0')}` })) };
  return { invoice, refs: await lineRefs(tx, caller.accountId, invoice.lines, [invoice.row], scope.now) };
}

/** `POST /v1/invoices/create_preview`. */
export async function createPreview(ctx: RequestContext) {
  const { params } = ctx;
  const { invoice, refs } = await previewInvoice(ctx, { customer: params.customer, subscription: params.subscription, details: params.subscription_details ?? {} });
  return serializeInvoice(invoice.row, invoice.lines, [], refs);
}

/** The version that removed `GET /v1/invoices/upcoming` and its lines, for `POST /v1/invoices/create_preview`. */
export const UPCOMING_REMOVED = '2025-03-31.basil';

/** At the removal's version and after, the public API has no such endpoint. */
function upcomingRemoved(ctx: RequestContext, path: string): void {
  const versions: readonly string[] = API_VERSIONS;
  if (versions.indexOf(ctx.apiVersion) >= versions.indexOf(UPCOMING_REMOVED)) throw unrecognizedUrl('GET', path);
}

/** The preview as `GET /v1/invoices/upcoming` answered it: without an id (its parameters were upgraded to `subscription_details`). */
async function upcomingOf(ctx: RequestContext, path: string): Promise<Preview> {
  upcomingRemoved(ctx, path);
  const { params } = ctx;
  return previewInvoice(ctx, { customer: params.customer, subscription: params.subscription, details: params.subscription_details ?? {} });
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
