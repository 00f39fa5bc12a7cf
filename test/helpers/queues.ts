import type { Queue, Worker } from 'bullmq';
import { EventRelay } from '../../src/events/relay';
import { openQueue } from '../../src/lib/queue';
import { eventFanoutQueue, webhookDeliveryQueue } from '../../src/queues';
import type { Runtime } from '../../src/runtime';

/** The producers a test needs, on the app's own (random) queue prefix; `close` also empties them. */
export function openTestQueues(runtime: Runtime) {
  const fanoutQueue = openQueue(eventFanoutQueue, runtime.config);
  const relay = new EventRelay(fanoutQueue, runtime.logger);
  const deliveryQueue: Queue<{ deliveryId: string; attempt: number }> = openQueue(webhookDeliveryQueue, runtime.config);
  return {
    relay,
    fanoutQueue,
    deliveryQueue,
    async close() {
      await Promise.all([fanoutQueue.obliterate({ force: true }), deliveryQueue.obliterate({ force: true })]);
      await Promise.all([fanoutQueue.close(), deliveryQueue.close()]);
    },
  };
}

export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 15000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stops a worker a test started (maintenance, say) and empties its queue; nothing if none was. */
export async function stopWorker(running: { queue: Queue; worker: Worker } | undefined): Promise<void> {
  if (!running) return;
  await running.worker.close();
  await running.queue.obliterate({ force: true });
  await running.queue.close();
}
