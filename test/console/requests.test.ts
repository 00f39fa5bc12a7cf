import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { consoleGet, consolePost, rowCount, signIn } from '../helpers/console';
import { createCustomer } from '../helpers/fixtures';

// The console's request log: the recent requests of the signed-in key's platform (its API
// clients' and the console's own), each request's page (with the error body a failed one
// answered), isolation between keys, values shown inert, and the request_log_url page's link.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

test('lists the account’s requests, newest first, with method, path, status, id, idempotency key and masked key', async () => {
  const key = newTestKey();
  const created = await t.http().post('/v1/customers').set(bearer(key)).set('Idempotency-Key', 'console-log-1').type('form').send('name=Logged');
  const failed = await t.http().get('/v1/customers/cus_missing123').set(bearer(key));
  const session = await signIn(t, key);
  expect((await consoleGet(t, session, '/console')).status).toBe(200);
  const page = await consoleGet(t, session, '/console/requests?console_reads=1');
  expect(page.status).toBe(200);
  const rows = page.text.split('data-test="object-row"').slice(1);
  const rowOf = (id: string) => rows.find((r) => r.includes(id))!;
  const createdRow = rowOf(String(created.headers['request-id']));
  expect(createdRow).toContain('<code>POST</code> <span class="mono">/v1/customers</span>');
  expect(createdRow).toContain('<span class="badge">200</span>');
  expect(createdRow).toContain('console-log-1');
  expect(createdRow).toContain(`sk_test_…${key.slice(-4)}`);
  expect(rowOf(String(failed.headers['request-id']))).toContain('<span class="badge bad">404</span>');
  expect(page.text).not.toContain(key);
  // The console's own requests are API requests: the home page's show, marked as the console's.
  expect(page.text).toContain('<span class="badge">console</span>');
  const ids = [...page.text.matchAll(/href="\/console\/requests\/(req_\w+)"/g)].map((m) => m[1]);
  expect(ids.indexOf(String(failed.headers['request-id']))).toBeLessThan(ids.indexOf(String(created.headers['request-id'])));

  // By default the console's page reads are left out; a client's reads are not.
  const plain = await consoleGet(t, session, '/console/requests');
  expect(plain.text).not.toContain('<span class="badge">console</span>');
  expect(plain.text).toContain(String(failed.headers['request-id']));
  const onlyFailed = await consoleGet(t, session, '/console/requests?failed=1');
  expect(onlyFailed.text).toContain(String(failed.headers['request-id']));
  expect(onlyFailed.text).not.toContain(String(created.headers['request-id']));
});

test('an action in the console shows in the log as the console’s request', async () => {
  const key = newTestKey();
  const session = await signIn(t, key);
  const res = await consolePost(t, session, '/console/webhooks', { url: 'http://127.0.0.1:9/hooks', enabled_events: '*', idempotency_key: 'console-action-logged' }, '/console/webhooks');
  expect(res.status).toBe(200);
  const page = await consoleGet(t, session, '/console/requests');
  const row = page.text.split('data-test="object-row"').find((r) => r.includes('console-action-logged'))!;
  expect(row).toContain('<code>POST</code> <span class="mono">/v1/webhook_endpoints</span>');
  expect(row).toContain('<span class="badge">console</span>');
  expect(page.text.match(/<span class="badge">console<\/span>/g)).toHaveLength(1);
});

test('a request’s page shows its line, and for a failed one the error body it answered', async () => {
  const key = newTestKey();
  const failed = await t.http().get('/v1/customers/cus_missing123').set(bearer(key));
  const ok = await t.http().get('/v1/customers').set(bearer(key));
  const session = await signIn(t, key);
  const page = await consoleGet(t, session, `/console/requests/${failed.headers['request-id']}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain('/v1/customers/{customer}');
  expect(page.text).toContain('data-test="request-error"');
  expect(page.text).toContain('No such customer');
  const okPage = await consoleGet(t, session, `/console/requests/${ok.headers['request-id']}`);
  expect(okPage.status).toBe(200);
  expect(okPage.text).toContain('<span class="badge">200</span>');
  expect(okPage.text).not.toContain('data-test="request-error"');
  expect(okPage.text).toContain('an API client');
});

test('another key’s request is not found; values are shown as text', async () => {
  const key = newTestKey();
  const other = newTestKey();
  const theirs = await t.http().get('/v1/customers/cus_theirs12345').set(bearer(other));
  const theirsOk = await t.http().get('/v1/customers').set(bearer(other));
  await createCustomer(t, key);
  const xss = await t.http().post('/v1/customers').set(bearer(key)).set('Idempotency-Key', '<script>alert(1)</script>').type('form').send('name=x');
  const session = await signIn(t, key);
  for (const id of [theirs.headers['request-id'], theirsOk.headers['request-id'], 'req_nope', '<b>x</b>']) {
    const page = await consoleGet(t, session, `/console/requests/${encodeURIComponent(String(id))}`);
    expect(page.status).toBe(404);
    expect(page.text).not.toContain('cus_theirs12345');
    expect(page.text).not.toContain('<b>x</b>');
  }
  const list = await consoleGet(t, session, '/console/requests');
  expect(list.text).not.toContain(String(theirs.headers['request-id']));
  expect(list.text).not.toContain('<script>alert(1)</script>');
  expect(list.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  const detail = await consoleGet(t, session, `/console/requests/${xss.headers['request-id']}`);
  expect(detail.text).not.toContain('<script>alert(1)</script>');
  // Its two requests; the console's page reads are left out.
  expect(rowCount(list.text)).toBe(2);
});

test('the request_log_url page links the console, and keeps working with the key', async () => {
  const key = newTestKey();
  const failed = await t.http().get('/v1/customers/cus_missing123').set(bearer(key));
  const url = new URL(failed.body.error.request_log_url as string);
  const id = String(failed.headers['request-id']);
  const withKey = await t.http().get(`${url.pathname}${url.search}`).auth(key, '');
  expect(withKey.status).toBe(200);
  expect(withKey.text).toContain(`href="/console/requests/${id}"`);
  const noKey = await t.http().get(`${url.pathname}${url.search}`);
  expect(noKey.status).toBe(401);
  expect(noKey.text).toContain(`href="/console/requests/${id}"`);
});
