import { unixSeconds } from '../../../lib/clock';
import { defineQueue, type JobAdder } from '../../../lib/queue';
import type { Deps } from '../../../kernel/route';
import type { Tx } from '../../../events/emit';
import { realClockRetries } from '../invoices/queries';
import { scheduleOverdue } from '../invoices/jobs';

// Billing's delayed work. A job only says "look at this now": the subscription's
// `next_action_at` (or the test clock's `advancing` status) says whether anything is due, so a
// lost, repeated or early job is harmless, and the reconciler re-adds what is due.

export type BillingJob = { kind: 'subscription' | 'test_clock' | 'invoice_retry'; id: string };

export const billingQueue = defineQueue<BillingJob>('billing', { concurrency: 8 });

/** The job that renews (or ends…) a subscription at `at`: one id per subscription and time. */
export const subscriptionJob = (id: string, at: number, nowSeconds: number) => ({
  id: `subscription-${id}-${at}`,
  data: { kind: 'subscription' as const, id },
  delayMs: Math.max(0, (at - nowSeconds) * 1000),
});

/**
 * The job that retries an invoice's declined payment at `at` (dunning): one id per invoice and due
 * time; `invoice_payment_retries.next_attempt_at` says whether it is due.
 */
export const retryJob = (invoiceId: string, at: number, nowSeconds: number) => ({
  id: `invoice_retry-${invoiceId}-${at}`,
  data: { kind: 'invoice_retry' as const, id: invoiceId },
  delayMs: Math.max(0, (at - nowSeconds) * 1000),
});

/** The job that advances a test clock to its target; one per clock and target. */
export const testClockJob = (id: string, target: number) => ({ id: `test_clock-${id}-${target}`, data: { kind: 'test_clock' as const, id } });

export function scheduleBilling(queues: JobAdder, jobs: ReturnType<typeof subscriptionJob | typeof testClockJob | typeof retryJob>[]): Promise<boolean> {
  return queues.add(billingQueue, jobs);
}

/**
 * Adds the job of each subscription's next action and its invoices' follow-up jobs: payment
 * retries, and the overdue step of those sent by email (real-clock subscriptions only). Every
 * path that bills a subscription calls it after its commit.
 */
export async function scheduleSubscriptions(deps: Pick<Deps, 'queues' | 'clock'> & { prisma: Pick<Tx, 'subscription' | '$queryRaw'> }, ids: readonly string[]): Promise<void> {
  const rows = await deps.prisma.subscription.findMany({ where: { id: { in: [...ids] }, testClockId: null, nextActionAt: { not: null } }, select: { id: true, nextActionAt: true } });
  const now = unixSeconds(deps.clock);
  if (rows.length > 0) await scheduleBilling(deps.queues, rows.map((r) => subscriptionJob(r.id, r.nextActionAt!, now)));
  await scheduleRetries(deps, { subscriptions: ids });
  await scheduleOverdue(deps, { subscriptions: ids });
}

/** Adds the job of each real-clock retry of those subscriptions' invoices, or of those invoices. */
export async function scheduleRetries(deps: Pick<Deps, 'queues' | 'clock'> & { prisma: Pick<Tx, '$queryRaw'> }, ids: { subscriptions?: readonly string[]; invoices?: readonly string[] }): Promise<void> {
  const retries = await realClockRetries(deps.prisma, ids);
  const now = unixSeconds(deps.clock);
  if (retries.length > 0) await scheduleBilling(deps.queues, retries.map((r) => retryJob(r.invoice_id, r.next_attempt_at, now)));
}
