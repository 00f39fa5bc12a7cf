import type { Tx } from '../../../events/emit';
import type { Deps } from '../../../kernel/route';
import { unixSeconds } from '../../../lib/clock';
import { collectInvoice, emitIn, invoiceObject, lockInvoice, lockSubscriptionRow, paymentMethodFor, type BillingDeps, type MadeInvoice, type Scope } from '../invoices/billing';
import { clearRetry, detailsOfInvoice, retryOfInvoice, saveDetails } from '../invoices/queries';
import type { RetryPolicy } from '../invoices/retries';
import type { InvoiceRow } from '../invoices/serializer';
import { loadView } from './billing';
import { invoicePaid } from './renewals';
import { systemScope } from '../invoices/billing';
import type { SubscriptionView } from './serializer';
import { endSubscription, saveSubscriptionRow } from './service';
import { scheduleRetries, scheduleSubscriptions } from './jobs';

// Dunning: a subscription invoice whose automatic charge failed is charged again on its
// platform's schedule (BILLING_RETRY_SCHEDULE, invoices/retries.ts), at
// `invoice_payment_retries.next_attempt_at`: by the billing worker's `invoice_retry` job on the
// real clock (the reconciler re-adds due ones), by its test clock's advance otherwise, in time
// order with the subscriptions' actions. A retry confirms the invoice's PaymentIntent again with
// the payment method current then; after the last one fails the policy's outcome applies.

/**
 * Runs invoice `id`'s retry if it is due by `until` (billing time), in `tx`, at billing time `at`
 * (null: its due time); answers the events written, or null when nothing was due.
 */
export async function retryDueInvoice(tx: Tx, deps: BillingDeps, id: string, until: number, at: number | null = null): Promise<string[] | null> {
  const due = await retryOfInvoice(tx, id);
  if (!due || due.nextAttemptAt > until) return null;
  // Locks as paying does: the customer, the subscription, the invoice (billing's lock order, invoices/billing.ts), then the retry.
  const made = await lockInvoice(tx, due.accountId, id);
  const retry = await retryOfInvoice(tx, id, true);
  if (!retry || retry.nextAttemptAt > until) return null;
  if (!made || made.row.status !== 'open') {
    // Paid, voided or closed since: the schedule ends without an attempt.
    await clearRetry(tx, id);
    return [];
  }
  const scope = await systemScope(tx, deps, due.accountId, at ?? retry.nextAttemptAt);
  const view = await lockedSubscription(tx, made.row);
  // The payment method as it is now: the subscription's default, else the invoice's, else the customer's.
  const paymentMethod = view?.row.defaultPaymentMethod ?? (await paymentMethodFor(tx, made.row));
  const { invoice, charge, retries } = await collectInvoice(scope, made, paymentMethod, { retries: 'retry' });
  if (charge.kind === 'paid') await invoicePaid(scope, invoice.row);
  else if (retries.exhausted) await retriesExhausted(scope, invoice, view, retries.exhausted);
  return scope.events;
}

async function lockedSubscription(tx: Tx, invoice: InvoiceRow): Promise<SubscriptionView | null> {
  if (invoice.subscriptionId === null) return null;
  if (!(await lockSubscriptionRow(tx, invoice.subscriptionId))) return null;
  const stored = await tx.subscription.findUniqueOrThrow({ where: { id: invoice.subscriptionId } });
  return loadView(tx, stored, stored.accountId);
}

/**
 * The last retry failed: the invoice is marked `uncollectible` (`invoice.marked_uncollectible`) or
 * left open, and a `past_due` subscription is `canceled` (`customer.subscription.deleted`,
 * `cancellation_details.reason: payment_failed`), `unpaid` (`customer.subscription.updated`) or
 * left `past_due`, as the policy says.
 */
async function retriesExhausted(scope: Scope, invoice: MadeInvoice, view: SubscriptionView | null, policy: RetryPolicy): Promise<void> {
  const { tx } = scope;
  if (policy.invoice === 'uncollectible') {
    const row: InvoiceRow = { ...invoice.row, status: 'uncollectible' };
    await tx.invoice.update({ where: { id: row.id }, data: { status: row.status }, select: { id: true } });
    await saveDetails(tx, scope.accountId, row.id, { ...(await detailsOfInvoice(tx, row.id)), markedUncollectibleAt: scope.now });
    await emitIn(scope, 'invoice.marked_uncollectible', await invoiceObject(tx, scope.accountId, { row, lines: invoice.lines }, scope.now, scope.deps));
  }
  // Only a subscription the failure left past_due (not one paid since by a later invoice, nor ended).
  if (view === null || view.row.status !== 'past_due' || policy.subscription === 'past_due') return;
  if (policy.subscription === 'canceled') {
    await endSubscription(scope, view, { prorate: false, invoiceNow: false, details: { comment: null, feedback: null, reason: 'payment_failed' } });
  } else {
    await saveSubscriptionRow(scope, view, { ...view, row: { ...view.row, status: 'unpaid' } });
  }
}

/** A real-clock invoice's retry job: run now if its time has come, then the next one queued. */
export async function runRetryJob(deps: Deps, id: string): Promise<string[]> {
  const now = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const retry = await retryOfInvoice(tx, id);
    if (!retry || retry.testClockId !== null) return null;
    const subscription = await tx.invoice.findUnique({ where: { id }, select: { subscriptionId: true } });
    return { events: (await retryDueInvoice(tx, deps, id, now, now)) ?? [], subscription: subscription?.subscriptionId ?? null };
  });
  if (result === null) return [];
  await scheduleRetries(deps, { invoices: [id] });
  // A canceled or reactivated subscription's next action changed.
  if (result.subscription) await scheduleSubscriptions(deps, [result.subscription]);
  return result.events;
}
