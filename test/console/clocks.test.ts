import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { consoleGet, consolePost, rowCount, signIn, type ConsoleSession } from '../helpers/console';
import { createCustomer, createPrice, form } from '../helpers/fixtures';
import { runTestClockJob } from '../../src/resources/billing/test_clocks/service';

// The console's test clocks: the list and create form, a clock's page (its customers and
// subscriptions, the advance form, "advancing" while it is, what its last advance did), isolation
// between keys, the CSRF check, and values shown inert. The app runs no workers: an advance is
// run here as the billing worker runs it (runTestClockJob), so the advancing state can be seen.

let t: TestApp;
let key: string;
let session: ConsoleSession;

beforeAll(async () => {
  t = await startTestApp();
  key = newTestKey();
  session = await signIn(t, key);
});
afterAll(async () => {
  await t?.close();
});

const JAN_1_2024 = 1704067200;
const FEB_1_2024 = 1706745600;

const apiGet = (path: string, k = key) => t.http().get(path).set(bearer(k));
const apiPost = (path: string, body: Record<string, unknown>, k = key) => t.http().post(path).set(bearer(k)).type('form').send(form(body));

test('create a clock from the form (its frozen time a UTC date-time); the list shows it', async () => {
  const res = await consolePost(t, session, '/console/clocks', { name: 'Quarter end', frozen_time: '2024-01-01T00:00', idempotency_key: 'console-0123456789abcdef0123456789abcdef' }, '/console/clocks');
  expect(res.status).toBe(303);
  const id = /^\/console\/clocks\/(clock_\w+)$/.exec(res.headers.location)![1];
  expect((await apiGet(`/v1/test_helpers/test_clocks/${id}`)).body).toMatchObject({ name: 'Quarter end', frozen_time: JAN_1_2024, status: 'ready' });
  // The same form posted again (its idempotency key) creates nothing new.
  const again = await consolePost(t, session, '/console/clocks', { name: 'Quarter end', frozen_time: '2024-01-01T00:00', idempotency_key: 'console-0123456789abcdef0123456789abcdef' }, '/console/clocks');
  expect(again.headers.location).toBe(res.headers.location);
  const list = await consoleGet(t, session, '/console/clocks');
  expect(list.status).toBe(200);
  expect(rowCount(list.text)).toBe((await apiGet('/v1/test_helpers/test_clocks')).body.data.length);
  expect(list.text).toContain(`href="/console/clocks/${id}"`);
  expect(list.text).toContain('2024-01-01 00:00:00Z');
  expect(list.text).toMatch(/name="idempotency_key" value="console-[0-9a-f]{32}"/);
});

test('a frozen time the API refuses shows its error on the list page', async () => {
  const res = await consolePost(t, session, '/console/clocks', { frozen_time: '1960-01-01T00:00' }, '/console/clocks');
  expect(res.status).toBe(400);
  expect(res.text).toContain('class="error"');
  expect(res.text).toContain('frozen_time');
});

test('a clock’s page: its customers and subscriptions, advancing (with a refresh link), then ready with what the advance did', async () => {
  const clock = (await apiPost('/v1/test_helpers/test_clocks', { frozen_time: JAN_1_2024, name: 'Monthly' })).body;
  const customer = await createCustomer(t, key, { test_clock: clock.id, email: 'clocked@example.com', payment_method: 'pm_card_visa' });
  const pm = (await apiGet(`/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await apiPost(`/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = await createPrice(t, key, { unit_amount: 1500, currency: 'usd', recurring: { interval: 'month' }, product_data: { name: 'Gold' } });
  const sub = (await apiPost('/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  await createCustomer(t, key, { email: 'not-on-the-clock@example.com' });

  const before = await consoleGet(t, session, `/console/clocks/${clock.id}`);
  expect(before.status).toBe(200);
  const section = (page: string, name: string) => new RegExp(`<section class="card" data-test="${name}">([\\s\\S]*?)</section>`).exec(page)![1];
  expect(section(before.text, 'clock-customers')).toContain(customer.id);
  expect(section(before.text, 'clock-customers')).not.toContain('not-on-the-clock');
  expect(rowCount(section(before.text, 'clock-customers'))).toBe(1);
  expect(section(before.text, 'clock-subscriptions')).toContain(sub.id);
  expect(section(before.text, 'clock-last-advance')).toContain('not been advanced yet');
  expect(before.text).toContain('data-test="advance-to"');
  expect(before.text).toContain('value="2024-01-02T00:00:00"');
  expect(before.text).toContain('read as UTC');

  const advanced = await consolePost(t, session, `/console/clocks/${clock.id}/advance`, { frozen_time: '2024-02-01T00:00:00', idempotency_key: 'console-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' }, `/console/clocks/${clock.id}`);
  expect(advanced.status).toBe(303);
  expect(advanced.headers.location).toBe(`/console/clocks/${clock.id}`);
  const advancing = await consoleGet(t, session, `/console/clocks/${clock.id}`);
  expect(advancing.text).toContain('data-test="clock-advancing"');
  expect(advancing.text).toContain(`<a href="/console/clocks/${clock.id}" data-test="clock-refresh">`);
  expect(advancing.text).toMatch(/<script nonce="[^"]+">setTimeout\(function\(\)\{location\.reload\(\);\},1000\);<\/script>/);
  expect(advancing.text).not.toContain('data-test="advance-to"');
  expect(section(advancing.text, 'clock-last-advance')).toContain('not ready yet');

  await runTestClockJob(t.runtime, clock.id);
  const ready = await consoleGet(t, session, `/console/clocks/${clock.id}`);
  expect(ready.text).toContain('<td data-test="clock-frozen-time">2024-02-01 00:00:00Z</td>');
  expect(ready.text).not.toContain('<script');
  const last = section(ready.text, 'clock-last-advance');
  // The advance's own events and the renewal's, each type counted, each event linked.
  const events = (await apiGet('/v1/events?limit=100')).body.data as { id: string; type: string; data: { object: { id: string } } }[];
  const advancingEvent = events.find((e) => e.type === 'test_helpers.test_clock.advancing' && e.data.object.id === clock.id)!;
  const readyEvent = events.find((e) => e.type === 'test_helpers.test_clock.ready' && e.data.object.id === clock.id)!;
  const window = events.slice(events.indexOf(readyEvent), events.indexOf(advancingEvent) + 1);
  const renewal = window.filter((e) => e.type === 'invoice.created');
  expect(renewal).toHaveLength(1);
  for (const type of ['test_helpers.test_clock.advancing', 'test_helpers.test_clock.ready', 'invoice.created', 'invoice.paid']) {
    const count = window.filter((e) => e.type === type).length;
    expect(count).toBeGreaterThan(0);
    expect(last).toMatch(new RegExp(`<code>${type.replace(/\./g, '\\.')}</code></td><td><span data-test="event-count">${count}</span>`));
  }
  expect(last).toContain(`href="/console/objects/${readyEvent.id}"`);
  expect(last).toContain(`${window.length} events of the account`);
  expect(last).toContain('2024-02-01 00:00:00Z');
  // Nothing from before the advance: the subscription's first invoice is not in it.
  expect(last).not.toContain('customer.created');
  expect((await apiGet(`/v1/test_helpers/test_clocks/${clock.id}`)).body.frozen_time).toBe(FEB_1_2024);
});

test('an advance the API refuses (not after the frozen time) shows its error on the clock’s page', async () => {
  const clock = (await apiPost('/v1/test_helpers/test_clocks', { frozen_time: JAN_1_2024 })).body;
  const res = await consolePost(t, session, `/console/clocks/${clock.id}/advance`, { frozen_time: '2023-12-01T00:00' }, `/console/clocks/${clock.id}`);
  expect(res.status).toBe(400);
  expect(res.text).toContain('class="error"');
  expect(res.text).toContain('must be after the current one');
  expect((await apiGet(`/v1/test_helpers/test_clocks/${clock.id}`)).body.status).toBe('ready');
});

test('another key’s clock is the same 404 as an unknown one, to look at and to advance', async () => {
  const other = newTestKey();
  const theirs = (await apiPost('/v1/test_helpers/test_clocks', { frozen_time: JAN_1_2024, name: 'Not yours' }, other)).body;
  for (const path of [`/console/clocks/${theirs.id}`, '/console/clocks/clock_doesnotexist000']) {
    const res = await consoleGet(t, session, path);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('Not yours');
  }
  const list = await consoleGet(t, session, '/console/clocks');
  expect(list.text).not.toContain(theirs.id);
  const res = await consolePost(t, session, `/console/clocks/${theirs.id}/advance`, { frozen_time: '2024-01-05T00:00' }, '/console/clocks');
  expect(res.status).toBe(404);
  expect((await apiGet(`/v1/test_helpers/test_clocks/${theirs.id}`, other)).body).toMatchObject({ status: 'ready', frozen_time: JAN_1_2024 });
});

test('a form without the session’s CSRF token acts on nothing (403)', async () => {
  const clock = (await apiPost('/v1/test_helpers/test_clocks', { frozen_time: JAN_1_2024 })).body;
  for (const csrf of [undefined, 'wrong']) {
    const res = await t
      .http()
      .post(`/console/clocks/${clock.id}/advance`)
      .set('Cookie', session.cookie)
      .type('form')
      .send(form({ ...(csrf ? { csrf_token: csrf } : {}), frozen_time: '2024-01-05T00:00' }));
    expect(res.status).toBe(403);
    const created = await t.http().post('/console/clocks').set('Cookie', session.cookie).type('form').send(form({ csrf_token: csrf, frozen_time: '2024-01-05T00:00', name: 'csrf' }));
    expect(created.status).toBe(403);
  }
  expect((await apiGet(`/v1/test_helpers/test_clocks/${clock.id}`)).body.status).toBe('ready');
  expect((await apiGet('/v1/test_helpers/test_clocks?limit=100')).body.data.map((c: { name: string | null }) => c.name)).not.toContain('csrf');
});

test('a clock named <script>… shows as text in the list and on its page', async () => {
  const name = '<script>alert(1)</script>';
  const clock = (await apiPost('/v1/test_helpers/test_clocks', { frozen_time: JAN_1_2024, name })).body;
  for (const path of ['/console/clocks', `/console/clocks/${clock.id}`]) {
    const res = await consoleGet(t, session, path);
    expect(res.status).toBe(200);
    expect(res.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(res.text).not.toContain(name);
  }
});
