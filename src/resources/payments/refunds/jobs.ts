import { defineQueue } from '../../../lib/queue';

// The delayed step of refunds: a refund of 4000000000005126 fails some time after it was made.
// A job only says "look at this refund now": the row's `due_at` says whether anything is left to
// do, so a lost, repeated or early job is harmless, and the reconciler (reconcileRefundJobs)
// re-adds whatever the database says is due.

/** Settle the refund `id` (fail it, for the card whose refunds fail). */
export type RefundJob = { step: 'settle'; id: string };

export const refundsQueue = defineQueue<RefundJob>('refunds', { concurrency: 8 });

/** Job ids name the refund and the moment it is due, so adding one twice is harmless. */
export const settleJobId = (refundId: string, dueAt: number): string => `settle-${refundId}-${dueAt}`;
