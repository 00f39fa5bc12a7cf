import { createServer, type Server } from 'node:http';
import type { Queue, Worker } from 'bullmq';
import { renderMetrics, watchQueueDepth } from '../src/lib/metrics';
import { loadConfig } from '../src/config';
import { reconcile } from '../src/events/reconcile';
import { onShutdownSignal, openRuntime, prepareDatabase, type Runtime } from '../src/runtime';
import { startEventFanout } from './eventFanout';
import { startMaintenance } from './maintenance';
import { startWebhookDelivery } from './webhookDelivery';
import { startIdentityWorker } from './identity';
import { reconcileIdentity } from '../src/resources/identity/pipeline';

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
    startIdentityWorker(runtime),
  ];
  const queues: Queue[] = [maintenance.queue];
  for (const queue of [runtime.jobs.relay.queue, runtime.jobs.deliveryQueue, runtime.identity.queue, maintenance.queue]) watchQueueDepth(queue);
  const result = await reconcile(runtime.prisma, relay, deliveryQueue);
  const identity = await reconcileIdentity(runtime.prisma, runtime.identity.queue, runtime.clock.nowMs());
  runtime.logger.info({ queues: workers.map((w) => w.name), reconciled: { ...result, identity } }, 'workers started');
  return {
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(queues.map((q) => q.close()));
    },
  };
}

/** A worker on its own has no API to serve its metrics, so it serves them itself. */
export function serveWorkerMetrics(port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    renderMetrics().then(
      (m) => res.writeHead(200, { 'Content-Type': m.contentType }).end(m.body),
      () => res.writeHead(500).end(),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve(server));
  });
}

async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig());
  await prepareDatabase(runtime.config, runtime.logger);
  const workers = await startWorkers(runtime);
  const metrics = runtime.config.workerMetricsPort > 0 ? await serveWorkerMetrics(runtime.config.workerMetricsPort) : undefined;
  onShutdownSignal(runtime.logger, async () => {
    metrics?.close();
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
