import { cvcPurge } from '../../../src/resources/payments/payment_methods/jobs';

import { newTestKey, type TestApp } from '../../helpers/app';
import { createPaymentMethod } from '../../helpers/fixtures';
import { startMaintenanceTestApp, type MaintenanceTestApp } from '../../helpers/maintenanceApp';
import { until } from '../../helpers/queues';

const PURGE_CVCS = cvcPurge.name;

// The card CVC purge: the repeatable job clears CVCs past CARD_CVC_TTL_SECONDS (on the worker's
// injected clock), keeps the card, and is put back at start when Redis lost it. The purge works
// across the whole database, so this file has one of its own.

let nowMs = Date.UTC(2026, 11, 10, 12, 0, 0);
const clock = { nowMs: () => nowMs };

let m: MaintenanceTestApp;
let t: TestApp;

beforeAll(async () => {
  m = await startMaintenanceTestApp('cvc_purge', { SECRET_SWEEP_INTERVAL_MS: '200', CARD_CVC_TTL_SECONDS: '60' }, { clock });
  t = m.t;
});
afterAll(() => m.close());

const withCvc = { card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' } };

test('the repeatable job purges expired CVCs on the worker clock; a Redis that lost it gets it back at start', async () => {
  const key = newTestKey();
  const cards = [(await createPaymentMethod(t, key, withCvc)).id, (await createPaymentMethod(t, key, withCvc)).id];
  const prisma = t.runtime.prisma;
  const withCvcCount = () => prisma.paymentMethod.count({ where: { id: { in: cards }, cvc: { not: null } } });

  let running = await m.start();
  const keys = async () => (await running.queue.getJobSchedulers()).map((s) => s.key ?? s.id);
  expect(await keys()).toContain(PURGE_CVCS);
  await new Promise((r) => setTimeout(r, 600));
  expect(await withCvcCount()).toBe(2);

  nowMs += 60_000;
  await until(async () => (await withCvcCount()) === 0);
  expect(await prisma.paymentMethod.count({ where: { id: { in: cards } } })).toBe(2);

  await running.queue.removeJobScheduler(PURGE_CVCS);
  await m.stop();
  running = await m.start();
  expect(await keys()).toContain(PURGE_CVCS);
});
