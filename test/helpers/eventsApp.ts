import { startWorkers, type RunningWorkers } from '../../workers/index';
import { startTestApp, type TestApp } from './app';
import { deleteQueueKeys, privateDatabase, type PrivateDatabase } from './isolation';
import { openTestQueues } from './queues';
import { startWebhookReceiver, type WebhookReceiver } from './webhookReceiver';

// The app, its workers and a webhook receiver, on a database of the test file's own (see
// isolation.ts). `close` stops everything it started and leaves no keys behind in Redis.

export interface EventsTestApp {
  readonly t: TestApp;
  readonly receiver: WebhookReceiver;
  readonly queues: ReturnType<typeof openTestQueues>;
  /** Starts the workers in-process (reconciling once, as a worker process does at start). */
  startWorkers(): Promise<void>;
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export async function startEventsTestApp(label: string, env: Record<string, string> = {}, options: { workers?: boolean } = {}): Promise<EventsTestApp> {
  const db: PrivateDatabase = await privateDatabase(label);
  const t = await startTestApp({ DATABASE_URL: db.url, ...env });
  const receiver = await startWebhookReceiver();
  const queues = openTestQueues(t.runtime);
  let workers: RunningWorkers | undefined;
  const app: EventsTestApp = {
    t,
    receiver,
    queues,
    async startWorkers() {
      if (workers) throw new Error('the workers are already running');
      workers = await startWorkers(t.runtime);
    },
    async stopWorkers() {
      const running = workers;
      workers = undefined;
      await running?.close();
    },
    async close() {
      await app.stopWorkers();
      await queues.close();
      await receiver.close();
      await t.close();
      await deleteQueueKeys(t.config.redisUrl, t.config.queuePrefix);
      await db.drop();
    },
  };
  if (options.workers !== false) await app.startWorkers();
  return app;
}
