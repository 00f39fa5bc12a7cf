import { secretSweep } from '../../../src/resources/apps/secrets/jobs';

import { sweepExpiredSecrets } from '../../../src/resources/apps/secrets/service';
import { newTestKey, type TestApp } from '../../helpers/app';
import { createAppSecret } from '../../helpers/fixtures';
import { startMaintenanceTestApp, type MaintenanceTestApp } from '../../helpers/maintenanceApp';
import { until } from '../../helpers/queues';

const SWEEP_SECRETS = secretSweep.name;

// The expired-secret sweep: the repeatable job deletes what is past expires_at (on the worker's
// injected clock) in batches, keeps the rest, and is put back at start when Redis lost it. The
// sweep deletes across the whole database, so this file has one of its own.

let nowMs = Date.UTC(2026, 10, 25, 12, 0, 0);
const clock = { nowMs: () => nowMs };
const now = () => Math.floor(nowMs / 1000);

let m: MaintenanceTestApp;
let t: TestApp;

beforeAll(async () => {
  m = await startMaintenanceTestApp('secret_sweep', { SECRET_SWEEP_INTERVAL_MS: '200' }, { clock });
  t = m.t;
});
afterAll(() => m.close());

const createExpiring = async (key: string, names: string[]) => {
  const ids: string[] = [];
  for (const name of names) ids.push((await createAppSecret(t, key, { name, expires_at: now() + 60 })).id);
  return ids;
};

test('sweepExpiredSecrets deletes in batches everything past expires_at, and nothing else', async () => {
  const key = newTestKey();
  const expiring = await createExpiring(key, ['a', 'b', 'c', 'd', 'e']);
  const later = await createAppSecret(t, key, { name: 'later', expires_at: now() + 61 });
  const forever = await createAppSecret(t, key, { name: 'forever' });
  const prisma = t.runtime.prisma;

  expect(await sweepExpiredSecrets(prisma, now() + 59, 2)).toBe(0);
  expect(await sweepExpiredSecrets(prisma, now() + 60, 2)).toBe(5);
  expect(await prisma.appSecret.count({ where: { id: { in: expiring } } })).toBe(0);
  expect(await prisma.appSecret.count({ where: { id: { in: [later.id, forever.id] } } })).toBe(2);
  await prisma.appSecret.deleteMany({});
});

test('the repeatable job sweeps expired secrets on the worker clock; a Redis that lost it gets it back at start', async () => {
  const key = newTestKey();
  const expiring = await createExpiring(key, ['x', 'y']);
  const kept = await createAppSecret(t, key, { name: 'kept', expires_at: now() + 3600 });
  const prisma = t.runtime.prisma;

  let running = await m.start();
  const keys = async () => (await running.queue.getJobSchedulers()).map((s) => s.key ?? s.id);
  expect(await keys()).toContain(SWEEP_SECRETS);
  // Not yet expired: several sweeps run and leave everything.
  await new Promise((r) => setTimeout(r, 600));
  expect(await prisma.appSecret.count({ where: { id: { in: expiring } } })).toBe(2);

  nowMs += 60_000;
  await until(async () => (await prisma.appSecret.count({ where: { id: { in: expiring } } })) === 0);
  expect(await prisma.appSecret.count({ where: { id: kept.id } })).toBe(1);

  await running.queue.removeJobScheduler(SWEEP_SECRETS);
  expect(await keys()).not.toContain(SWEEP_SECRETS);
  await m.stop();
  running = await m.start();
  expect(await keys()).toContain(SWEEP_SECRETS);
  nowMs += 3600_000;
  await until(async () => (await prisma.appSecret.count({ where: { id: kept.id } })) === 0);
});
