import { refundsQueue } from '../../../src/resources/payments/refunds/jobs';
import { settleRefund } from '../../../src/resources/payments/refunds/pipeline';
import { newTestKey } from '../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { pay } from '../../helpers/payments';
import { until } from '../../helpers/queues';
import { requestsOf } from '../../helpers/requests';
import { sdkTypeProblems } from '../../helpers/sdkTypes';
import { createReceivingEndpoint, verifyAll } from '../../helpers/webhooks';

// Refunds' asynchronous half through the real workers: a refund of 4000000000005126 is
// `succeeded`, then fails after REFUND_FAILURE_DELAY_MS (`expired_or_canceled_card`) with
// refund.updated, charge.refund.updated and refund.failed delivered and the charge's refunded
// amount restored; a worker restart with a Redis that lost every refund job still fails it once.

const DELAY_MS = 300;

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('refunds', { REFUND_FAILURE_DELAY_MS: String(DELAY_MS), RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const { post, get } = requestsOf(() => e.t);
const RE = '/v1/refunds';
const refundRow = (id: string) => e.t.runtime.prisma.refund.findUniqueOrThrow({ where: { id } });
const chargeRow = (id: string) => e.t.runtime.prisma.charge.findUniqueOrThrow({ where: { id } });

test('a refund of 4000000000005126 succeeds, then fails: the events are delivered, the charge can be refunded again', async () => {
  const key = newTestKey();
  const expected = ['refund.created', 'charge.refunded', 'refund.updated', 'charge.refund.updated', 'refund.failed'];
  const hook = await createReceivingEndpoint(e.t, e.receiver, key, '/refunds/all', { enabled_events: expected });
  const p = await pay(e.t, key, { card: 'refundFail', amount: 1500 });
  const started = Date.now();
  const created = await post(key, RE, { payment_intent: p.paymentIntent, amount: 1000 });
  expect(created.body).toMatchObject({ status: 'succeeded', amount: 1000 });
  expect(await chargeRow(p.charge)).toMatchObject({ amountRefunded: 1000 });
  expect((await refundRow(created.body.id)).dueAt).not.toBeNull();

  await until(async () => (await refundRow(created.body.id)).status === 'failed', 15000, 'the refund failing');
  expect(Date.now() - started).toBeGreaterThanOrEqual(DELAY_MS - 50);
  const failed = (await get(key, `${RE}/${created.body.id}`)).body;
  expect(failed).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card', amount: 1000 });
  expect(sdkTypeProblems(failed)).toEqual([]);
  expect(await refundRow(created.body.id)).toMatchObject({ dueAt: null });
  expect(await chargeRow(p.charge)).toMatchObject({ amountRefunded: 0 });

  await until(() => e.receiver.on(hook.path).length >= expected.length, 15000, 'deliveries');
  const received = verifyAll(e.receiver.on(hook.path), hook.secret);
  expect(received.map((ev) => ev.type).sort()).toEqual([...expected].sort());
  const updated = received.find((ev) => ev.type === 'charge.refund.updated')!;
  expect(updated.data.object).toEqual(failed);
  expect(updated.data.previous_attributes).toEqual({ status: 'succeeded', failure_reason: null });
  expect(updated.request).toEqual({ id: null, idempotency_key: null });
  expect(received.find((ev) => ev.type === 'refund.failed')!.data.object).toEqual(failed);

  // Its amount is back on the charge: the whole charge can be refunded (and that refund fails too).
  const again = await post(key, RE, { charge: p.charge });
  expect(again.body).toMatchObject({ amount: 1500, status: 'succeeded' });
  await until(async () => (await refundRow(again.body.id)).status === 'failed', 15000, 'the second refund failing');
  // Running the step again does nothing more.
  expect(await settleRefund(e.t.runtime, again.body.id)).toEqual([]);
  expect(await chargeRow(p.charge)).toMatchObject({ amountRefunded: 0 });
});

test('a refund of an ordinary card stays succeeded, with nothing due', async () => {
  const key = newTestKey();
  const p = await pay(e.t, key);
  const { body } = await post(key, RE, { charge: p.charge });
  expect(await refundRow(body.id)).toMatchObject({ status: 'succeeded', dueAt: null });
  await new Promise((r) => setTimeout(r, DELAY_MS * 3));
  expect((await refundRow(body.id)).status).toBe('succeeded');
});

test('a worker restart with a Redis that lost every refund job still fails the refund, once', async () => {
  const key = newTestKey();
  await e.stopWorkers();
  const p = await pay(e.t, key, { card: 'refundFail' });
  const { body } = await post(key, RE, { charge: p.charge, amount: 700 });
  const queue = e.t.runtime.queues.of(refundsQueue);
  expect(await queue.getJobCountByTypes('delayed', 'waiting')).toBeGreaterThanOrEqual(1);
  await queue.obliterate({ force: true });
  expect(await queue.getJobCountByTypes('delayed', 'waiting', 'active')).toBe(0);

  await e.startWorkers();
  await until(async () => (await refundRow(body.id)).status === 'failed', 15000, 'the refund failing');
  await new Promise((r) => setTimeout(r, 900));
  const events = await e.t.runtime.prisma.event.findMany({ where: { type: 'refund.failed' } });
  expect(events.filter((ev) => (ev.data as any).object.id === body.id)).toHaveLength(1);
  expect(await chargeRow(p.charge)).toMatchObject({ amountRefunded: 0 });
});
