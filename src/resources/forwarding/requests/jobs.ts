import { defineQueue, type JobAdder } from '../../../lib/queue';

// The outbound call of a forwarding request. The job carries the record's id only (its job id too,
// so adding it twice is harmless); the record says whether anything is left to do, and only a
// worker that moves it from pending to sending calls the destination.

export type ForwardingJob = { requestId: string };

export const forwardingQueue = defineQueue<ForwardingJob>('forwarding-request', { concurrency: 16 });

/** Queues the calls; a failure only delays them until the reconciler re-adds what is still awaited. */
export function queueForwards(queues: JobAdder, ids: readonly string[]): Promise<boolean> {
  return queues.add(
    forwardingQueue,
    ids.map((requestId) => ({ id: requestId, data: { requestId } })),
  );
}
