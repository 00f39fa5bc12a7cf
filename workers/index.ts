import { createServer, type Server } from 'node:http';
import type { Worker } from 'bullmq';
import { closeWorker } from '../src/lib/queue';
import { renderMetrics, watchQueueDepth } from '../src/lib/metrics';
import { loadConfig } from '../src/config';
import { failStartup, onShutdownSignal, openRuntime, prepareDatabase, prepareSecrets, startTimes, type Runtime } from '../src/runtime';
import { jobWorkers, queueDefinitions } from '../src/resources';
import { startEventFanout } from './eventFanout';
import { startMaintenance } from './maintenance';
import { startWebhookDelivery } from './webhookDelivery';
import { startJobWorker } from './resourceWorkers';
import { startReconciler } from './reconciler';

export interface RunningWorkers {
  close(): Promise<void>;
}

/** Starts every queue's worker and the reconciler (a first pass at once), and returns a close that lets running jobs finish. */
export async function startWorkers(runtime: Runtime): Promise<RunningWorkers> {
  await runtime.encryption.ready();
  const maintenance = await startMaintenance(runtime);
  const workers: Worker[] = [maintenance.worker, startEventFanout(runtime), startWebhookDelivery(runtime), ...jobWorkers.map((w) => startJobWorker(runtime, w))];
  for (const definition of queueDefinitions) watchQueueDepth(runtime.queues.of(definition));
  watchQueueDepth(maintenance.queue);
  const reconciler = startReconciler(runtime, maintenance);
  await reconciler.runNow();
  runtime.logger.info({ queues: workers.map((w) => w.name), ...startTimes() }, 'workers started');
  return {
    async close() {
      await reconciler.stop();
      await Promise.all(workers.map((w) => closeWorker(w, runtime.logger)));
    },
  };
}

/** A worker on its own has no API to serve its metrics, so it serves them itself (on HOST, as the API). */
export function serveWorkerMetrics(port: number, host: string): Promise<Server> {
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
    server.listen(port, host, () => resolve(server));
  });
}

async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig());
  await prepareDatabase(runtime.config, runtime.logger);
  await prepareSecrets(runtime, { sealInBackground: true });
  const workers = await startWorkers(runtime);
  const { workerMetricsPort, host } = runtime.config;
  const metrics = workerMetricsPort > 0 ? await serveWorkerMetrics(workerMetricsPort, host) : undefined;
  if (metrics) runtime.logger.info({ host, port: workerMetricsPort }, 'worker metrics listening');
  onShutdownSignal(runtime.logger, async () => {
    metrics?.close();
    await workers.close();
    await runtime.close();
  });
}

if (require.main === module) {
  main().catch(failStartup);
}
