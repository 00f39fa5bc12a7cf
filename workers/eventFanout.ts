import type { Queue, Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { fanOutEvent } from '../src/events/fanout';
import { enqueueDeliveries } from '../src/events/reconcile';
import { openWorker } from '../src/lib/queue';
import { eventFanoutQueue } from '../src/queues';

/** Event → one delivery row per matching endpoint → one delivery job per row. */
export function startEventFanout(runtime: Runtime, deliveryQueue: Queue<{ deliveryId: string; attempt: number }>): Worker {
  const worker = openWorker(eventFanoutQueue, runtime.config, async (job) => {
    const deliveryIds = await fanOutEvent(runtime.prisma, job.data.eventId);
    await enqueueDeliveries(
      deliveryQueue,
      deliveryIds.map((id) => ({ id, attempts: 0 })),
    );
    return { deliveries: deliveryIds.length };
  });
  worker.on('failed', (job, err) => runtime.logger.error({ err, event: job?.data.eventId }, 'event fan-out failed'));
  return worker;
}
