import type { Queue, Worker } from 'bullmq';
import { JobQueues } from '../../src/lib/queue';
import { eventFanoutQueue, webhookDeliveryQueue } from '../../src/events/jobs';
import type { Runtime } from '../../src/runtime';

/** Producers of the test's own (another process's, say), on the app's queue prefix; `close` also empties them. */
export function openTestQueues(runtime: Runtime) {
  const producer = new JobQueues(runtime.config, runtime.logger);
  const fanoutQueue = producer.of(eventFanoutQueue);
  const deliveryQueue = producer.of(webhookDeliveryQueue);
  return {
    producer,
    fanoutQueue,
    deliveryQueue,
    async close() {
      await Promise.all([fanoutQueue.obliterate({ force: true }), deliveryQueue.obliterate({ force: true })]);
      await producer.close();
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
