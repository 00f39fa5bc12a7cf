import type { Queue, Worker } from 'bullmq';
import { loadConfig } from '../src/config';
import { reconcile } from '../src/events/reconcile';
import { onShutdownSignal, openRuntime, prepareDatabase, type Runtime } from '../src/runtime';
import { startEventFanout } from './eventFanout';
import { startMaintenance } from './maintenance';
import { startWebhookDelivery } from './webhookDelivery';

export interface RunningWorkers {
  close(): Promise<void>;
}

/** Starts every queue's worker, reconciles once, and returns a close that lets running jobs finish. */
export async function startWorkers(runtime: Runtime): Promise<RunningWorkers> {
  const { relay, deliveryQueue } = runtime.jobs;
  const maintenance = await startMaintenance(runtime, { relay, deliveryQueue });
  const workers: Worker[] = [
    maintenance.worker,
    startEventFanout(runtime, deliveryQueue),
    startWebhookDelivery(runtime, deliveryQueue),
  ];
  const queues: Queue[] = [maintenance.queue];
  const result = await reconcile(runtime.prisma, relay, deliveryQueue);
  runtime.logger.info({ queues: workers.map((w) => w.name), reconciled: result }, 'workers started');
  return {
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(queues.map((q) => q.close()));
    },
  };
}

async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig());
  await prepareDatabase(runtime.config, runtime.logger);
  const workers = await startWorkers(runtime);
  onShutdownSignal(runtime.logger, async () => {
    await workers.close();
    await runtime.close();
  });
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
