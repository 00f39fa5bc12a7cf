import { bearer, newTestKey } from '../helpers/app';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { until } from '../helpers/queues';
import { createReceivingEndpoint, verifyWebhook } from '../helpers/webhooks';

// A shared deployment's settings: WEBHOOK_ALLOW_PRIVATE_NETWORK=false refuses private and
// loopback addresses, except for the hosts in WEBHOOK_ALLOWED_HOSTS. (The suite's
// WEBHOOK_LOOPBACK_ONLY=true still holds, so everything here stays on 127.0.0.1.)

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('destinations', {
    WEBHOOK_ALLOW_PRIVATE_NETWORK: 'false',
    WEBHOOK_ALLOWED_HOSTS: 'localhost',
    WEBHOOK_RETRY_SCHEDULE: '0',
  });
});
afterAll(() => e.close());

async function deliveredOnce(key: string) {
  const id = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  const prisma = e.t.runtime.prisma;
  await until(async () => (await prisma.webhookDelivery.count({ where: { eventId: id, status: { not: 'pending' } } })) > 0, 20000, `the delivery of ${id}`);
  return { id, delivery: await prisma.webhookDelivery.findFirstOrThrow({ where: { eventId: id } }) };
}

test('a loopback address is refused while private networks are not allowed, and nothing reaches it', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/dest/loopback');
  const { delivery } = await deliveredOnce(key);
  expect(delivery).toMatchObject({ status: 'failed', attempts: 2 });
  expect(e.receiver.on(endpoint.path)).toEqual([]);
  const attempts = (await e.t.http().get(`/sandbox/v1/webhook_endpoints/${endpoint.id}/deliveries`).set(bearer(key))).body.data;
  expect(attempts.map((a: any) => [a.attempt, a.status_code, a.response_body, a.succeeded, a.error])).toEqual([
    [2, null, null, false, 'refused: 127.0.0.1 is a loopback address (private networks are not allowed here)'],
    [1, null, null, false, 'refused: 127.0.0.1 is a loopback address (private networks are not allowed here)'],
  ]);
});

test('a host in WEBHOOK_ALLOWED_HOSTS is resolved, checked and delivered to, with its own name in the Host header', async () => {
  const key = newTestKey();
  const path = '/dest/allowed';
  const url = e.receiver.url(path).replace('//127.0.0.1:', '//localhost:');
  const res = await e.t.http().post('/v1/webhook_endpoints').set(bearer(key)).type('form').send(`url=${encodeURIComponent(url)}&enabled_events[]=*`);
  expect(res.status).toBe(200);
  const { id, delivery } = await deliveredOnce(key);
  expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1 });
  const [request] = e.receiver.on(path);
  expect(verifyWebhook(request, res.body.secret).id).toBe(id);
  expect(request.headers.host).toBe(new URL(url).host);
});
