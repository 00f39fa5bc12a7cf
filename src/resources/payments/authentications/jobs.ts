import { defineQueue, type JobSpec } from '../../../lib/queue';

// The expiry of 3-D Secure challenges left unanswered: one job per challenge, due at its
// `expires_at`. A job only says "look at this challenge now": the row says whether it is still
// pending and past due, so a lost, repeated or early job is harmless, and the reconciler
// (reconcileAuthenticationExpiries) re-adds whatever the database says is due.

/** `id`: the challenge (payment_authentications). */
export interface AuthenticationJob {
  readonly id: string;
}

export const authenticationQueue = defineQueue<AuthenticationJob>('payment-authentications', { concurrency: 8 });

/** The job id names the challenge and the moment it is due, so adding it twice is harmless. */
export const expiryJobId = (id: string, expiresAt: number): string => `expire-${id}-${expiresAt}`;

export const expiryJob = (id: string, expiresAt: number, nowMs: number): JobSpec<AuthenticationJob> => ({
  id: expiryJobId(id, expiresAt),
  data: { id },
  delayMs: Math.max(0, expiresAt * 1000 - nowMs),
});
