import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { openWorker } from '../src/lib/queue';
import { identityQueue } from '../src/queues';
import { finishProcessing, finishRedaction } from '../src/resources/identity/pipeline';

// Runs the delayed steps of verification sessions. A step re-reads the session and does nothing
// when there is nothing left to do, so a repeated job (reconciler, retry) is harmless.

export function startIdentityWorker(runtime: Runtime): Worker {
  const worker = openWorker(identityQueue, runtime.config, async (job) => {
    const { sessionId, step } = job.data;
    const eventIds = step === 'process' ? await finishProcessing(runtime, sessionId) : await finishRedaction(runtime, sessionId);
    if (eventIds.length > 0) await runtime.jobs.handOffEvents(eventIds);
    return { events: eventIds.length };
  });
  worker.on('failed', (job, err) => runtime.logger.error({ err, job: job?.name, session: job?.data.sessionId }, 'identity step failed; the reconciler will retry'));
  return worker;
}
