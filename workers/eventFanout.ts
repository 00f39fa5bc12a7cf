import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { fanOutEvents } from '../src/events/fanout';
import { createBatcher } from '../src/lib/batcher';
import { eventFanoutQueue, eventsOf, queueFirstAttempts } from '../src/events/jobs';
import { logFailedJobs, openWorker } from '../src/lib/queue';

/** Event → one delivery row per matching endpoint → delivery jobs of up to DELIVERIES_PER_JOB rows. */
export function startEventFanout(runtime: Runtime): Worker {
  // Concurrent jobs share one statement and one addBulk. An event asked for twice in a batch
  // (relay and reconciler racing) is fanned out once; its second job finds nothing to do.
  const fanOut = createBatcher(
    async (eventIds: string[]) => {
      const byEvent = await fanOutEvents(runtime.sql, eventIds);
      // An event's deliveries stay together, so their jobs render its payload once.
      await queueFirstAttempts(runtime.queues, [...byEvent.values()].flat());
      const seen = new Set<string>();
      return eventIds.map((id) => (seen.has(id) ? 0 : (seen.add(id), byEvent.get(id)?.length ?? 0)));
    },
    { maxItems: 100 },
  );
  const worker = openWorker(eventFanoutQueue, runtime, async (job) => {
    const counts = await Promise.all(eventsOf(job.data).map((eventId) => fanOut(eventId)));
    return { deliveries: counts.reduce((a, b) => a + b, 0) };
  });
  logFailedJobs(worker, runtime.logger, 'event fan-out failed', (d) => ({ event: d.eventId, events: d.more ? d.more.length + 1 : undefined }));
  return worker;
}
