import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/queues';

// The page of a failed request (`request_log_url`): it shows what failed, to the key of the
// platform that made the request only.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** The path (and query) of an absolute URL, to open it on the test app. */
const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** HTTP Basic with the key as user name and no password, as `curl -u sk_test_…:` and a browser's sign-in box send it. */
const basic = (key: string) => ({ Authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });

/** A failed request of `key`'s platform, and its log page's path. */
async function failed(key: string, id = 'cus_missing123'): Promise<{ requestId: string; page: string }> {
  const res = await t.http().get(`/v1/customers/${id}`).set(bearer(key));
  expect(res.status).toBe(404);
  return { requestId: String(res.headers['request-id']), page: pathOf(res.body.error.request_log_url) };
}

test("an error's request_log_url opens, with its platform's key, a page that shows what failed", async () => {
  const key = newTestKey();
  const { requestId, page } = await failed(key);
  expect(page.startsWith(`/test/logs/${requestId}?t=`)).toBe(true);
  for (const credentials of [basic(key), bearer(key)]) {
    const res = await t.http().get(page).set(credentials);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.text).toContain('GET /v1/customers/{customer}');
    expect(res.text).toContain(requestId);
    expect(res.text).toContain('404');
    expect(res.text).toContain('No such customer: &#39;cus_missing123&#39;');
  }
});

test('without a key, or with a bad one, a browser is asked for one (401, WWW-Authenticate: Basic)', async () => {
  const { page } = await failed(newTestKey());
  for (const credentials of [{}, basic('sk_test_'), basic('not a key'), bearer('sk_live_abcdefgh'), { Authorization: 'Basic' }]) {
    const res = await t.http().get(page).set(credentials);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Sandbank"');
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('Sign in with your API key');
    expect(res.text).not.toContain('cus_missing123');
  }
});

test("another platform's key gets the same 404 as an id the log doesn't hold", async () => {
  const { requestId, page } = await failed(newTestKey(), 'cus_secret12345');
  const other = newTestKey();
  const theirs = await t.http().get(page).set(basic(other));
  const unknown = await t.http().get('/test/logs/req_notkept1234567?t=1795000000').set(basic(other));
  for (const res of [theirs, unknown]) {
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('No log for this request');
    expect(res.text).not.toContain('cus_secret12345');
  }
  // The same page but for the id it names: nothing tells that the other platform's request exists.
  expect(theirs.text.replaceAll(requestId, 'ID')).toBe(unknown.text.replaceAll('req_notkept1234567', 'ID'));
  expect(unknown.text).toContain('request_id');
});

test('unknown URLs are logged for the key they carried, by route template only', async () => {
  const key = newTestKey();
  const res = await t.http().post('/v1/nothing/here?secret=1').set(bearer(key));
  expect(res.status).toBe(404);
  const page = await t.http().get(pathOf(res.body.error.request_log_url)).set(basic(key));
  expect(page.status).toBe(200);
  expect(page.text).toContain('POST unmatched');
  // The page names the route, never the raw path or query: a hosted path is a credential.
  expect(page.text).not.toContain('secret=1');
  // Without a key there is no account to show it to: no log.
  const anonymous = await t.http().post('/v1/nothing/here');
  expect(anonymous.status).toBe(404);
  expect(anonymous.body.error.request_log_url).toBeUndefined();
});

test('a second app on the same Redis opens the page of a request the first answered', async () => {
  const other = await startTestApp({ QUEUE_PREFIX: t.config.queuePrefix });
  try {
    const key = newTestKey();
    const { page } = await failed(key, 'cus_elsewhere123');
    await until(async () => (await other.http().get(page).set(basic(key))).status === 200);
    expect((await other.http().get(page).set(basic(key))).text).toContain('No such customer: &#39;cus_elsewhere123&#39;');
    expect((await other.http().get(page).set(basic(newTestKey()))).status).toBe(404);
  } finally {
    await other.close();
  }
});

test('a successful request has no log page', async () => {
  const key = newTestKey();
  const res = await t.http().get('/v1/customers').set(bearer(key));
  expect(res.status).toBe(200);
  expect((await t.http().get(`/test/logs/${res.headers['request-id']}`).set(basic(key))).status).toBe(404);
});
