import type { Queue, Worker } from 'bullmq';
import { startMaintenance, PRUNE_EVENTS, PRUNE_IDEMPOTENCY, RECONCILE } from '../../workers/maintenance';
import { startTestApp, type TestApp } from '../helpers/app';
import { openTestQueues, stopWorker, until } from '../helpers/queues';
import { privateDatabase, type PrivateDatabase } from '../helpers/isolation';

// The maintenance worker prunes across the whole database on the real clock, which would reach
// rows other files made with injected clocks, so this file has a database of its own.

let db: PrivateDatabase;
let t: TestApp;
let running: { queue: Queue; worker: Worker } | undefined;
let queues: ReturnType<typeof openTestQueues>;

beforeAll(async () => {
  db = await privateDatabase('maintenance');
  t = await startTestApp({ DATABASE_URL: db.url, MAINTENANCE_INTERVAL_MS: '1000' });
  queues = openTestQueues(t.runtime);
});
afterAll(async () => {
  await stopWorker(running);
  await queues.close();
  await t.close();
  await db.drop();
});

test('the scheduled job prunes idempotency records past their TTL and keeps fresh ones', async () => {
  const prisma = t.runtime.prisma;
  await prisma.idempotencyRecord.createMany({
    data: [
      { accountId: 'acct_maint_old', key: 'old', fingerprint: 'f', status: 200, responseBody: '{}', createdAt: new Date(Date.now() - 25 * 3600_000) },
      { accountId: 'acct_maint_new', key: 'new', fingerprint: 'f', status: 200, responseBody: '{}' },
    ],
  });
  running = await startMaintenance(t.runtime, queues);

  const schedulers = await running.queue.getJobSchedulers();
  expect(schedulers.map((s) => s.key ?? s.id)).toEqual(expect.arrayContaining([PRUNE_IDEMPOTENCY, PRUNE_EVENTS, RECONCILE]));

  await until(async () => (await prisma.idempotencyRecord.count({ where: { accountId: 'acct_maint_old' } })) === 0);
  expect(await prisma.idempotencyRecord.count({ where: { accountId: 'acct_maint_new' } })).toBe(1);
});

test('starting again after Redis lost the schedule puts it back', async () => {
  const keys = async () => (await running!.queue.getJobSchedulers()).map((s) => s.key ?? s.id);
  const all = await keys();
  await running!.queue.removeJobScheduler(PRUNE_IDEMPOTENCY);
  expect(await keys()).toEqual(expect.not.arrayContaining([PRUNE_IDEMPOTENCY]));
  await running!.worker.close();
  await running!.queue.close();
  running = await startMaintenance(t.runtime, queues);
  expect((await keys()).sort()).toEqual(all.sort());
});
