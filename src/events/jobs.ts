import { defineQueue, type JobAdder } from '../lib/queue';

// The events area's queues. Both jobs are safe to repeat and safe to lose: the event row (not
// yet fanned out) and the delivery row (pending) are the truth, and the reconciler re-adds them.

/**
 * Hands a committed event to fan-out; the job id is the event id, so handing it twice is harmless.
 * Concurrent jobs share one statement (workers/eventFanout.ts), so more of them make fuller batches.
 */
export const eventFanoutQueue = defineQueue<{ eventId: string }>('event-fanout', { concurrency: 64 });

/** One HTTP attempt of one delivery; the job id is `<delivery id>-<attempt>`. */
export const webhookDeliveryQueue = defineQueue<{ deliveryId: string; attempt: number }>('webhook-delivery', { concurrency: 64 });

export const deliveryJobId = (deliveryId: string, attempt: number): string => `${deliveryId}-${attempt}`;

/** Hands committed events to fan-out (after their transaction commits). */
export function handOffEvents(queues: JobAdder, eventIds: readonly string[]): Promise<boolean> {
  return queues.add(
    eventFanoutQueue,
    eventIds.map((eventId) => ({ id: eventId, data: { eventId } })),
  );
}

/** Queues delivery attempts; `attempts` is the attempt the job makes (0 for the first). */
export function queueDeliveries(queues: JobAdder, deliveries: readonly { id: string; attempts: number; delayMs?: number }[]): Promise<boolean> {
  return queues.add(
    webhookDeliveryQueue,
    deliveries.map((d) => ({ id: deliveryJobId(d.id, d.attempts), data: { deliveryId: d.id, attempt: d.attempts }, delayMs: d.delayMs })),
  );
}
