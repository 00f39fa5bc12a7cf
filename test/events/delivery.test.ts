import { attemptDelivery, type DeliverySettings } from '../../src/events/delivery';
import { fanOutEvent } from '../../src/events/fanout';
import { claimDeliveries, completeAttempts, OUTCOME_UNKNOWN } from '../../src/events/queries';
import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { randomBase62 } from '../../src/lib/ids';
import { prepareSecrets } from '../../src/runtime';
import { expectNowhereAtRest } from '../helpers/atRest';
import { bearer, freePort, newTestKey } from '../helpers/app';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { until } from '../helpers/queues';
import { createReceivingEndpoint, verifyAll, verifyWebhook } from '../helpers/webhooks';

// One delivery from first attempt to its end: headers and signature, api_version rendering,
// retries along the schedule, what counts as a failure (status, redirect, timeout, refused
// connection, refused destination), and what the sandbox deliveries list and the events API say
// about it.

const TIMEOUT_MS = 500;
let e: EventsTestApp;
beforeAll(async () => {
  // Two retries right away: three attempts in all.
  e = await startEventsTestApp('delivery', { WEBHOOK_RETRY_SCHEDULE: '0,0', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
});
afterAll(() => e.close());

async function setup(path: string, params: Record<string, unknown> = {}) {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, path, params);
  const account = await accountOfKey(e.t.runtime, key);
  return { key, endpoint, account };
}

/** The one delivery of an event, once it is no longer pending. */
async function finished(eventId: string) {
  const prisma = e.t.runtime.prisma;
  await until(
    async () => (await prisma.webhookDelivery.count({ where: { eventId, status: { not: 'pending' } } })) > 0,
    20000,
    `a finished delivery of ${eventId}`,
  );
  const rows = await prisma.webhookDelivery.findMany({ where: { eventId } });
  expect(rows).toHaveLength(1);
  return rows[0];
}

async function attemptsOf(key: string, endpointId: string, query = '') {
  const res = await e.t.http().get(`/sandbox/v1/webhook_endpoints/${endpointId}/deliveries${query}`).set(bearer(key));
  expect(res.status).toBe(200);
  return res.body;
}

async function event(key: string, id: string) {
  const res = await e.t.http().get(`/v1/events/${id}`).set(bearer(key));
  expect(res.status).toBe(200);
  return res.body;
}

test('a delivery is a signed POST with the public headers that the official SDK verifies', async () => {
  const { key, endpoint, account } = await setup('/d/signed');
  const id = await emitTestEvent(e.t.runtime, account);
  expect((await finished(id)).status).toBe('succeeded');
  const [request, ...more] = e.receiver.on(endpoint.path);
  expect(more).toEqual([]);
  const verified = verifyWebhook(request, endpoint.secret);
  expect(verified.id).toBe(id);
  expect(request.headers['user-agent']).toBe('Stripe/1.0 (+https://stripe.com/docs/webhooks)');
  // The signature covers the exact body: another secret or a changed body fails verification.
  expect(() => verifyWebhook(request, 'whsec_wrong')).toThrow();
  expect(() => verifyWebhook({ ...request, body: request.body.replace(id, `${id}x`) }, endpoint.secret)).toThrow();
  // The body is the event as the API shows it, but for pending_webhooks (counted at send time).
  const { pending_webhooks: sent, ...payload } = JSON.parse(request.body);
  const { pending_webhooks: now, ...stored } = await event(key, id);
  expect(payload).toEqual(stored);
  expect(sent).toBe(1);
  expect(now).toBe(0);
  // Signed with the secret the create returned, which the row keeps only sealed.
  const row = await e.t.runtime.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
  expect(row.secret).toMatch(/^sealed:v1:/);
  expect(row.secret).not.toContain(endpoint.secret);
});

test('an endpoint an earlier version stored with its secret in plain text still delivers, before and after start-up seals it', async () => {
  const key = newTestKey();
  expect((await e.t.http().get('/v1/webhook_endpoints').set(bearer(key))).status).toBe(200);
  const account = await accountOfKey(e.t.runtime, key);
  const prisma = e.t.runtime.prisma;
  const secret = `whsec_${randomBase62(32)}`;
  const id = `we_${randomBase62(24)}`;
  await prisma.webhookEndpoint.create({
    data: { id, accountId: account, created: 1, url: e.receiver.url('/d/legacy'), enabledEvents: ['*'], status: 'enabled', secret },
  });

  const before = await emitTestEvent(e.t.runtime, account);
  expect((await finished(before)).status).toBe('succeeded');
  expect(verifyAll(e.receiver.on('/d/legacy'), secret).map((ev) => ev.id)).toEqual([before]);

  await prepareSecrets(e.t.runtime);
  const row = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } });
  expect(row.secret).toMatch(/^sealed:v1:/);
  expect(row.keyId).not.toBeNull();

  const after = await emitTestEvent(e.t.runtime, account);
  expect((await finished(after)).status).toBe('succeeded');
  expect(verifyAll(e.receiver.on('/d/legacy'), secret).map((ev) => ev.id)).toEqual([before, after]);
  await expectNowhereAtRest(e.t, secret, [id]);
});

test("an endpoint's api_version sets the payload's; without one the event's version is used", async () => {
  const key = newTestKey();
  const pinned = await createReceivingEndpoint(e.t, e.receiver, key, '/d/version-pinned', { api_version: '2025-03-31.basil' });
  const plain = await createReceivingEndpoint(e.t, e.receiver, key, '/d/version-plain');
  const account = await accountOfKey(e.t.runtime, key);
  const id = await emitTestEvent(e.t.runtime, account);
  await until(() => e.receiver.on(pinned.path).length + e.receiver.on(plain.path).length === 2);
  const [atPinned] = verifyAll(e.receiver.on(pinned.path), pinned.secret);
  const [atPlain] = verifyAll(e.receiver.on(plain.path), plain.secret);
  expect(atPinned.id).toBe(id);
  expect(atPinned.api_version).toBe('2025-03-31.basil');
  expect(atPlain.api_version).toBe(LATEST_API_VERSION);
  expect((await event(key, id)).api_version).toBe(LATEST_API_VERSION);
});

test('a receiver that fails twice then answers 200 gets three signed attempts; the delivery succeeds', async () => {
  const { key, endpoint, account } = await setup('/d/flaky');
  e.receiver.reply(
    endpoint.path,
    { status: 500, body: '{"error":"boom 1"}' },
    { status: 500, body: '{"error":"boom 2"}' },
    { status: 200, body: 'thanks' },
  );
  const id = await emitTestEvent(e.t.runtime, account);
  const delivery = await finished(id);
  expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3 });
  const received = verifyAll(e.receiver.on(endpoint.path), endpoint.secret);
  expect(received.map((ev) => ev.id)).toEqual([id, id, id]);
  expect((await event(key, id)).pending_webhooks).toBe(0);

  const list = await attemptsOf(key, endpoint.id);
  expect(list.has_more).toBe(false);
  expect(list.url).toBe(`/sandbox/v1/webhook_endpoints/${endpoint.id}/deliveries`);
  expect(
    list.data.map((a: any) => ({ attempt: a.attempt, status_code: a.status_code, response_body: a.response_body, succeeded: a.succeeded, error: a.error })),
  ).toEqual([
    { attempt: 3, status_code: 200, response_body: 'thanks', succeeded: true, error: null },
    { attempt: 2, status_code: 500, response_body: '{"error":"boom 2"}', succeeded: false, error: 'HTTP 500' },
    { attempt: 1, status_code: 500, response_body: '{"error":"boom 1"}', succeeded: false, error: 'HTTP 500' },
  ]);
  for (const a of list.data) {
    expect(a).toMatchObject({ object: 'webhook_delivery_attempt', delivery: delivery.id, event: id, webhook_endpoint: endpoint.id });
    expect(a.id).toMatch(/^whatt_/);
    expect(Number.isInteger(a.duration_ms) && a.duration_ms >= 0).toBe(true);
  }
  // Paginated, newest first.
  const first = await attemptsOf(key, endpoint.id, '?limit=2');
  expect(first.data.map((a: any) => a.attempt)).toEqual([3, 2]);
  expect(first.has_more).toBe(true);
  const rest = await attemptsOf(key, endpoint.id, `?limit=2&starting_after=${first.data[1].id}`);
  expect(rest.data.map((a: any) => a.attempt)).toEqual([1]);
  expect(rest.has_more).toBe(false);
});

test('after the last attempt of the schedule the delivery fails, and the event shows an unsuccessful delivery', async () => {
  const { key, endpoint, account } = await setup('/d/down');
  const ok = await emitTestEvent(e.t.runtime, account, 'capability.updated', { id: 'cap_x', object: 'capability' });
  expect((await finished(ok)).status).toBe('succeeded');
  e.receiver.reply(endpoint.path, { status: 503, body: 'down' });
  const id = await emitTestEvent(e.t.runtime, account);
  const delivery = await finished(id);
  expect(delivery).toMatchObject({ status: 'failed', attempts: 3 });
  expect((await event(key, id)).pending_webhooks).toBe(0);
  const attempts = (await attemptsOf(key, endpoint.id)).data.filter((a: any) => a.event === id);
  expect(attempts.map((a: any) => [a.attempt, a.status_code, a.succeeded])).toEqual([
    [3, 503, false],
    [2, 503, false],
    [1, 503, false],
  ]);

  const failing = await e.t.http().get('/v1/events?delivery_success=false').set(bearer(key));
  expect(failing.body.data.map((ev: any) => ev.id)).toEqual([id]);
  const succeeding = await e.t.http().get('/v1/events?delivery_success=true').set(bearer(key));
  expect(succeeding.body.data.map((ev: any) => ev.id)).toEqual([ok]);
});

test('any 2xx is a success; a 4xx is a failure that is retried', async () => {
  const { endpoint, account } = await setup('/d/statuses');
  e.receiver.reply(endpoint.path, { status: 404, body: 'nope' }, { status: 204 });
  const id = await emitTestEvent(e.t.runtime, account);
  expect(await finished(id)).toMatchObject({ status: 'succeeded', attempts: 2 });
  expect(verifyAll(e.receiver.on(endpoint.path), endpoint.secret).map((ev) => ev.id)).toEqual([id, id]);
});

test('a redirect is a failure and is not followed', async () => {
  const { key, endpoint, account } = await setup('/d/redirect');
  e.receiver.reply(endpoint.path, { status: 302, body: '', headers: { location: e.receiver.url('/d/redirect-target') } });
  const id = await emitTestEvent(e.t.runtime, account);
  expect(await finished(id)).toMatchObject({ status: 'failed', attempts: 3 });
  expect(e.receiver.on(endpoint.path)).toHaveLength(3);
  expect(e.receiver.on('/d/redirect-target')).toEqual([]);
  const attempts = (await attemptsOf(key, endpoint.id)).data;
  expect(attempts.map((a: any) => [a.status_code, a.succeeded, a.error])).toEqual([
    [302, false, 'HTTP 302'],
    [302, false, 'HTTP 302'],
    [302, false, 'HTTP 302'],
  ]);
});

test('a receiver slower than WEBHOOK_TIMEOUT_MS is a failure that says it timed out', async () => {
  const { key, endpoint, account } = await setup('/d/slow');
  e.receiver.reply(endpoint.path, { status: 200, body: 'late', delayMs: TIMEOUT_MS * 4 });
  const id = await emitTestEvent(e.t.runtime, account);
  expect(await finished(id)).toMatchObject({ status: 'failed', attempts: 3 });
  const attempts = (await attemptsOf(key, endpoint.id)).data;
  expect(attempts).toHaveLength(3);
  for (const a of attempts) {
    expect(a.status_code).toBeNull();
    expect(a.succeeded).toBe(false);
    expect(a.error).toMatch(/timed out/i);
    expect(a.error).toContain(String(TIMEOUT_MS));
  }
  // Each attempt reached the receiver, signed.
  expect(verifyAll(e.receiver.on(endpoint.path), endpoint.secret).map((ev) => ev.id)).toEqual([id, id, id]);
});

test('a refused connection is a failure with the network error recorded', async () => {
  const port = await freePort();
  const key = newTestKey();
  const res = await e.t
    .http()
    .post('/v1/webhook_endpoints')
    .set(bearer(key))
    .type('form')
    .send(`url=${encodeURIComponent(`http://127.0.0.1:${port}/hook`)}&enabled_events[]=*`);
  expect(res.status).toBe(200);
  const id = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  expect(await finished(id)).toMatchObject({ status: 'failed', attempts: 3 });
  const attempts = (await attemptsOf(key, res.body.id)).data;
  expect(attempts).toHaveLength(3);
  for (const a of attempts) {
    expect(a.status_code).toBeNull();
    expect(a.response_body).toBeNull();
    expect(a.error).toContain('ECONNREFUSED');
  }
});

/** An endpoint on `url` for a new key, one event to it, and its attempts once the delivery ended. */
async function deliverTo(url: string) {
  const key = newTestKey();
  const res = await e.t.http().post('/v1/webhook_endpoints').set(bearer(key)).type('form').send(`url=${encodeURIComponent(url)}&enabled_events[]=*`);
  expect(res.status).toBe(200);
  const id = await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  const delivery = await finished(id);
  return { key, id, delivery, attempts: (await attemptsOf(key, res.body.id)).data };
}

/** What a refused attempt looks like in the sandbox deliveries list: no status, no response, the reason. */
function expectRefused(attempts: any[], reason: string) {
  // Retried like a connection error: three attempts on the schedule 0,0.
  expect(attempts.map((a) => a.attempt)).toEqual([3, 2, 1]);
  for (const a of attempts) {
    expect(a).toMatchObject({ status_code: null, response_body: null, succeeded: false, error: `refused: ${reason}` });
  }
}

test('the suite delivers only to loopback addresses (WEBHOOK_LOOPBACK_ONLY=true, set by globalSetup)', () => {
  expect(e.t.config.webhookLoopbackOnly).toBe(true);
});

test('an endpoint on a public host is refused before any lookup or connection, and recorded as refused', async () => {
  const named = await deliverTo('https://example.com/hook');
  expect(named.delivery).toMatchObject({ status: 'failed', attempts: 3 });
  expectRefused(named.attempts, 'example.com is not looked up: only loopback addresses may be reached');
  const literal = await deliverTo('http://93.184.215.14/hook');
  expectRefused(literal.attempts, '93.184.215.14 is a public address, not a loopback address');
  // The event shows an unsuccessful delivery, as for any failure.
  const failing = await e.t.http().get('/v1/events?delivery_success=false').set(bearer(literal.key));
  expect(failing.body.data.map((ev: any) => ev.id)).toEqual([literal.id]);
});

test('cloud metadata and link-local addresses are refused in every spelling the URL parser accepts', async () => {
  expectRefused((await deliverTo('http://169.254.169.254/latest/meta-data/')).attempts, '169.254.169.254 is a cloud metadata address');
  // Decimal and IPv4-mapped IPv6 forms of the same address
  expectRefused((await deliverTo('http://2852039166/')).attempts, '169.254.169.254 is a cloud metadata address');
  expectRefused((await deliverTo('http://[::ffff:169.254.169.254]/')).attempts, '::ffff:a9fe:a9fe (169.254.169.254) is a cloud metadata address');
  expectRefused((await deliverTo('http://[fe80::1]:8080/hook')).attempts, 'fe80::1 is a link-local address');
});

test('the deliveries list is the caller\'s own: unknown, malformed and other accounts\' endpoints are 404', async () => {
  const { key, endpoint } = await setup('/d/owner');
  const other = newTestKey();
  for (const [who, id] of [
    [other, endpoint.id],
    [key, 'we_doesnotexist'],
    [key, 'nope'],
    [key, `${endpoint.id}%00`],
  ]) {
    const res = await e.t.http().get(`/sandbox/v1/webhook_endpoints/${id}/deliveries`).set(bearer(who));
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
  }
  const empty = await attemptsOf(key, endpoint.id);
  expect(empty).toEqual({ object: 'list', data: [], has_more: false, url: `/sandbox/v1/webhook_endpoints/${endpoint.id}/deliveries` });
});

describe('attempts claimed together', () => {
  const settings = (): DeliverySettings => ({
    timeoutMs: TIMEOUT_MS,
    retrySchedule: [0, 0],
    destinations: { allowPrivateNetwork: true, allowedHosts: [], loopbackOnly: true },
  });

  /** An event fanned out to the endpoints, with no job queued: the test makes its attempts itself. */
  async function fannedOut(account: string): Promise<string[]> {
    const eventId = await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false });
    return fanOutEvent(e.t.runtime.sql, eventId);
  }

  test('two attempts in one claim batch, one for an endpoint disabled meanwhile: one arrives, the other is canceled', async () => {
    const key = newTestKey();
    const live = await createReceivingEndpoint(e.t, e.receiver, key, '/d/batch-live');
    const off = await createReceivingEndpoint(e.t, e.receiver, key, '/d/batch-off');
    const prisma = e.t.runtime.prisma;
    const deliveryIds = await fannedOut(await accountOfKey(e.t.runtime, key));
    expect(deliveryIds).toHaveLength(2);
    // Disabled behind the API's back, so its delivery is still pending when it is claimed.
    await prisma.webhookEndpoint.update({ where: { id: off.id }, data: { status: 'disabled' } });
    const rows = await prisma.webhookDelivery.findMany({ where: { id: { in: deliveryIds } } });
    const idOf = (endpointId: string) => rows.find((r) => r.endpointId === endpointId)!.id;

    const query = jest.spyOn(e.t.runtime.sql, 'query');
    try {
      const outcomes = await Promise.all(
        [idOf(live.id), idOf(off.id)].map((deliveryId) => attemptDelivery(e.t.runtime, settings(), { deliveryId, attempt: 0, holder: 'test-batch' })),
      );
      expect(outcomes.map((o) => o.kind)).toEqual(['succeeded', 'canceled']);
      // Both were claimed by one statement.
      const claimText = claimDeliveries([]).text;
      const claims = query.mock.calls.map(([statement]) => statement).filter((statement) => statement.text === claimText);
      expect(claims.filter((c) => deliveryIds.every((id) => (c.values[0] as string[]).includes(id)))).toHaveLength(1);
    } finally {
      query.mockRestore();
    }
    expect(verifyAll(e.receiver.on(live.path), live.secret)).toHaveLength(1);
    expect(e.receiver.on(off.path)).toEqual([]);
    expect(await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: idOf(live.id) } })).toMatchObject({ status: 'succeeded', attempts: 1, lockedUntil: null });
    expect(await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: idOf(off.id) } })).toMatchObject({ status: 'canceled', attempts: 0 });
    expect(await prisma.webhookAttempt.count({ where: { deliveryId: { in: deliveryIds } } })).toBe(1);
    expect(await prisma.event.findUniqueOrThrow({ where: { id: rows[0].eventId } })).toMatchObject({ pendingWebhooks: 0 });

    // Made again (a job run twice), neither attempt does anything.
    const again = await Promise.all(deliveryIds.map((deliveryId) => attemptDelivery(e.t.runtime, settings(), { deliveryId, attempt: 0, holder: 'test-batch' })));
    expect(again.map((o) => o.kind)).toEqual(['skipped', 'skipped']);
    expect(e.receiver.on(live.path)).toHaveLength(1);
  });

  test("a job run again takes over its own lease, never another job's", async () => {
    const { account, endpoint } = await setup('/d/lease');
    const [deliveryId] = await fannedOut(account);
    const prisma = e.t.runtime.prisma;
    // Another job holds the lease (its request in flight, say).
    await prisma.webhookDelivery.update({ where: { id: deliveryId }, data: { lockedUntil: new Date(Date.now() + 3600_000), lockedBy: 'other-job' } });
    const attempt = (holder: string, takeOver: boolean) => attemptDelivery(e.t.runtime, settings(), { deliveryId, attempt: 0, holder, takeOver });
    expect((await attempt('this-job', true)).kind).toBe('skipped');
    expect((await attempt('this-job', false)).kind).toBe('skipped');
    expect((await attempt('other-job', false)).kind).toBe('skipped');
    expect(e.receiver.on(endpoint.path)).toEqual([]);
    // The holder's own run again (its worker died) does take it over.
    expect((await attempt('other-job', true)).kind).toBe('succeeded');
    expect(verifyAll(e.receiver.on(endpoint.path), endpoint.secret)).toHaveLength(1);
    expect(await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ status: 'succeeded', lockedBy: null });
  });

  test('an attempt is logged as started before it is sent; a run that died leaves it unknown beside the run that took over', async () => {
    const { key, account, endpoint } = await setup('/d/started');
    const [deliveryId] = await fannedOut(account);
    // A run that claimed, and died before recording anything (killed mid-request, say).
    const claim = { id: deliveryId, attempt: 0, lockSeconds: 3600, holder: 'dead-run', takeOver: false, attemptId: `whatt_dead${Date.now()}`, startedAtMs: Date.now() };
    expect(await e.t.runtime.sql.query(claimDeliveries([claim]))).toHaveLength(1);
    const during = (await attemptsOf(key, endpoint.id)).data;
    expect(during).toHaveLength(1);
    expect(during[0]).toMatchObject({ id: claim.attemptId, attempt: 1, outcome: 'started', status_code: null, error: null, succeeded: false });

    // Its job, run again, takes the lease over and sends: the log keeps both attempts.
    expect((await attemptDelivery(e.t.runtime, settings(), { deliveryId, attempt: 0, holder: 'dead-run', takeOver: true })).kind).toBe('succeeded');
    expect(verifyAll(e.receiver.on(endpoint.path), endpoint.secret)).toHaveLength(1);
    const after = (await attemptsOf(key, endpoint.id)).data;
    expect(after.map((a: any) => [a.attempt, a.outcome, a.status_code, a.succeeded])).toEqual([
      [1, 'succeeded', 200, true],
      [1, 'unknown', null, false],
    ]);
    expect(after[1]).toMatchObject({ id: claim.attemptId, error: OUTCOME_UNKNOWN });
  });

  test('a sent attempt whose recording meets a database outage is recorded once the database answers, and not sent again', async () => {
    const { key, account, endpoint } = await setup('/d/outage');
    const [deliveryId] = await fannedOut(account);
    const completeText = completeAttempts([]).text;
    const sql = e.t.runtime.sql;
    const real = sql.query.bind(sql);
    let refused = 0;
    const query = jest.spyOn(sql, 'query').mockImplementation(((statement: { text: string }) => {
      // The first three recordings find the database gone, as in a restart.
      if (statement.text === completeText && refused < 3) {
        refused++;
        return Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
      }
      return real(statement as never);
    }) as never);
    try {
      expect((await attemptDelivery(e.t.runtime, settings(), { deliveryId, attempt: 0, holder: 'outage-job' })).kind).toBe('succeeded');
    } finally {
      query.mockRestore();
    }
    expect(refused).toBe(3);
    expect(e.receiver.on(endpoint.path)).toHaveLength(1);
    const attempts = (await attemptsOf(key, endpoint.id)).data;
    expect(attempts.map((a: any) => [a.attempt, a.outcome, a.status_code])).toEqual([[1, 'succeeded', 200]]);
    expect(await e.t.runtime.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  test('a delivery asked for twice in one claim batch (a group job and the reconciler\'s single job) goes to the asker whose attempt the statement wrote', async () => {
    const { key, account, endpoint } = await setup('/d/twice');
    const [deliveryId] = await fannedOut(account);
    // The statement gives a delivery to one of its askers, as its join order falls (a big batch
    // hashes): here the wanted rows go in reversed, so it is not the first asker.
    const claimText = claimDeliveries([]).text;
    const sql = e.t.runtime.sql;
    const real = sql.query.bind(sql);
    const query = jest.spyOn(sql, 'query').mockImplementation(((statement: { text: string; values: unknown[] }) =>
      real(statement.text === claimText ? { text: statement.text, values: statement.values.map((v) => (Array.isArray(v) ? [...v].reverse() : v)) } : statement)) as never);
    let outcomes;
    try {
      outcomes = await Promise.all(['group-job', 'single-job'].map((holder) => attemptDelivery(e.t.runtime, settings(), { deliveryId, attempt: 0, holder })));
    } finally {
      query.mockRestore();
    }
    expect(outcomes.map((o) => o.kind)).toEqual(['skipped', 'succeeded']);
    expect(e.receiver.on(endpoint.path)).toHaveLength(1);
    const attempts = (await attemptsOf(key, endpoint.id)).data;
    expect(attempts.map((a: any) => [a.attempt, a.outcome, a.status_code])).toEqual([[1, 'succeeded', 200]]);
    expect(await e.t.runtime.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ status: 'succeeded', lockedBy: null });
  });

  test('canceling a delivery marks an attempt a dead run left started as unknown', async () => {
    const { key, account, endpoint } = await setup('/d/cancel-started');
    const [deliveryId] = await fannedOut(account);
    const claim = { id: deliveryId, attempt: 0, lockSeconds: 3600, holder: 'dead-run', takeOver: false, attemptId: `whatt_gone${Date.now()}`, startedAtMs: Date.now() };
    await e.t.runtime.sql.query(claimDeliveries([claim]));
    const disabled = await e.t.http().post(`/v1/webhook_endpoints/${endpoint.id}`).set(bearer(key)).type('form').send({ disabled: 'true' });
    expect(disabled.status).toBe(200);
    const [attempt] = (await attemptsOf(key, endpoint.id)).data;
    expect(attempt).toMatchObject({ id: claim.attemptId, outcome: 'unknown', error: OUTCOME_UNKNOWN });
    expect(await e.t.runtime.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ status: 'canceled' });
  });
});
