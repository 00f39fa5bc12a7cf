import { bearer, newTestKey } from '../helpers/app';
import { consoleGet, consolePost, jsonTextOf, rowCount, signIn } from '../helpers/console';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { createCustomer, createProduct, form } from '../helpers/fixtures';
import { until } from '../helpers/queues';
import { createReceivingEndpoint } from '../helpers/webhooks';

// The console's events pages with the workers running: the list (the API's `type` filter and
// cursors), an event's page (its payload as the API renders it, its deliveries with every
// attempt), Resend (the sandbox's resend operation, behind the session's CSRF token), isolation
// between keys, and values shown inert.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('console_events');
});
afterAll(() => e.close());

const api = (key: string, path: string) => e.t.http().get(path).set(bearer(key));
const eventsOf = async (key: string, type: string): Promise<string[]> => (await api(key, `/v1/events?type=${type}&limit=100`)).body.data.map((x: { id: string }) => x.id);
const attemptsOf = async (key: string, endpoint: string, event: string) => (await api(key, `/sandbox/v1/webhook_endpoints/${endpoint}/deliveries?event=${event}`)).body.data;

test('the list filters by type and pages with the API’s cursors, each row linking its event', async () => {
  const key = newTestKey();
  for (let i = 0; i < 27; i++) await createCustomer(e.t, key, { name: `C${i}` });
  await createProduct(e.t, key, { name: 'Widget' });
  const session = await signIn(e.t, key);

  const all = await consoleGet(e.t, session, '/console/events');
  expect(all.status).toBe(200);
  expect(rowCount(all.text)).toBe(25);
  expect(all.text).toContain('product.created');

  const customers = await consoleGet(e.t, session, '/console/events?type=customer.created');
  expect(rowCount(customers.text)).toBe(25);
  expect(customers.text).not.toContain('product.created');
  const ids = await eventsOf(key, 'customer.created');
  const shown = [...customers.text.matchAll(/<a class="mono" href="\/console\/events\/(evt_\w+)">/g)].map((m) => m[1]);
  expect(shown).toEqual(ids.slice(0, 25));
  const older = /href="([^"]+)" data-test="page-older"/.exec(customers.text)![1].replace(/&amp;/g, '&');
  expect(older).toBe(`/console/events?type=customer.created&starting_after=${ids[24]}`);
  const second = await consoleGet(e.t, session, older);
  expect(rowCount(second.text)).toBe(2);
  expect(second.text).toContain('data-test="page-newer"');

  const group = await consoleGet(e.t, session, '/console/events?type=product.*');
  expect(rowCount(group.text)).toBe(1);
  const none = await consoleGet(e.t, session, '/console/events?type=invoice.paid');
  expect(rowCount(none.text)).toBe(0);
  expect(none.text).toContain('No event of this type.');
});

test('the list’s first page tells its script of newer events (events.json: a count from the API’s list), allowed to ask only this origin', async () => {
  const key = newTestKey();
  await createCustomer(e.t, key);
  const session = await signIn(e.t, key);
  const page = await consoleGet(e.t, session, '/console/events?type=customer.created');
  const [first] = await eventsOf(key, 'customer.created');
  expect(page.text).toContain(`data-first="${first}" data-type="customer.created" data-test="new-events"`);
  const nonce = /<script nonce="([^"]+)">/.exec(page.text)![1];
  expect(page.headers['content-security-policy']).toContain(`script-src 'nonce-${nonce}'; connect-src 'self';`);
  expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  const count = async (q: string) => (await consoleGet(e.t, session, `/console/events.json?${q}`)).body;
  expect(await count(`ending_before=${first}&type=customer.created`)).toEqual({ count: 0, more: false });
  await createCustomer(e.t, key);
  await createProduct(e.t, key);
  expect(await count(`ending_before=${first}&type=customer.created`)).toEqual({ count: 1, more: false });
  expect(await count(`ending_before=${first}`)).toEqual({ count: 2, more: false });
  // Another key's event as the cursor is refused by the API, as an unknown one: nothing of it is told.
  const other = newTestKey();
  await createCustomer(e.t, other);
  const [theirs] = await eventsOf(other, 'customer.created');
  for (const cursor of [theirs, 'evt_nope']) {
    const res = await consoleGet(e.t, session, `/console/events.json?ending_before=${cursor}`);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toEqual({ count: 0, more: false, error: 400 });
  }
  // A later page has no notice and no script.
  const later = await consoleGet(e.t, session, `/console/events?starting_after=${first}`);
  expect(later.text).not.toContain('data-test="new-events"');
  expect(later.text).not.toContain('<script');
  // Signed out, the count is not served.
  expect((await e.t.http().get('/console/events.json')).status).toBe(303);
});

test('an event’s page shows its payload as the API renders it and each delivery’s attempts; Resend sends it again', async () => {
  const key = newTestKey();
  e.receiver.reply('/console-events/failing', { status: 500, body: 'boom from the receiver' });
  const failing = await createReceivingEndpoint(e.t, e.receiver, key, '/console-events/failing');
  const healthy = await createReceivingEndpoint(e.t, e.receiver, key, '/console-events/healthy');
  await createCustomer(e.t, key, { name: 'Hooked' });
  const [eventId] = await eventsOf(key, 'customer.created');
  await until(async () => (await attemptsOf(key, failing.id, eventId)).length > 0 && (await attemptsOf(key, healthy.id, eventId)).some((a: any) => a.succeeded), 15000, 'an attempt to each endpoint');
  const session = await signIn(e.t, key);

  const page = await consoleGet(e.t, session, `/console/events/${eventId}`);
  expect(page.status).toBe(200);
  expect(JSON.parse(jsonTextOf(page.text))).toEqual((await api(key, `/v1/events/${eventId}`)).body);
  const deliveries = page.text.split('data-test="delivery"').slice(1);
  expect(deliveries).toHaveLength(2);
  const failed = deliveries.find((d) => d.includes(failing.id))!;
  expect(failed).toContain('<span class="badge bad">500</span>');
  expect(failed).toContain('boom from the receiver');
  expect(failed).toMatch(/<td class="nowrap">\d+ ms<\/td>/);
  expect(failed).toContain('data-test="resend"');

  const before = e.receiver.on(healthy.path).length;
  const res = await consolePost(e.t, session, `/console/events/${eventId}/resend`, { webhook_endpoint: healthy.id, idempotency_key: 'console-test-resend-1' }, `/console/events/${eventId}`);
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe(`/console/events/${eventId}?resent=${healthy.id}`);
  await until(() => e.receiver.on(healthy.path).length === before + 1, 15000, 'the resent event');
  expect(JSON.parse(e.receiver.on(healthy.path).at(-1)!.body).id).toBe(eventId);
  await until(async () => (await attemptsOf(key, healthy.id, eventId)).filter((a: any) => a.succeeded).length === 2, 15000, 'the second attempt recorded');
  const after = await consoleGet(e.t, session, res.headers.location);
  expect(after.text).toContain('data-test="resent"');
  const row = after.text.split('data-test="delivery"').slice(1).find((d) => d.includes(healthy.id))!;
  expect(row.split('data-test="attempt"')).toHaveLength(3);
  // The same form posted twice (its idempotency key) resends once.
  await consolePost(e.t, session, `/console/events/${eventId}/resend`, { webhook_endpoint: healthy.id, idempotency_key: 'console-test-resend-1' }, `/console/events/${eventId}`);
  expect((await e.t.runtime.prisma.webhookDelivery.count({ where: { eventId, endpointId: healthy.id } }))).toBe(2);
});

test('Resend needs the session’s CSRF token, and refuses an API key', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/console-events/csrf');
  await createCustomer(e.t, key);
  const [eventId] = await eventsOf(key, 'customer.created');
  const session = await signIn(e.t, key);
  const noToken = await e.t.http().post(`/console/events/${eventId}/resend`).set('Cookie', session.cookie).type('form').send(form({ webhook_endpoint: endpoint.id }));
  expect(noToken.status).toBe(403);
  const withKey = await e.t.http().post(`/console/events/${eventId}/resend`).set(bearer(key)).type('form').send(form({ webhook_endpoint: endpoint.id }));
  expect(withKey.status).toBe(403);
  expect(await e.t.runtime.prisma.webhookDelivery.count({ where: { eventId, resendNumber: { gt: 0 } } })).toBe(0);
});

test('another key’s event is not found, and can’t be resent nor sent to another key’s endpoint', async () => {
  const key = newTestKey();
  const other = newTestKey();
  const mine = await createReceivingEndpoint(e.t, e.receiver, key, '/console-events/mine');
  const theirs = await createReceivingEndpoint(e.t, e.receiver, other, '/console-events/theirs');
  await createCustomer(e.t, key, { name: 'Mine' });
  await createCustomer(e.t, other, { name: 'Someone else’s customer' });
  const [myEvent] = await eventsOf(key, 'customer.created');
  const [theirEvent] = await eventsOf(other, 'customer.created');
  const session = await signIn(e.t, key);

  const page = await consoleGet(e.t, session, `/console/events/${theirEvent}`);
  expect(page.status).toBe(404);
  expect(page.text).not.toContain('Someone else’s customer');
  expect(page.text).not.toContain(theirs.id);
  const resendTheirs = await consolePost(e.t, session, `/console/events/${theirEvent}/resend`, { webhook_endpoint: mine.id }, '/console/events');
  expect(resendTheirs.status).toBe(404);
  const toTheirEndpoint = await consolePost(e.t, session, `/console/events/${myEvent}/resend`, { webhook_endpoint: theirs.id }, '/console/events');
  expect(toTheirEndpoint.status).toBe(400);
  expect(toTheirEndpoint.text).toContain('No such webhook endpoint');
  expect(await e.t.runtime.prisma.webhookDelivery.count({ where: { resendNumber: { gt: 0 }, endpointId: { in: [mine.id, theirs.id] } } })).toBe(0);
});

test('an event’s values are shown as text', async () => {
  const key = newTestKey();
  await createCustomer(e.t, key, { name: '<script>alert(1)</script>', metadata: { '<b>k</b>': '"><img src=x onerror=alert(2)>' } });
  const [eventId] = await eventsOf(key, 'customer.created');
  const session = await signIn(e.t, key);
  const page = await consoleGet(e.t, session, `/console/events/${eventId}`);
  expect(page.status).toBe(200);
  expect(page.text).not.toContain('<script>alert');
  expect(page.text).not.toContain('<img src=x');
  expect(page.text).not.toContain('<b>k</b>');
  expect(JSON.parse(jsonTextOf(page.text)).data.object.name).toBe('<script>alert(1)</script>');
  // A link can make the page echo only an endpoint id.
  const echoed = await consoleGet(e.t, session, `/console/events/${eventId}?resent=${encodeURIComponent('<b>x</b>')}`);
  expect(echoed.text).not.toContain('data-test="resent"');
});
