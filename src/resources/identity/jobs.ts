import type { Queue } from 'bullmq';
import type { Config } from '../../config';
import type { Logger } from '../../lib/logger';
import { openQueue } from '../../lib/queue';
import { identityQueue } from '../../queues';

// The delayed steps of verification sessions. A job only says "look at this session now"; the
// session row says whether there is anything to do, so a lost, repeated or early job is harmless
// and the reconciler (reconcileIdentity) re-adds whatever is due.

export type IdentityJob = { sessionId: string; step: 'process' | 'redact' };

export const processingJobId = (sessionId: string, submission: number): string => `process-${sessionId}-${submission}`;
export const redactionJobId = (sessionId: string): string => `redact-${sessionId}`;

export async function addIdentityJobs(queue: Queue<IdentityJob>, jobs: { id: string; data: IdentityJob; delayMs?: number }[]): Promise<void> {
  if (jobs.length === 0) return;
  await queue.addBulk(
    jobs.map((j) => ({
      name: j.data.step,
      data: j.data,
      // Removed when done or failed, so the reconciler can add the same id again.
      opts: { jobId: j.id, delay: j.delayMs, removeOnComplete: true, removeOnFail: true },
    })),
  );
}

export class IdentityJobs {
  readonly queue: Queue<IdentityJob>;

  constructor(config: Config, private readonly logger: Logger) {
    this.queue = openQueue(identityQueue, config);
    this.queue.on('error', (err) => logger.warn({ err: err.message, queue: this.queue.name }, 'queue connection error'));
  }

  /** Queues a step; a failure only delays it until the reconciler finds it due. */
  async schedule(id: string, data: IdentityJob, delayMs: number): Promise<void> {
    try {
      await addIdentityJobs(this.queue, [{ id, data, delayMs }]);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, session: data.sessionId }, 'queueing an identity step failed; the reconciler will retry');
    }
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
