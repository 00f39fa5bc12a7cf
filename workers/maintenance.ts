import type { Queue, Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { IdempotencyStore } from '../src/kernel/idempotency';
import { defineQueue, openQueue, openWorker } from './queue';

// Periodic housekeeping: prunes idempotency records past their TTL. The schedule is upserted at
// every worker start, so a Redis that lost it gets it back.

export const maintenanceQueue = defineQueue<Record<string, never>>('maintenance', { concurrency: 1 });

export const PRUNE_IDEMPOTENCY = 'prune-idempotency';

export async function startMaintenance(runtime: Runtime): Promise<{ queue: Queue; worker: Worker }> {
  const store = new IdempotencyStore(runtime.prisma, runtime.config.idempotencyTtlHours);
  const queue = openQueue(maintenanceQueue, runtime.config);
  await queue.upsertJobScheduler(PRUNE_IDEMPOTENCY, { every: runtime.config.maintenanceIntervalMs }, { name: PRUNE_IDEMPOTENCY, data: {} });
  const worker = openWorker(maintenanceQueue, runtime.config, async (job) => {
    if (job.name === PRUNE_IDEMPOTENCY) {
      const pruned = await store.prune();
      if (pruned > 0) runtime.logger.info({ pruned }, 'pruned idempotency records');
      return { pruned };
    }
    throw new Error(`Unknown maintenance job ${job.name}`);
  });
  worker.on('failed', (job, err) => runtime.logger.error({ err, job: job?.name }, 'maintenance job failed'));
  return { queue, worker };
}
