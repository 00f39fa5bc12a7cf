import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { fanOutEvents } from '../src/events/fanout';
import { createBatcher } from '../src/lib/batcher';
import { eventFanoutQueue, queueDeliveries } from '../src/events/jobs';
import { logFailedJobs, openWorker } from '../src/lib/queue';

/** Event → one delivery row per matching endpoint → one delivery job per row. */
export function startEventFanout(runtime: Runtime): Worker {
  // Concurrent jobs share one statement and one addBulk. An event asked for twice in a batch
  // (relay and reconciler racing) is fanned out once; its second job finds nothing to do.
  const fanOut = createBatcher(
    async (eventIds: string[]) => {
      const byEvent = await fanOutEvents(runtime.prisma, eventIds);
      const deliveryIds = [...byEvent.values()].flat();
      await queueDeliveries(
        runtime.queues,
        deliveryIds.map((id) => ({ id, attempts: 0 })),
      );
      const seen = new Set<string>();
      return eventIds.map((id) => (seen.has(id) ? 0 : (seen.add(id), byEvent.get(id)?.length ?? 0)));
    },
    { maxItems: 100 },
  );
  const worker = openWorker(eventFanoutQueue, runtime, async (job) => ({ deliveries: await fanOut(job.data.eventId) }));
  logFailedJobs(worker, runtime.logger, 'event fan-out failed', (d) => ({ event: d.eventId }));
  return worker;
}
