import { defineQueue, type JobSpec } from '../../../lib/queue';

// The delayed step of PaymentIntents: an `automatic_async` capture's settlement (its charge's
// balance transaction). A job only says "look at this intent now": its `due_at` says whether
// anything is left to do, so a lost, repeated or early job is harmless, and the reconciler
// (reconcilePaymentIntentJobs) re-adds whatever the database says is due.

export type PaymentIntentJob = { step: 'settle'; id: string };

export const paymentIntentsQueue = defineQueue<PaymentIntentJob>('payment-intents', { concurrency: 8 });

/** Job ids name the intent and the moment it is due, so adding one twice is harmless. */
export const settleJobId = (intentId: string, dueAt: number): string => `settle-${intentId}-${dueAt}`;

export const settleJob = (intentId: string, dueAt: number, delayMs?: number): JobSpec<PaymentIntentJob> => ({
  id: settleJobId(intentId, dueAt),
  data: { step: 'settle', id: intentId },
  ...(delayMs !== undefined ? { delayMs } : {}),
});
