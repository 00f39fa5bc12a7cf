import { PRUNE_EVENTS, PRUNE_IDEMPOTENCY, PRUNE_LINKS, startMaintenance, type Maintenance } from '../../workers/maintenance';
import { FINISHED_JOBS } from '../../src/lib/queue';
import type { Schedule } from '../../src/kernel/route';
import { schedules } from '../../src/resources';
import { cvcPurge } from '../../src/resources/payments/payment_methods/jobs';
import { secretSweep } from '../../src/resources/apps/secrets/jobs';

import type { TestApp } from '../helpers/app';
import { startMaintenanceTestApp, type MaintenanceTestApp } from '../helpers/maintenanceApp';
import { until } from '../helpers/queues';

const [PURGE_CVCS, SWEEP_SECRETS] = [cvcPurge.name, secretSweep.name];

let m: MaintenanceTestApp;
let t: TestApp;
let running: Maintenance;

beforeAll(async () => {
  m = await startMaintenanceTestApp('maintenance', { MAINTENANCE_INTERVAL_MS: '1000' });
  t = m.t;
});
afterAll(() => m.close());

test('the scheduled job prunes idempotency records past their TTL and keeps fresh ones', async () => {
  const prisma = t.runtime.prisma;
  await prisma.idempotencyRecord.createMany({
    data: [
      { accountId: 'acct_maint_old', key: 'old', fingerprint: 'f', status: 200, responseBody: '{}', createdAt: new Date(Date.now() - 25 * 3600_000) },
      { accountId: 'acct_maint_new', key: 'new', fingerprint: 'f', status: 200, responseBody: '{}' },
    ],
  });
  running = await m.start();

  const schedulers = await running.queue.getJobSchedulers();
  expect(schedulers.map((s) => s.key ?? s.id)).toEqual(expect.arrayContaining([PRUNE_IDEMPOTENCY, PRUNE_EVENTS, PRUNE_LINKS, SWEEP_SECRETS, PURGE_CVCS]));

  await until(async () => (await prisma.idempotencyRecord.count({ where: { accountId: 'acct_maint_old' } })) === 0);
  expect(await prisma.idempotencyRecord.count({ where: { accountId: 'acct_maint_new' } })).toBe(1);
});

test('starting again after Redis lost the schedule puts it back', async () => {
  const keys = async () => (await running.queue.getJobSchedulers()).map((s) => s.key ?? s.id);
  const all = await keys();
  await running.queue.removeJobScheduler(PRUNE_IDEMPOTENCY);
  expect(await keys()).toEqual(expect.not.arrayContaining([PRUNE_IDEMPOTENCY]));
  await m.stop();
  running = await m.start();
  expect((await keys()).sort()).toEqual(all.sort());
});

test('the reconciler puts back only the schedules Redis lost, without a restart', async () => {
  const keys = async () => (await running.queue.getJobSchedulers()).map((s) => s.key ?? s.id);
  const all = await keys();
  const kept = await running.queue.getJobScheduler(PRUNE_EVENTS);
  await running.queue.removeJobScheduler(PRUNE_IDEMPOTENCY);
  expect(await running.ensureSchedules()).toBe(1);
  expect((await keys()).sort()).toEqual(all.sort());
  // The others were left as they were (re-upserting would push their next run back).
  expect((await running.queue.getJobScheduler(PRUNE_EVENTS))?.next).toBe(kept?.next);
  expect(await running.ensureSchedules()).toBe(0);
});

test("finished runs don't pile up in Redis: its key count stays flat over many scheduler runs", async () => {
  // A schedule of its own every 20 ms, on the same queue and worker settings as the real ones.
  await m.stop();
  let runs = 0;
  const tick: Schedule = {
    name: 'tick',
    everyMs: () => 20,
    run: async () => {
      runs++;
      return {};
    },
  };
  const own = await startMaintenance(t.runtime, [...schedules, tick]);
  const keyCount = async () => {
    let n = 0;
    for await (const batch of t.runtime.redis.scanStream({ match: `${t.config.queuePrefix}:*`, count: 1000 })) n += (batch as string[]).length;
    return n;
  };
  try {
    await until(() => runs >= 30, 60_000, '30 runs');
    const early = await keyCount();
    await until(() => runs >= 100, 60_000, '100 runs');
    // Transient keys (a running job's lock, the stalled-jobs check, another schedule's run) come
    // and go, so the fewest of a few samples is compared. Without a cap each run leaves its job
    // hash behind (70 more keys here); with it, only those transient keys may differ.
    let late = Infinity;
    for (let i = 0; i < 5; i++) {
      late = Math.min(late, await keyCount());
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(late).toBeLessThanOrEqual(early + 4);
    expect(await own.queue.getCompletedCount()).toBeLessThanOrEqual(FINISHED_JOBS.removeOnComplete.count);
  } finally {
    await own.queue.removeJobScheduler(tick.name);
    await own.worker.close();
  }
}, 150_000);
