import { fanOutEvent } from '../../../src/events/fanout';
import { loadConfig } from '../../../src/config';
import { routes } from '../../../src/resources/webhooks/webhook_deliveries/routes';
import { bearer, newTestKey } from '../../helpers/app';
import { accountOfKey, createConnectedAccount, emitTestEvent } from '../../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { form } from '../../helpers/fixtures';
import { until } from '../../helpers/queues';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { createReceivingEndpoint, verifyAll } from '../../helpers/webhooks';

// The sandbox's stand-ins for the CLI's webhook tools: resending an event to one endpoint, and
// the list of delivery attempts (its pagination and errors are also in test/events/delivery).

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('deliveries');
});
afterAll(() => e.close());

type Res = { status: number; body: any };
const resend = (key: string, eventId: string, params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  e.t.http().post(`/sandbox/v1/events/${eventId}/resend`).set(bearer(key)).set(headers).type('form').send(form(params)) as unknown as Promise<Res>;

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

const prisma = () => e.t.runtime.prisma;

async function delivered(key: string, path: string, n: number): Promise<void> {
  await until(() => e.receiver.on(path).length >= n, 15000, `${n} deliveries to ${path}`);
}

async function pendingWebhooks(key: string, eventId: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await e.t.http().get(`/v1/events/${eventId}`).set(bearer(key)).set(headers);
  expect(res.status).toBe(200);
  return res.body.pending_webhooks;
}

test('resend delivers the event to the endpoint again and answers with the new delivery', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/resend/again');
  const eventId = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  await delivered(key, endpoint.path, 1);

  const res = await resend(key, eventId, { webhook_endpoint: endpoint.id });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostSandboxEventsIdResend', 200, res.body);
  expect(res.body).toMatchObject({ object: 'webhook_delivery', event: eventId, webhook_endpoint: endpoint.id, status: 'pending', attempts: 0 });
  expect(res.body.id).toMatch(/^whdel_/);
  expect(Number.isInteger(res.body.created)).toBe(true);
  expect(Number.isInteger(res.body.next_attempt_at)).toBe(true);

  await delivered(key, endpoint.path, 2);
  expect(verifyAll(e.receiver.on(endpoint.path), endpoint.secret).map((ev) => ev.id)).toEqual([eventId, eventId]);
  await until(async () => (await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: res.body.id } })).status === 'succeeded');
  const rows = await prisma().webhookDelivery.findMany({ where: { eventId }, orderBy: { resendNumber: 'asc' } });
  expect(rows.map((r) => [r.resendNumber, r.status])).toEqual([
    [0, 'succeeded'],
    [1, 'succeeded'],
  ]);
  expect(await pendingWebhooks(key, eventId)).toBe(0);

  // The attempts list shows both, newest first.
  const list = await e.t.http().get(`/sandbox/v1/webhook_endpoints/${endpoint.id}/deliveries`).set(bearer(key));
  expectMatchesResponseSchema('GetSandboxWebhookEndpointsWebhookEndpointDeliveries', 200, list.body);
  expect(list.body.data.map((a: any) => a.delivery)).toEqual([res.body.id, rows[0].id]);
});

test('the attempts list with `event` has only that event’s attempts, and pages through them', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/by-event');
  const account = await accountOfKey(e.t.runtime, key);
  const first = await emitTestEvent(e.t.runtime, account);
  const second = await emitTestEvent(e.t.runtime, account);
  await delivered(key, endpoint.path, 2);
  expect((await resend(key, first, { webhook_endpoint: endpoint.id })).status).toBe(200);
  await delivered(key, endpoint.path, 3);
  const path = `/sandbox/v1/webhook_endpoints/${endpoint.id}/deliveries`;
  await until(async () => (await e.t.http().get(`${path}?event=${first}`).set(bearer(key))).body.data.every((a: any) => a.outcome !== 'started'));
  const ofFirst = await e.t.http().get(`${path}?event=${first}`).set(bearer(key));
  expect(ofFirst.status).toBe(200);
  expect(ofFirst.body.data.map((a: any) => [a.event, a.succeeded])).toEqual([
    [first, true],
    [first, true],
  ]);
  const page = await e.t.http().get(`${path}?event=${first}&limit=1&starting_after=${ofFirst.body.data[0].id}`).set(bearer(key));
  expect(page.body).toMatchObject({ has_more: false, data: [{ id: ofFirst.body.data[1].id }] });
  expect((await e.t.http().get(`${path}?event=${second}`).set(bearer(key))).body.data.map((a: any) => a.event)).toEqual([second]);
  expect((await e.t.http().get(`${path}?event=evt_nope`).set(bearer(key))).body.data).toEqual([]);
});

test('concurrent resends each make their own delivery', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/resend/concurrent');
  const eventId = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  await delivered(key, endpoint.path, 1);
  const answers = await Promise.all([0, 1, 2].map(() => resend(key, eventId, { webhook_endpoint: endpoint.id })));
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(3);
  await delivered(key, endpoint.path, 4);
  await until(async () => (await prisma().webhookDelivery.count({ where: { eventId, status: 'succeeded' } })) === 4);
  const numbers = (await prisma().webhookDelivery.findMany({ where: { eventId }, select: { resendNumber: true } })).map((r) => r.resendNumber);
  expect(numbers.sort()).toEqual([0, 1, 2, 3]);
  expect(await pendingWebhooks(key, eventId)).toBe(0);
});

test('a resend before fan-out is counted in pending_webhooks, and fan-out does not add a second delivery', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/resend/early');
  // Slow enough that the resent delivery is still in flight while we look.
  e.receiver.reply(endpoint.path, { status: 200, body: 'ok', delayMs: 2000 });
  const eventId = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key), 'account.updated', undefined, { handOff: false });
  const res = await resend(key, eventId, { webhook_endpoint: endpoint.id });
  expect(res.status).toBe(200);
  expect(await pendingWebhooks(key, eventId)).toBe(1);

  expect(await fanOutEvent(e.t.runtime.sql, eventId)).toEqual([]);
  expect(await prisma().webhookDelivery.count({ where: { eventId } })).toBe(1);
  expect((await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: res.body.id } })).status).toBe('pending');
  expect(await pendingWebhooks(key, eventId)).toBe(1);

  await until(async () => (await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: res.body.id } })).status === 'succeeded');
  expect(await pendingWebhooks(key, eventId)).toBe(0);
  expect(verifyAll(e.receiver.on(endpoint.path), endpoint.secret).map((ev) => ev.id)).toEqual([eventId]);
});

test("a connect endpoint resends a connected account's event, which names the account", async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/resend/connect', { connect: true });
  const platform = await accountOfKey(e.t.runtime, key);
  const connected = await createConnectedAccount(e.t.runtime, platform);
  const theirs = await emitTestEvent(e.t.runtime, connected, 'account.updated', { id: connected, object: 'account' }, { handOff: false });
  const own = await emitTestEvent(e.t.runtime, platform, 'account.updated', undefined, { handOff: false });

  expect((await resend(key, theirs, { webhook_endpoint: endpoint.id })).status).toBe(200);
  await delivered(key, endpoint.path, 1);
  const [event] = verifyAll(e.receiver.on(endpoint.path), endpoint.secret);
  expect(event).toMatchObject({ id: theirs, account: connected });
  // The platform's own events never go to its connect endpoints.
  expectError(await resend(key, own, { webhook_endpoint: endpoint.id }), 404, { code: 'resource_missing', param: 'id' });
});

test('errors: unknown, malformed or missing endpoint; unknown or foreign event; disabled endpoint', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/resend/errors');
  const account = await accountOfKey(e.t.runtime, key);
  const eventId = await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false });
  const otherKey = newTestKey();
  const otherEndpoint = await createReceivingEndpoint(e.t, e.receiver, otherKey, '/resend/errors-other');
  const foreign = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, otherKey), 'account.updated', undefined, { handOff: false });

  for (const bad of ['we_doesnotexist', otherEndpoint.id, 'nope', 'we_\u0001']) {
    const res = await resend(key, eventId, { webhook_endpoint: bad });
    expectError(res, 400, { type: 'invalid_request_error', code: 'resource_missing', param: 'webhook_endpoint' });
  }
  expectError(await resend(key, eventId, {}), 400, { code: 'parameter_missing', param: 'webhook_endpoint' });
  for (const bad of ['evt_doesnotexist', foreign, 'nope', `${eventId}%00`]) {
    const res = await resend(key, bad, { webhook_endpoint: endpoint.id });
    expectError(res, 404, { type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
  }

  const off = await e.t.http().post(`/v1/webhook_endpoints/${endpoint.id}`).set(bearer(key)).type('form').send('disabled=true');
  expect(off.status).toBe(200);
  const disabled = await resend(key, eventId, { webhook_endpoint: endpoint.id });
  expectError(disabled, 400, { type: 'invalid_request_error', param: 'webhook_endpoint' });
  expect(disabled.body.error.message).toContain('disabled');

  // Nothing was queued or sent by any of these.
  expect(await prisma().webhookDelivery.count({ where: { eventId: { in: [eventId, foreign] } } })).toBe(0);
  expect(e.receiver.on(endpoint.path)).toEqual([]);
  expect(e.receiver.on(otherEndpoint.path)).toEqual([]);
});

test('only events from the last 30 days can be resent', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/resend/old');
  const account = await accountOfKey(e.t.runtime, key);
  const now = Math.floor(Date.now() / 1000);
  const old = await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false });
  const recent = await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false });
  await prisma().event.update({ where: { id: old }, data: { created: now - 31 * 86400 } });
  await prisma().event.update({ where: { id: recent }, data: { created: now - 29 * 86400 } });
  const refused = await resend(key, old, { webhook_endpoint: endpoint.id });
  expectError(refused, 400, { type: 'invalid_request_error', code: 'resource_invalid_state', param: 'id' });
  expect(refused.body.error.message).toContain('30 days');
  expect(await prisma().webhookDelivery.count({ where: { eventId: old } })).toBe(0);
  expect((await resend(key, recent, { webhook_endpoint: endpoint.id })).status).toBe(200);
});

test('resend declares its own rate limit, RESEND_RATE_LIMIT (off by default); the kernel enforces it (test/kernel/rateLimit)', () => {
  const limitOf = (operationId: string, env: Record<string, string>) => routes.find((r) => r.operationId === operationId)?.rateLimit?.(loadConfig(env)) ?? 0;
  expect(limitOf('PostSandboxEventsIdResend', {})).toBe(0);
  expect(limitOf('PostSandboxEventsIdResend', { RESEND_RATE_LIMIT: '2' })).toBe(2);
  // Listing attempts makes no outbound request: only the API-wide limit applies to it.
  expect(limitOf('GetSandboxWebhookEndpointsWebhookEndpointDeliveries', { RESEND_RATE_LIMIT: '2' })).toBe(0);
});
