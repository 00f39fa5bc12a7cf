import { defineQueue, type JobAdder, type QueueDefinition } from '../../../lib/queue';

// The outbound call of a forwarding request. The job carries the record's id only (its job id too,
// so adding it twice is harmless); the record says whether anything is left to do, and only a
// worker that moves it from pending to sending calls the destination.

export type ForwardingJob = { requestId: string };

// Its concurrency is a setting: each job mostly waits on a destination, and after a worker kill
// the backlog must be taken before the pickup deadlines pass (16 left 8 of 40 unsent; 64, none).
export const forwardingQueue = {
  ...defineQueue<ForwardingJob>('forwarding-request'),
  concurrencyOf: (config) => config.forwardingConcurrency,
} satisfies QueueDefinition<ForwardingJob>;

/** Queues the calls; a failure only delays them until the reconciler re-adds what is still awaited. */
export function queueForwards(queues: JobAdder, ids: readonly string[]): Promise<boolean> {
  return queues.add(
    forwardingQueue,
    ids.map((requestId) => ({ id: requestId, data: { requestId } })),
  );
}
