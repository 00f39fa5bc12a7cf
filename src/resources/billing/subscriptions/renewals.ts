import type { Tx } from '../../../events/emit';
import type { Deps } from '../../../kernel/route';
import { unixSeconds } from '../../../lib/clock';
import { embed, embeddedOf } from '../../../kernel/versions';
import { nextPeriodEnd } from '../invoices/amounts';
import {
  cancelInvoicePayment,
  draftInvoice,
  draftLineRefs,
  emitIn,
  lineRefs,
  lockInvoice,
  lockSubscriptionRow,
  paymentMethodFor,
  systemScope,
  withHeldEvents,
  type BillingDeps,
  type MadeInvoice,
  type Scope,
} from '../invoices/billing';
import { serializeInvoice } from '../invoices/serializer';
import type { InvoiceRow } from '../invoices/serializer';
import { loadView, lookBack, periodOf, startPeriod } from './billing';
import { serializeSubscription, type PauseCollection, type StoredPendingUpdate, type SubscriptionView } from './serializer';
import { applyPendingUpdate, endSubscription, INCOMPLETE_SECONDS, saveSubscriptionRow, TRIAL_WILL_END_SECONDS, UPCOMING_SECONDS, upcomingDue } from './service';
import { scheduleSubscriptions } from './jobs';

// A subscription's own time: renewals at each period end (an invoice made, finalized and
// charged; a trial's end; cancel-at-period-end taking effect), `cancel_at`, a parked change
// expiring, an unpaid first invoice expiring. The renewal worker runs them on the real clock; a
// test clock's advance runs them at its frozen times.

/**
 * What a subscription does when one of its invoices gets paid: a change parked until then is
 * applied, and an `incomplete` or `past_due` subscription whose latest invoice it is becomes `active`;
 * with `save_default_payment_method=on_subscription`, the card that paid (`paymentMethodId`) becomes
 * its default payment method.
 */
export async function invoicePaid(scope: Scope, invoice: InvoiceRow, paymentMethodId?: string | null): Promise<void> {
  if (invoice.subscriptionId === null) return;
  const { tx } = scope;
  if (!(await lockSubscriptionRow(tx, invoice.subscriptionId))) return;
  let view = await loadView(tx, await tx.subscription.findUniqueOrThrow({ where: { id: invoice.subscriptionId } }), scope.accountId);
  const pending = view.row.pendingUpdate as StoredPendingUpdate | null;
  if (pending?.invoice === invoice.id) view = await applyPendingUpdate(scope, view);
  let row = view.row;
  // A resumption invoice paid later (`resume_on_payment_success`): the paused subscription resumes then.
  const resumes = row.status === 'paused' && row.latestInvoice === invoice.id && invoice.billingReason === 'subscription_update';
  if ((['incomplete', 'past_due', 'unpaid'].includes(row.status) && row.latestInvoice === invoice.id) || resumes) row = { ...row, status: 'active' };
  if (paymentMethodId && view.paymentSettings?.save_default_payment_method === 'on_subscription') row = { ...row, defaultPaymentMethod: paymentMethodId };
  if (row !== view.row) await saveSubscriptionRow(scope, view, { ...view, row });
  if (resumes) await emitIn(scope, 'customer.subscription.resumed', serializeSubscription({ ...view, row }));
}

/**
 * Runs the subscription's next due action if it is due by `until` (billing time), in `tx`, with
 * the subscription locked; answers the events it wrote, or null when nothing was due.
 */
export async function stepSubscription(tx: Tx, deps: BillingDeps, id: string, until: number, apiVersion?: string): Promise<string[] | null> {
  if (!(await lockSubscriptionRow(tx, id))) return null;
  const stored = await tx.subscription.findUniqueOrThrow({ where: { id } });
  const at = stored.nextActionAt;
  if (at === null || at > until) return null;
  const scope = await systemScope(tx, deps, stored.accountId, at, apiVersion);
  const view = await loadView(tx, stored, stored.accountId);
  return withHeldEvents(scope, (held) => runDueAction(held, view, at));
}

async function runDueAction(scope: Scope, view: SubscriptionView, at: number): Promise<void> {
  const { row } = view;
  if (row.status === 'incomplete') {
    if (at < row.created + INCOMPLETE_SECONDS) return;
    // An unpaid first invoice: the subscription expires, and the invoice is voided.
    const invoice = row.latestInvoice ? await lockInvoice(scope.tx, scope.accountId, row.latestInvoice) : null;
    if (invoice && invoice.row.status === 'open') {
      await scope.tx.invoice.update({ where: { id: invoice.row.id }, data: { status: 'void', voidedAt: at }, select: { id: true } });
      await cancelInvoicePayment(scope, invoice.row.id);
      await emitIn(
        scope,
        'invoice.voided',
        serializeInvoice({ ...invoice.row, status: 'void', voidedAt: at }, invoice.lines, [], await lineRefs(scope.tx, scope.accountId, invoice.lines, [invoice.row], scope.now, scope.deps)),
      );
    }
    await saveSubscriptionRow(scope, view, { ...view, row: { ...row, status: 'incomplete_expired', endedAt: at } });
    return;
  }
  if (row.status === 'trialing' && row.trialEnd !== null && !row.trialWillEndSent && at >= row.trialEnd - TRIAL_WILL_END_SECONDS && at < row.periodEnd) {
    const after = { ...view, row: { ...row, trialWillEndSent: true } };
    await saveSubscriptionRow(scope, view, after);
    await emitIn(scope, 'customer.subscription.trial_will_end', serializeSubscription(after));
    return;
  }
  const pending = row.pendingUpdate as StoredPendingUpdate | null;
  if (pending && at >= pending.expires_at && at < row.periodEnd) {
    const after = { ...view, row: { ...row, pendingUpdate: null } };
    await saveSubscriptionRow(scope, view, after);
    await emitIn(scope, 'customer.subscription.pending_update_expired', serializeSubscription(after));
    return;
  }
  if (upcomingDue(row) && at >= row.periodEnd - UPCOMING_SECONDS && at < row.periodEnd) {
    await emitUpcoming(scope, view);
    await saveSubscriptionRow(scope, view, { ...view, row: { ...row, upcomingSentFor: row.periodEnd } });
    return;
  }
  if (row.pauseCollection?.resumes_at != null && at >= row.pauseCollection.resumes_at) {
    // `pause_collection[resumes_at]` reached: invoices are collected again from now on.
    await saveSubscriptionRow(scope, view, { ...view, row: { ...row, pauseCollection: null } });
    return;
  }
  if ((row.cancelAt !== null && at >= row.cancelAt) || (row.cancelAtPeriodEnd && at >= row.periodEnd)) {
    await endSubscription(scope, view, { prorate: false, invoiceNow: false, details: { comment: null, feedback: null, reason: 'cancellation_requested' } });
    return;
  }
  if (at >= row.periodEnd && (await trialEndsWithoutPaymentMethod(scope, view))) return;
  if (at >= row.periodEnd) await renew(scope, view);
}

/**
 * A trial ending while the customer has no payment method (neither the subscription's default
 * nor the customer's `invoice_settings.default_payment_method`), as its
 * `trial_settings[end_behavior][missing_payment_method]` says: `cancel` ends it, `pause` pauses
 * it (`customer.subscription.paused`), both without an invoice; `create_invoice` renews as usual
 * (answers false).
 */
async function trialEndsWithoutPaymentMethod(scope: Scope, view: SubscriptionView): Promise<boolean> {
  const { row } = view;
  if (row.status !== 'trialing' || row.trialMissingPaymentMethod === 'create_invoice' || row.collectionMethod !== 'charge_automatically') return false;
  if ((await paymentMethodFor(scope.tx, { defaultPaymentMethod: row.defaultPaymentMethod, customerId: row.customerId })) !== null) return false;
  if (row.trialMissingPaymentMethod === 'cancel') {
    await endSubscription(scope, view, { prorate: false, invoiceNow: false, details: { comment: null, feedback: null, reason: 'cancellation_requested' } });
    return true;
  }
  const after = { ...view, row: { ...row, status: 'paused', trialWillEndSent: true } };
  await saveSubscriptionRow(scope, view, after);
  await emitIn(scope, 'customer.subscription.paused', serializeSubscription(after));
  return true;
}

/**
 * A renewal invoice while `pause_collection` is set was made without being collected (a
 * `keep_as_draft` one stays a draft); `mark_uncollectible` and `void` then close it.
 */
async function holdCollection(scope: Scope, invoice: MadeInvoice, pause: PauseCollection): Promise<void> {
  if (pause.behavior === 'keep_as_draft') return;
  const status = pause.behavior === 'void' ? 'void' : 'uncollectible';
  const row: InvoiceRow = { ...invoice.row, status, voidedAt: status === 'void' ? scope.now : invoice.row.voidedAt };
  await scope.tx.invoice.update({ where: { id: row.id }, data: { status: row.status, voidedAt: row.voidedAt }, select: { id: true } });
  const object = serializeInvoice(row, invoice.lines, [], await lineRefs(scope.tx, scope.accountId, invoice.lines, [row], scope.now, scope.deps));
  await emitIn(scope, status === 'void' ? 'invoice.voided' : 'invoice.marked_uncollectible', object);
}

/** The period after the current one (a renewal's). */
const renewalPeriod = ({ row }: SubscriptionView) => ({ start: row.periodEnd, end: nextPeriodEnd(row.billingCycleAnchor, row.interval, row.intervalCount, row.periodEnd) });

/**
 * `invoice.upcoming`: the invoice the coming renewal will make (the next period's lines and what
 * is pending; its own period the one ending), as a draft nothing stores. Like the public API's, it has no id.
 */
async function emitUpcoming(scope: Scope, view: SubscriptionView): Promise<void> {
  const { row } = view;
  const { start, end } = renewalPeriod(view);
  const { lines, discounts } = await periodOf(scope, view, start, end);
  const customer = await scope.tx.customer.findUniqueOrThrow({ where: { id: row.customerId } });
  const spec = { customerId: row.customerId, subscription: row, currency: row.currency, billingReason: 'upcoming', ...lookBack(row, start), lines, discounts };
  const { row: draft, lines: drafted } = draftInvoice(spec, customer, scope.now, '');
  // Nothing stored refers to a draft no row holds: only its subscription's discounts and payment settings are read.
  const known = { ...draftLineRefs(lines), intents: new Map(), retries: new Map() };
  const invoice = serializeInvoice(draft, drafted, [], await lineRefs(scope.tx, scope.accountId, drafted, [draft], scope.now, undefined, known));
  const { id: _none, ...preview } = invoice;
  await emitIn(scope, 'invoice.upcoming', embed({ ...preview, lines: { ...preview.lines, url: '/v1/invoices/upcoming/lines' } }, embeddedOf(invoice) ?? {}));
}

/**
 * Starts the next period: an invoice of its lines (and the pending prorations), charged when the
 * subscription collects automatically. A trial ends; a decline makes the subscription `past_due`.
 */
async function renew(scope: Scope, view: SubscriptionView): Promise<void> {
  const { start, end } = renewalPeriod(view);
  const pause = view.row.pauseCollection;
  // An `unpaid` subscription's invoices are made and left drafts, nothing attempted (the public
  // API's: "Invoices continue to be generated each billing cycle and remain in draft state").
  const held = pause ? { paused: true, draft: pause.behavior === 'keep_as_draft' } : view.row.status === 'unpaid' ? { draft: true } : {};
  const { after, invoice } = await startPeriod(scope, view, { start, end, reason: 'subscription_cycle', ...held });
  if (pause) await holdCollection(scope, invoice, pause);
  await saveSubscriptionRow(scope, view, after);
}

/**
 * Runs what is due of a subscription on the real clock (the renewal worker's job), one action per
 * transaction, and schedules its next; subscriptions on a test clock follow the clock instead.
 */
export async function runSubscriptionJob(deps: Deps, id: string): Promise<string[]> {
  const events: string[] = [];
  // A subscription that was left alone for long catches up one period at a time; a bound keeps a job short.
  for (let i = 0; i < 100; i++) {
    const stepped = await deps.prisma.$transaction(async (tx) => {
      const row = await tx.subscription.findUnique({ where: { id }, select: { testClockId: true } });
      if (!row || row.testClockId !== null) return null;
      return stepSubscription(tx, deps, id, unixSeconds(deps.clock));
    });
    if (stepped === null) break;
    events.push(...stepped);
  }
  await scheduleSubscriptions(deps, [id]);
  return events;
}

