import { deliveryJobId } from '../../src/events/jobs';
import { bearer, newTestKey } from '../helpers/app';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { until } from '../helpers/queues';
import { createReceivingEndpoint, verifyAll } from '../helpers/webhooks';

// Disabling or deleting an endpoint cancels its pending deliveries and their retries, also when
// an attempt is in flight at that moment, and keeps pending_webhooks true.

let e: EventsTestApp;
beforeAll(async () => {
  // One retry, about two seconds after a failure; attempts may take up to five seconds.
  e = await startEventsTestApp('cancel', { WEBHOOK_RETRY_SCHEDULE: '2', WEBHOOK_TIMEOUT_MS: '5000' });
});
afterAll(() => e.close());

const prisma = () => e.t.runtime.prisma;

async function deliveryOf(eventId: string, endpointId: string) {
  const row = await prisma().webhookDelivery.findFirst({ where: { eventId, endpointId } });
  if (!row) throw new Error(`no delivery of ${eventId} to ${endpointId}`);
  return row;
}

async function pendingWebhooks(key: string, eventId: string): Promise<number> {
  const res = await e.t.http().get(`/v1/events/${eventId}`).set(bearer(key));
  expect(res.status).toBe(200);
  return res.body.pending_webhooks;
}

/** Waits until the retry that was due for this delivery has been run by the worker (and found nothing to do). */
async function retryJobGone(deliveryId: string, nextAttemptAt: Date): Promise<void> {
  await until(() => Date.now() > nextAttemptAt.getTime() + 500, 15000, 'the retry time');
  await until(async () => (await e.queues.deliveryQueue.getJob(deliveryJobId(deliveryId, 1))) === undefined, 15000, 'the retry job to run');
}

describe.each([
  ['disabling', (key: string, id: string) => e.t.http().post(`/v1/webhook_endpoints/${id}`).set(bearer(key)).type('form').send('disabled=true')],
  ['deleting', (key: string, id: string) => e.t.http().delete(`/v1/webhook_endpoints/${id}`).set(bearer(key))],
] as const)('%s an endpoint', (what, stop) => {
  test('cancels its pending retry: no further attempt arrives, and the event counts it off', async () => {
    const key = newTestKey();
    const failing = await createReceivingEndpoint(e.t, e.receiver, key, `/cancel/${what}`);
    const healthy = await createReceivingEndpoint(e.t, e.receiver, key, `/cancel/${what}-healthy`);
    e.receiver.reply(failing.path, { status: 500, body: 'down' });
    const eventId = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));

    await until(async () => (await deliveryOf(eventId, failing.id).catch(() => null))?.attempts === 1, 15000, 'the first attempt');
    const waiting = await deliveryOf(eventId, failing.id);
    expect(waiting.status).toBe('pending');
    expect(waiting.nextAttemptAt).not.toBeNull();
    await until(async () => (await deliveryOf(eventId, healthy.id)).status === 'succeeded');
    expect(await pendingWebhooks(key, eventId)).toBe(1);

    const res = await stop(key, failing.id);
    expect(res.status).toBe(200);
    expect((await deliveryOf(eventId, failing.id)).status).toBe('canceled');
    expect(await pendingWebhooks(key, eventId)).toBe(0);

    await retryJobGone(waiting.id, waiting.nextAttemptAt!);
    expect(e.receiver.on(failing.path)).toHaveLength(1);
    expect(await deliveryOf(eventId, failing.id)).toMatchObject({ status: 'canceled', attempts: 1 });
    expect(await prisma().webhookAttempt.count({ where: { deliveryId: waiting.id } })).toBe(1);
    expect(await pendingWebhooks(key, eventId)).toBe(0);
  }, 30000);
});

test('an attempt in flight when the endpoint is disabled does not bring its delivery back', async () => {
  const key = newTestKey();
  // `slow` fails after a while; `slower` is still in flight when `slow` answers.
  const slow = await createReceivingEndpoint(e.t, e.receiver, key, '/cancel/in-flight');
  const slower = await createReceivingEndpoint(e.t, e.receiver, key, '/cancel/in-flight-other');
  e.receiver.reply(slow.path, { status: 500, body: 'late failure', delayMs: 1500 });
  e.receiver.reply(slower.path, { status: 200, body: 'ok', delayMs: 4000 });
  const eventId = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  await until(() => e.receiver.on(slow.path).length === 1 && e.receiver.on(slower.path).length === 1, 15000, 'both requests');
  expect(await pendingWebhooks(key, eventId)).toBe(2);

  const off = await e.t.http().post(`/v1/webhook_endpoints/${slow.id}`).set(bearer(key)).type('form').send('disabled=true');
  expect(off.status).toBe(200);
  const canceled = await deliveryOf(eventId, slow.id);
  expect(canceled.status).toBe('canceled');
  expect(await pendingWebhooks(key, eventId)).toBe(1);

  // The late answer is recorded as an attempt, but the delivery stays canceled, with no retry queued,
  // while the other delivery (still in flight) is the one pending webhook.
  await until(async () => (await prisma().webhookAttempt.count({ where: { deliveryId: canceled.id } })) === 1, 15000, 'the late attempt');
  expect(await deliveryOf(eventId, slow.id)).toMatchObject({ status: 'canceled', attempts: 0 });
  expect(await e.queues.deliveryQueue.getJob(deliveryJobId(canceled.id, 1))).toBeUndefined();
  expect((await deliveryOf(eventId, slower.id)).status).toBe('pending');
  expect(await pendingWebhooks(key, eventId)).toBe(1);

  await until(async () => (await deliveryOf(eventId, slower.id)).status === 'succeeded', 15000, 'the other delivery');
  expect(await pendingWebhooks(key, eventId)).toBe(0);
  expect(verifyAll(e.receiver.on(slow.path), slow.secret).map((ev) => ev.id)).toEqual([eventId]);
  expect(await deliveryOf(eventId, slow.id)).toMatchObject({ status: 'canceled' });
}, 30000);
