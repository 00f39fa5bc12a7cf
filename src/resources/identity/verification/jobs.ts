import { defineQueue, type JobAdder, type JobSpec } from '../../../lib/queue';

// The delayed steps of verification sessions. A job only says "look at this session now"; the
// session row says whether there is anything to do, so a lost, repeated or early job is harmless
// and the reconciler (reconcileIdentity) re-adds whatever is due.

export type IdentityJob = { sessionId: string; step: 'process' | 'redact' };

/**
 * One step of a verification session: finish a submission's processing, or finish a redaction.
 * Job ids name the session (and submission), so adding one twice is harmless.
 */
export const identityQueue = defineQueue<IdentityJob>('identity', { concurrency: 8 });

export const processingJobId = (sessionId: string, submission: number): string => `process-${sessionId}-${submission}`;
export const redactionJobId = (sessionId: string): string => `redact-${sessionId}`;

/** Queues steps; a failure only delays them until the reconciler finds them due. */
export function scheduleIdentitySteps(queues: JobAdder, jobs: readonly JobSpec<IdentityJob>[]): Promise<boolean> {
  return queues.add(identityQueue, jobs);
}
