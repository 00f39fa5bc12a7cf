import { startMaintenance, type Maintenance } from '../../workers/maintenance';
import type { Clock } from '../../src/lib/clock';
import { startTestApp, type TestApp } from './app';
import { privateDatabase } from './isolation';
import { stopWorker } from './queues';

// The app with the maintenance worker on demand, on a database of the test file's own: the
// worker prunes and sweeps across the whole database on its clock, which would reach rows that
// other files made.

export interface MaintenanceTestApp {
  readonly t: TestApp;
  /** Starts the maintenance worker, as a worker process does at start (schedules upserted). */
  start(): Promise<Maintenance>;
  /** Stops the worker and leaves its queue in Redis, as a process that exits would. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function startMaintenanceTestApp(label: string, env: Record<string, string> = {}, options: { clock?: Clock } = {}): Promise<MaintenanceTestApp> {
  const db = await privateDatabase(label);
  const t = await startTestApp({ DATABASE_URL: db.url, ...env }, options);
  let running: Maintenance | undefined;
  return {
    t,
    async start() {
      if (running) throw new Error('the maintenance worker is already running');
      running = await startMaintenance(t.runtime);
      return running;
    },
    async stop() {
      const stopping = running;
      running = undefined;
      await stopping?.worker.close();
    },
    async close() {
      await stopWorker(running);
      await t.close();
      await db.drop();
    },
  };
}
