import { paymentIntentsQueue } from '../../../src/resources/payments/payment_intents/jobs';
import { bearer, newTestKey } from '../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { form } from '../../helpers/fixtures';
import { until } from '../../helpers/queues';
import { sdkTypeProblems } from '../../helpers/sdkTypes';
import { createReceivingEndpoint, verifyAll } from '../../helpers/webhooks';

// `automatic_async` captures through the real workers: the intent succeeds at once with its
// charge captured but no balance transaction; after ASYNC_CAPTURE_DELAY_MS the worker settles
// the charge and `charge.updated` is delivered. A worker restart with a Redis that lost the job
// still settles it (the reconciler reads `due_at`), once.

const DELAY_MS = 400;

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('payment_intents', { ASYNC_CAPTURE_DELAY_MS: String(DELAY_MS), RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const post = (key: string, path: string, body: Record<string, unknown> = {}) => e.t.http().post(path).set(bearer(key)).type('form').send(form(body));
const get = (key: string, path: string) => e.t.http().get(path).set(bearer(key));
const intent = (id: string) => e.t.runtime.prisma.paymentIntent.findUniqueOrThrow({ where: { id } });
const pay = (key: string, extra: Record<string, unknown> = {}) =>
  post(key, '/v1/payment_intents', { amount: 1234, currency: 'usd', allowed_payment_method_types: ['card'], payment_method: 'pm_card_visa', confirm: true, ...extra });

test('an automatic_async capture succeeds at once; the worker settles its charge later and charge.updated is delivered', async () => {
  const key = newTestKey();
  const types = ['charge.succeeded', 'charge.updated', 'payment_intent.succeeded'];
  const hook = await createReceivingEndpoint(e.t, e.receiver, key, '/pi/async', { enabled_events: types });
  const started = Date.now();
  const res = await pay(key, { capture_method: 'automatic_async' });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'succeeded', capture_method: 'automatic_async', amount_received: 1234 });
  const charge = (await get(key, `/v1/charges/${res.body.latest_charge}`)).body;
  expect(charge).toMatchObject({ captured: true, amount_captured: 1234, balance_transaction: null });
  expect((await intent(res.body.id)).dueAt).not.toBeNull();

  await until(async () => (await get(key, `/v1/charges/${charge.id}`)).body.balance_transaction !== null, 15000, 'settlement');
  expect(Date.now() - started).toBeGreaterThanOrEqual(DELAY_MS - 50);
  expect((await get(key, `/v1/charges/${charge.id}`)).body.balance_transaction).toMatch(/^txn_/);
  expect((await intent(res.body.id)).dueAt).toBeNull();

  await until(() => e.receiver.on(hook.path).length >= 3, 15000, 'deliveries');
  const received = verifyAll(e.receiver.on(hook.path), hook.secret);
  expect(received.map((ev) => ev.type).sort()).toEqual(types);
  const updated = received.find((ev) => ev.type === 'charge.updated')!;
  expect(updated.data.previous_attributes).toEqual({ balance_transaction: null });
  expect(updated.data.object.balance_transaction).toMatch(/^txn_/);
  for (const ev of received) expect(sdkTypeProblems(ev.data.object)).toEqual([]);
  expect(updated.request).toEqual({ id: null, idempotency_key: null });
});

test('automatic and manual captures have their balance transaction at once and schedule nothing', async () => {
  const key = newTestKey();
  const automatic = (await pay(key, { capture_method: 'automatic' })).body;
  expect((await get(key, `/v1/charges/${automatic.latest_charge}`)).body.balance_transaction).toMatch(/^txn_/);
  expect((await intent(automatic.id)).dueAt).toBeNull();
  const manual = (await pay(key, { capture_method: 'manual' })).body;
  expect((await get(key, `/v1/charges/${manual.latest_charge}`)).body.balance_transaction).toBeNull();
  expect((await intent(manual.id)).dueAt).toBeNull();
  await post(key, `/v1/payment_intents/${manual.id}/capture`, {});
  expect((await get(key, `/v1/charges/${manual.latest_charge}`)).body.balance_transaction).toMatch(/^txn_/);
});

test('a worker restart with a Redis that lost the settlement jobs still settles each charge, once', async () => {
  const key = newTestKey();
  await e.stopWorkers();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await pay(key, { capture_method: 'automatic_async' })).body.latest_charge);
  const queue = e.t.runtime.queues.of(paymentIntentsQueue);
  expect(await queue.getJobCountByTypes('delayed', 'waiting')).toBeGreaterThanOrEqual(3);
  await queue.obliterate({ force: true });
  expect(await queue.getJobCountByTypes('delayed', 'waiting', 'active')).toBe(0);

  await e.startWorkers();
  for (const id of ids) await until(async () => (await get(key, `/v1/charges/${id}`)).body.balance_transaction !== null, 15000, `settlement of ${id}`);
  const events = await e.t.runtime.prisma.event.findMany({ where: { type: 'charge.updated' } });
  for (const id of ids) expect(events.filter((ev) => (ev.data as any).object.id === id)).toHaveLength(1);
});
