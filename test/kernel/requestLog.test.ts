import { ENTRY_BYTES, KEPT, PROCESS_BYTES, REDIS_BYTES, RequestLog, requestLogKeys, type FailedRequest } from '../../src/kernel/requestLog';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/queues';
import { randomBase62 } from '../../src/lib/ids';
import type { Redis } from '../../src/lib/redis';

// The store of failed requests (its page: test/hosted/requestLogPage.test.ts): what it keeps, and
// that what a request can make it keep is bounded per entry and in all, in each process and in Redis.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // Recording is best effort: with Redis not yet connected, it records nothing there.
  await until(() => t.runtime.redis.status === 'ready');
});
afterAll(() => t.close());

const entry = (i: number, body = '{}'): FailedRequest => ({ requestId: `req_${i}`, account: 'acct_1', receivedAt: 1795000000, method: 'GET', route: '/v1/x', status: 400, body });
/** An error body of about `bytes` bytes, as JSON (quotes included, which storing escapes). */
const bigBody = (bytes: number) => JSON.stringify({ error: { message: 'x"'.repeat(bytes / 2) } });

test('the log keeps only the latest failures', async () => {
  const log = new RequestLog('http://127.0.0.1:8420');
  for (let i = 0; i <= KEPT; i++) log.record(entry(i));
  expect(await log.find('req_0')).toBeUndefined();
  expect(await log.find('req_1')).toEqual(entry(1));
  expect(await log.find(`req_${KEPT}`)).toEqual(entry(KEPT));
  expect(log.usage().entries).toBe(KEPT);
  expect(log.urlOf('req_1', 1795000000)).toBe('http://127.0.0.1:8420/test/logs/req_1?t=1795000000');
});

test('an entry past its budget is kept with its body cut, and says so', async () => {
  const log = new RequestLog('http://127.0.0.1:8420');
  log.record(entry(1, bigBody(255 * 1024)));
  const kept = (await log.find('req_1'))!;
  expect(kept.body).toMatch(/ … \(cut: the body was \d+ bytes\)$/);
  expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(ENTRY_BYTES);
  expect(log.usage().bytes).toBeLessThanOrEqual(ENTRY_BYTES);
  // A cut never leaves half a character behind.
  log.record(entry(2, JSON.stringify({ error: { message: 'é€😀'.repeat(20_000) } })));
  expect((await log.find('req_2'))!.body).not.toContain('\uFFFD');
});

test("a process's log stays within its byte budget, dropping the oldest first", async () => {
  const log = new RequestLog('http://127.0.0.1:8420');
  const n = 2 * Math.ceil(PROCESS_BYTES / ENTRY_BYTES);
  for (let i = 0; i < n; i++) log.record(entry(i, bigBody(ENTRY_BYTES)));
  const { entries, bytes } = log.usage();
  expect(bytes).toBeLessThanOrEqual(PROCESS_BYTES);
  expect(bytes).toBeGreaterThan(PROCESS_BYTES - ENTRY_BYTES);
  expect(entries).toBeLessThan(n);
  expect(await log.find('req_0')).toBeUndefined();
  expect(await log.find(`req_${n - entries}`)).toBeDefined();
  expect(await log.find(`req_${n - entries - 1}`)).toBeUndefined();
  expect(await log.find(`req_${n - 1}`)).toBeDefined();
});

test('only request ids are looked up', async () => {
  const log = new RequestLog('http://127.0.0.1:8420', { redis: t.runtime.redis, prefix: t.config.queuePrefix });
  expect(await log.find('bytes')).toBeUndefined();
  expect(await log.find('req_../x')).toBeUndefined();
});

/** Bytes the keys under `pattern` hold: their values (STRLEN, LRANGE) and Redis's own count (MEMORY USAGE). */
async function redisBytes(redis: Redis, pattern: string): Promise<{ keys: number; values: number; memory: number }> {
  const keys = await redis.keys(pattern);
  let values = 0;
  let memory = 0;
  for (const key of keys) {
    const type = await redis.type(key);
    values += type === 'list' ? (await redis.lrange(key, 0, -1)).reduce((n, v) => n + Buffer.byteLength(v), 0) : await redis.strlen(key);
    memory += Number(await redis.memory('USAGE', key));
  }
  return { keys: keys.length, values, memory };
}

describe('shared through Redis, so any process or replica shows it', () => {
  const prefix = `test${randomBase62(8)}`;
  const keys = () => t.runtime.redis.keys(`${prefix}:requestlog*`);
  afterEach(async () => {
    const left = await keys();
    if (left.length > 0) await t.runtime.redis.del(...left);
  });

  test("another process's log finds what this one recorded; the ring keeps the latest 1,000 in Redis too", async () => {
    const shared = { redis: t.runtime.redis, prefix };
    const here = new RequestLog('http://127.0.0.1:8420', shared);
    const there = new RequestLog('http://127.0.0.1:8420', shared);
    for (let i = 0; i <= KEPT; i++) here.record(entry(i));
    await until(async () => (await there.find(`req_${KEPT}`)) !== undefined);
    expect(await there.find(`req_${KEPT}`)).toEqual(entry(KEPT));
    expect(await there.find('req_1')).toEqual(entry(1));
    expect(await there.find('req_0')).toBeUndefined();
    const { ring, bytes } = requestLogKeys(prefix);
    expect(await t.runtime.redis.llen(ring)).toBe(KEPT);
    // The entries, the ring and its byte total.
    expect(await keys()).toHaveLength(KEPT + 2);
    const stored = Buffer.byteLength(JSON.stringify(entry(1)));
    expect(Number(await t.runtime.redis.get(bytes))).toBeGreaterThanOrEqual(KEPT * stored);
    for (const key of [`${prefix}:requestlog:req_1`, ring, bytes]) expect(await t.runtime.redis.ttl(key)).toBeGreaterThan(0);
  });

  test('large entries: Redis holds at most its byte budget, the oldest dropped first', async () => {
    const log = new RequestLog('http://127.0.0.1:8420', { redis: t.runtime.redis, prefix });
    const n = 2 * Math.ceil(REDIS_BYTES / ENTRY_BYTES);
    for (let i = 0; i < n; i++) log.record(entry(i, bigBody(255 * 1024)));
    const reader = new RequestLog('http://127.0.0.1:8420', { redis: t.runtime.redis, prefix });
    await until(async () => (await reader.find(`req_${n - 1}`)) !== undefined);
    expect(await reader.find('req_0')).toBeUndefined();

    const { ring, bytes } = requestLogKeys(prefix);
    const total = Number(await t.runtime.redis.get(bytes));
    expect(total).toBeLessThanOrEqual(REDIS_BYTES);
    const measured = await redisBytes(t.runtime.redis, `${prefix}:requestlog*`);
    // The total counts every entry's bytes as stored, and nothing else holds much.
    const entryKeys = (await keys()).filter((k) => k !== ring && k !== bytes);
    let entryBytes = 0;
    for (const key of entryKeys) entryBytes += await t.runtime.redis.strlen(key);
    expect(entryBytes).toBe(total);
    expect(measured.values).toBeLessThanOrEqual(REDIS_BYTES + 64 * 1024);
    // What Redis itself counts: the values and a little per key.
    expect(measured.memory).toBeLessThanOrEqual(REDIS_BYTES * 1.25);
    expect(await t.runtime.redis.llen(ring)).toBe(entryKeys.length);
  });
});

describe('many large bad requests', () => {
  // 255 KB unknown parameter names, under BODY_LIMIT_BYTES (256 KiB): the 1,000 of them
  // took the API's heap to 2.66 GB and Redis to 1.23 GB. Each answer, and each entry, is small now.
  const REQUESTS = 40;
  const name = 'x'.repeat(255 * 1024);

  test("keep the process's log and the Redis keys small: each entry is about the size of a short error", async () => {
    const key = newTestKey();
    for (let i = 0; i < REQUESTS; i++) {
      const res = await t.http().post('/v1/customers').set(bearer(key)).type('form').send(`${name}${i}=1`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('parameter_unknown');
      expect(res.text.length).toBeLessThan(1_000);
    }
    const { entries, bytes } = t.requestLog.usage();
    expect(entries).toBeGreaterThanOrEqual(REQUESTS);
    expect(bytes).toBeLessThan(entries * 1_500);
    const { ring } = requestLogKeys(t.config.queuePrefix);
    await until(async () => (await t.runtime.redis.llen(ring)) >= REQUESTS);
    const measured = await redisBytes(t.runtime.redis, `${t.config.queuePrefix}:requestlog*`);
    expect(measured.values).toBeLessThan(measured.keys * 1_500);
    expect(measured.memory).toBeLessThan(measured.keys * 2_000);
  });
});

test('a successful request is not logged', async () => {
  const res = await t.http().get('/v1/customers').set(bearer(newTestKey()));
  expect(res.status).toBe(200);
  expect(await t.requestLog.find(String(res.headers['request-id']))).toBeUndefined();
});

test('a request that never authenticated is not logged and links no log', async () => {
  const res = await t.http().get('/v1/customers/cus_nokey12345');
  expect(res.status).toBe(401);
  expect(res.body.error.request_log_url).toBeUndefined();
  expect(await t.requestLog.find(String(res.headers['request-id']))).toBeUndefined();
});

test('each entry records the platform whose key made the request', async () => {
  const key = newTestKey();
  const account = (await t.http().get('/v1/account').set(bearer(key))).body.id as string;
  const res = await t.http().get('/v1/customers/cus_missing123').set(bearer(key));
  expect(res.status).toBe(404);
  expect((await t.requestLog.find(String(res.headers['request-id'])))?.account).toBe(account);
});
