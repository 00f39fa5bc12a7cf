import type { Worker } from 'bullmq';
import type { JobWorker } from '../src/kernel/route';
import type { Runtime } from '../src/runtime';
import { logFailedJobs, openWorker } from '../src/lib/queue';
import { handOffEvents } from '../src/events/jobs';

/** Runs a resource's declared worker: the job's events go to fan-out once its transaction committed. */
export function startJobWorker<P>(runtime: Runtime, declared: JobWorker<P>): Worker<P> {
  const worker = openWorker(declared.queue, runtime, async (job) => {
    const eventIds = await declared.run(runtime, job.data);
    if (eventIds.length > 0) await handOffEvents(runtime.queues, eventIds);
    return { events: eventIds.length };
  });
  logFailedJobs(worker, runtime.logger, declared.failure, declared.describe);
  return worker;
}
