import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { logFailedJobs, openWorker } from '../src/lib/queue';
import { handOffEvents } from '../src/events/jobs';
import { identityQueue } from '../src/resources/identity/jobs';
import { finishProcessing, finishRedaction } from '../src/resources/identity/pipeline';

// Runs the delayed steps of verification sessions. A step re-reads the session and does nothing
// when there is nothing left to do, so a repeated job (reconciler, retry) is harmless.

export function startIdentityWorker(runtime: Runtime): Worker {
  const worker = openWorker(identityQueue, runtime, async (job) => {
    const { sessionId, step } = job.data;
    const eventIds = step === 'process' ? await finishProcessing(runtime, sessionId) : await finishRedaction(runtime, sessionId);
    if (eventIds.length > 0) await handOffEvents(runtime.queues, eventIds);
    return { events: eventIds.length };
  });
  logFailedJobs(worker, runtime.logger, 'identity step failed', (d) => ({ session: d.sessionId }));
  return worker;
}
