import { loadConfig } from '../src/config';
import { onShutdownSignal, openRuntime, prepareDatabase, type Runtime } from '../src/runtime';
import { startMaintenance } from './maintenance';

export interface RunningWorkers {
  close(): Promise<void>;
}

/** Starts every queue's worker; `close` lets running jobs finish, then disconnects. */
export async function startWorkers(runtime: Runtime): Promise<RunningWorkers> {
  const started = [await startMaintenance(runtime)];
  runtime.logger.info({ queues: started.map((s) => s.queue.name) }, 'workers started');
  return {
    async close() {
      await Promise.all(started.map((s) => s.worker.close()));
      await Promise.all(started.map((s) => s.queue.close()));
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
