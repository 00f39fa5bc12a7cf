import type { JobWorker, Reconcile } from '../../../kernel/route';
import { runTestClockJob } from '../test_clocks/service';
import { dueRetries } from '../invoices/queries';
import { billingQueue, retryJob, scheduleBilling, subscriptionJob, testClockJob, type BillingJob } from './jobs';
import { runSubscriptionJob } from './renewals';
import { runRetryJob } from './dunning';

// The billing worker: renewals and invoices' payment retries on the real clock, and test clock
// advances. The database says what is due (`subscriptions.next_action_at`,
// `invoice_payment_retries.next_attempt_at`, clocks `advancing`); the reconciler re-adds it.

export const billingWorker: JobWorker<BillingJob> = {
  queue: billingQueue,
  run: (deps, job) => (job.kind === 'test_clock' ? runTestClockJob(deps, job.id) : job.kind === 'invoice_retry' ? runRetryJob(deps, job.id) : runSubscriptionJob(deps, job.id)),
  failure: 'billing step failed',
  describe: (job) => ({ [job.kind]: job.id }),
};

const BATCH = 500;

/** Re-adds the jobs of every real-clock subscription whose next action is due, of every due retry, and of every advancing clock. */
export const reconcileBilling: Reconcile = async ({ prisma, queues }, nowMs) => {
  const now = Math.floor(nowMs / 1000);
  let subscriptions = 0;
  for (let after = ''; ; ) {
    const due = await prisma.subscription.findMany({
      where: { testClockId: null, nextActionAt: { lte: now }, id: { gt: after } },
      orderBy: { id: 'asc' },
      take: BATCH,
      select: { id: true, nextActionAt: true },
    });
    if (due.length === 0) break;
    await scheduleBilling(queues, due.map((s) => subscriptionJob(s.id, s.nextActionAt!, now)));
    subscriptions += due.length;
    after = due[due.length - 1].id;
    if (due.length < BATCH) break;
  }
  let retries = 0;
  for (let after = ''; ; ) {
    const due = await dueRetries(prisma, now, after, BATCH);
    if (due.length === 0) break;
    await scheduleBilling(queues, due.map((r) => retryJob(r.invoice_id, r.next_attempt_at, now)));
    retries += due.length;
    after = due[due.length - 1].invoice_id;
    if (due.length < BATCH) break;
  }
  const clocks = await prisma.testClock.findMany({ where: { status: 'advancing', deleted: false }, select: { id: true, targetFrozenTime: true, frozenTime: true } });
  // A clock's job may have stopped part-way (a kill): its id names where it stands now.
  await scheduleBilling(queues, clocks.map((c) => ({ ...testClockJob(c.id, c.targetFrozenTime!), id: `test_clock-${c.id}-${c.targetFrozenTime}-${c.frozenTime}` })));
  return { billingSubscriptions: subscriptions, invoiceRetries: retries, testClocksAdvancing: clocks.length };
};
