import { RequestLog } from '../../src/kernel/requestLog';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/queues';
import { randomBase62 } from '../../src/lib/ids';

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

test("an error's request_log_url opens a page that shows what failed", async () => {
  const res = await t.http().get('/v1/customers/cus_missing123').set(bearer(newTestKey()));
  expect(res.status).toBe(404);
  const url: string = res.body.error.request_log_url;
  expect(url.startsWith(`${t.config.publicUrl}/test/logs/${res.headers['request-id']}?t=`)).toBe(true);

  const page = await t.http().get(pathOf(url));
  expect(page.status).toBe(200);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  expect(page.headers['cache-control']).toBe('no-store');
  expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  expect(page.text).toContain('GET /v1/customers/{customer}');
  expect(page.text).toContain(res.headers['request-id']);
  expect(page.text).toContain('404');
  expect(page.text).toContain('No such customer: &#39;cus_missing123&#39;');
});

test('unknown URLs are logged too, by route template only', async () => {
  const res = await t.http().post('/v1/nothing/here?secret=1').set(bearer(newTestKey()));
  expect(res.status).toBe(404);
  const page = await t.http().get(pathOf(res.body.error.request_log_url));
  expect(page.status).toBe(200);
  expect(page.text).toContain('POST unmatched');
  // The page names the route, never the raw path or query: a hosted path is a credential.
  expect(page.text).not.toContain('secret=1');
});

test('a request it does not remember gets a page that says where to look', async () => {
  const page = await t.http().get('/test/logs/req_notkept1234567?t=1795000000');
  expect(page.status).toBe(404);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  expect(page.text).toContain('No log for this request');
  expect(page.text).toContain('req_notkept1234567');
  expect(page.text).toContain('request_id');
});

const entry = (i: number) => ({ requestId: `req_${i}`, receivedAt: 1795000000, method: 'GET', route: '/v1/x', status: 400, body: '{}' });

test('the log keeps only the latest failures', async () => {
  const log = new RequestLog('http://127.0.0.1:8420');
  for (let i = 0; i <= 1000; i++) log.record(entry(i));
  expect(await log.find('req_0')).toBeUndefined();
  expect(await log.find('req_1')).toEqual(entry(1));
  expect(await log.find('req_1000')).toEqual(entry(1000));
  expect(log.urlOf('req_1', 1795000000)).toBe('http://127.0.0.1:8420/test/logs/req_1?t=1795000000');
});

describe('shared through Redis, so any process or replica shows it', () => {
  const prefix = `test${randomBase62(8)}`;
  const keys = () => t.runtime.redis.keys(`${prefix}:requestlog*`);
  afterAll(async () => {
    const left = await keys();
    if (left.length > 0) await t.runtime.redis.del(...left);
  });

  test("another process's log finds what this one recorded; the ring keeps the latest 1,000 in Redis too", async () => {
    const shared = { redis: t.runtime.redis, prefix };
    const here = new RequestLog('http://127.0.0.1:8420', shared);
    const there = new RequestLog('http://127.0.0.1:8420', shared);
    for (let i = 0; i <= 1000; i++) here.record(entry(i));
    await until(async () => (await there.find('req_1000')) !== undefined);
    expect(await there.find('req_1000')).toEqual(entry(1000));
    expect(await there.find('req_1')).toEqual(entry(1));
    expect(await there.find('req_0')).toBeUndefined();
    expect(await t.runtime.redis.llen(`${prefix}:requestlog`)).toBe(1000);
    expect(await keys()).toHaveLength(1001);
    expect(await t.runtime.redis.ttl(`${prefix}:requestlog:req_1`)).toBeGreaterThan(0);
  });

  test('a second app on the same Redis opens the page of a request the first answered', async () => {
    const other = await startTestApp({ QUEUE_PREFIX: t.config.queuePrefix });
    try {
      const res = await t.http().get('/v1/customers/cus_elsewhere123').set(bearer(newTestKey()));
      expect(res.status).toBe(404);
      const url = pathOf(res.body.error.request_log_url);
      await until(async () => (await other.http().get(url)).status === 200);
      expect((await other.http().get(url)).text).toContain('No such customer: &#39;cus_elsewhere123&#39;');
    } finally {
      await other.close();
    }
  });
});

test('a successful request has no log page', async () => {
  const res = await t.http().get('/v1/customers').set(bearer(newTestKey()));
  expect(res.status).toBe(200);
  expect((await t.http().get(`/test/logs/${res.headers['request-id']}`)).status).toBe(404);
});
