import { bearer, newTestKey } from '../helpers/app';
import { consoleGet, consolePost, csrfOf, rowCount, signIn } from '../helpers/console';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { createCustomer, form } from '../helpers/fixtures';
import { until } from '../helpers/queues';
import { createReceivingEndpoint, verifyWebhook } from '../helpers/webhooks';

// The console's webhook endpoints page with the workers running: the list, creating one (the
// signing secret shown once, on that answer only), enabling and disabling (the API's update),
// sending a test event (a resend of the latest event the endpoint listens to), isolation, CSRF,
// and values shown inert.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('console_webhooks');
});
afterAll(() => e.close());

const api = (key: string, path: string) => e.t.http().get(path).set(bearer(key));

test('creating an endpoint shows its secret once: on the answer to the form, never in a URL or a later page', async () => {
  const key = newTestKey();
  const session = await signIn(e.t, key);
  const res = await consolePost(e.t, session, '/console/webhooks', { url: e.receiver.url('/console-hooks/new'), enabled_events: 'customer.created, customer.updated', description: 'From the console', idempotency_key: 'console-create-1' }, '/console/webhooks');
  expect(res.status).toBe(200);
  expect(res.headers.location).toBeUndefined();
  const [endpoint] = (await api(key, '/v1/webhook_endpoints')).body.data;
  expect(endpoint).toMatchObject({ url: e.receiver.url('/console-hooks/new'), enabled_events: ['customer.created', 'customer.updated'], description: 'From the console' });
  const secret = /<code class="secret" data-test="endpoint-secret">(whsec_\w+)<\/code>/.exec(res.text)![1];
  expect(res.text).toContain(`Endpoint ${endpoint.id} created`);
  expect(res.headers['cache-control']).toContain('no-store');

  // The secret is the one deliveries are signed with.
  await createCustomer(e.t, key);
  await until(() => e.receiver.on('/console-hooks/new').length > 0, 15000, 'a delivery');
  expect(verifyWebhook(e.receiver.on('/console-hooks/new')[0], secret).type).toBe('customer.created');

  for (const path of ['/console/webhooks', `/console/objects/${endpoint.id}`, '/console']) {
    const later = await consoleGet(e.t, session, path);
    expect(later.status).toBe(200);
    expect(later.text).not.toContain(secret);
  }
  const list = await consoleGet(e.t, session, '/console/webhooks');
  expect(rowCount(list.text)).toBe(1);
  expect(list.text).toContain('customer.created, customer.updated');
});

test('a refused create shows the API’s error and creates nothing', async () => {
  const key = newTestKey();
  const session = await signIn(e.t, key);
  const res = await consolePost(e.t, session, '/console/webhooks', { url: 'not a url', enabled_events: '*' }, '/console/webhooks');
  expect(res.status).toBe(400);
  expect(res.text).toContain('role="alert"');
  expect(res.text).not.toContain('data-test="endpoint-secret"');
  expect((await api(key, '/v1/webhook_endpoints')).body.data).toEqual([]);
});

test('disable and enable go through the API’s update', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/console-hooks/toggle');
  const session = await signIn(e.t, key);
  const page = await consoleGet(e.t, session, '/console/webhooks');
  expect(page.text).toContain('data-test="endpoint-disable"');
  const off = await consolePost(e.t, session, `/console/webhooks/${endpoint.id}/status`, { disabled: 'true' }, '/console/webhooks');
  expect(off.status).toBe(303);
  expect((await api(key, `/v1/webhook_endpoints/${endpoint.id}`)).body.status).toBe('disabled');
  expect((await consoleGet(e.t, session, '/console/webhooks')).text).toContain('data-test="endpoint-enable"');
  await consolePost(e.t, session, `/console/webhooks/${endpoint.id}/status`, { disabled: 'false' }, '/console/webhooks');
  expect((await api(key, `/v1/webhook_endpoints/${endpoint.id}`)).body.status).toBe('enabled');
});

test('send a test event: the latest event the endpoint listens to, resent to it alone', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/console-hooks/test', { enabled_events: ['customer.created'] });
  const bystander = await createReceivingEndpoint(e.t, e.receiver, key, '/console-hooks/bystander');
  const session = await signIn(e.t, key);
  const nothing = await consolePost(e.t, session, `/console/webhooks/${endpoint.id}/test`, {}, '/console/webhooks');
  expect(nothing.status).toBe(409);
  expect(nothing.text).toContain('has no event yet');

  await createCustomer(e.t, key);
  await until(() => e.receiver.on(endpoint.path).length === 1 && e.receiver.on(bystander.path).length === 1, 15000, 'the first deliveries');
  const [event] = (await api(key, '/v1/events?type=customer.created')).body.data;
  const res = await consolePost(e.t, session, `/console/webhooks/${endpoint.id}/test`, {}, '/console/webhooks');
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe(`/console/events/${event.id}?resent=${endpoint.id}`);
  await until(() => e.receiver.on(endpoint.path).length === 2, 15000, 'the test event');
  expect(JSON.parse(e.receiver.on(endpoint.path)[1].body).id).toBe(event.id);
  expect(e.receiver.on(bystander.path)).toHaveLength(1);
});

test('another key’s endpoint can’t be changed or sent to; forms need the CSRF token; values are text', async () => {
  const key = newTestKey();
  const other = newTestKey();
  const theirs = await createReceivingEndpoint(e.t, e.receiver, other, '/console-hooks/theirs');
  await createReceivingEndpoint(e.t, e.receiver, key, '/console-hooks/xss', { description: '<script>alert(1)</script>' });
  const session = await signIn(e.t, key);
  const page = await consoleGet(e.t, session, '/console/webhooks');
  expect(page.text).not.toContain(theirs.id);
  expect(page.text).not.toContain('<script>alert');
  expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');

  expect((await consolePost(e.t, session, `/console/webhooks/${theirs.id}/status`, { disabled: 'true' }, '/console/webhooks')).status).toBe(404);
  expect((await consolePost(e.t, session, `/console/webhooks/${theirs.id}/test`, {}, '/console/webhooks')).status).toBe(404);
  expect((await api(other, `/v1/webhook_endpoints/${theirs.id}`)).body.status).toBe('enabled');

  const noToken = await e.t.http().post('/console/webhooks').set('Cookie', session.cookie).type('form').send(form({ url: e.receiver.url('/x'), enabled_events: '*' }));
  expect(noToken.status).toBe(403);
  const wrongToken = await e.t.http().post('/console/webhooks').set('Cookie', session.cookie).type('form').send(form({ csrf_token: csrfOf(page.text).replace(/^./, (c) => (c === 'a' ? 'b' : 'a')), url: e.receiver.url('/x'), enabled_events: '*' }));
  expect(wrongToken.status).toBe(403);
  expect((await api(key, '/v1/webhook_endpoints')).body.data).toHaveLength(1);
});
