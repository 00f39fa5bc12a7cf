import { unixSeconds } from '../../../lib/clock';
import { defineQueue, type JobAdder } from '../../../lib/queue';
import type { Deps } from '../../../kernel/route';
import type { Tx } from '../../../events/emit';

// Billing's delayed work. A job only says "look at this now": the subscription's
// `next_action_at` (or the test clock's `advancing` status) says whether anything is due, so a
// lost, repeated or early job is harmless, and the reconciler re-adds what is due.

export type BillingJob = { kind: 'subscription' | 'test_clock'; id: string };

export const billingQueue = defineQueue<BillingJob>('billing', { concurrency: 8 });

/** The job that renews (or ends…) a subscription at `at`: one id per subscription and time. */
export const subscriptionJob = (id: string, at: number, nowSeconds: number) => ({
  id: `subscription-${id}-${at}`,
  data: { kind: 'subscription' as const, id },
  delayMs: Math.max(0, (at - nowSeconds) * 1000),
});

/** The job that advances a test clock to its target; one per clock and target. */
export const testClockJob = (id: string, target: number) => ({ id: `test_clock-${id}-${target}`, data: { kind: 'test_clock' as const, id } });

export function scheduleBilling(queues: JobAdder, jobs: ReturnType<typeof subscriptionJob | typeof testClockJob>[]): Promise<boolean> {
  return queues.add(billingQueue, jobs);
}

/** Adds the job of each subscription's next action (real-clock subscriptions only). */
export async function scheduleSubscriptions(deps: Pick<Deps, 'queues' | 'clock'> & { prisma: Pick<Tx, 'subscription'> }, ids: readonly string[]): Promise<void> {
  const rows = await deps.prisma.subscription.findMany({ where: { id: { in: [...ids] }, testClockId: null, nextActionAt: { not: null } }, select: { id: true, nextActionAt: true } });
  const now = unixSeconds(deps.clock);
  if (rows.length > 0) await scheduleBilling(deps.queues, rows.map((r) => subscriptionJob(r.id, r.nextActionAt!, now)));
}
