import { RECENT_ACCOUNTS, RECENT_ENTRY_BYTES, RECENT_PER_ACCOUNT, RecentRequests, recentLogKeys, type RecentRequest } from '../../src/kernel/requestLog';
import { randomBase62 } from '../../src/lib/ids';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createAccount } from '../helpers/fixtures';
import { until } from '../helpers/queues';

// The recent requests of each account, failed or not (the console's request log): what a request
// leaves there (a line, no body), the bounds per account, in accounts and per entry, in each
// process and in Redis, and that Redis gets them in batches, not a round trip per request.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await until(() => t.runtime.redis.status === 'ready');
});
afterAll(() => t.close());

const line = (i: number, account = 'acct_1', changes: Partial<RecentRequest> = {}): RecentRequest => ({
  requestId: `req_${i}`,
  account,
  receivedAtMs: 1795000000000 + i,
  method: 'GET',
  path: `/v1/customers/cus_${i}`,
  route: '/v1/customers/{customer}',
  status: 200,
  idempotencyKey: null,
  key: 'sk_test_…abcd',
  stripeAccount: null,
  console: false,
  ...changes,
});

test('each account keeps its latest requests, newest first; the least recently active accounts go first', async () => {
  const log = new RecentRequests();
  for (let i = 0; i <= RECENT_PER_ACCOUNT; i++) log.record(line(i));
  const kept = await log.of('acct_1');
  expect(kept).toHaveLength(RECENT_PER_ACCOUNT);
  expect(kept[0]).toEqual(line(RECENT_PER_ACCOUNT));
  expect(kept.at(-1)!.requestId).toBe('req_1');
  for (let a = 2; a <= RECENT_ACCOUNTS; a++) log.record(line(1000 + a, `acct_${a}`));
  // acct_1 wrote before every other, but writes again: acct_2 is now the least recent.
  log.record(line(5000));
  log.record(line(6000, 'acct_new'));
  expect(log.usage().accounts).toBe(RECENT_ACCOUNTS);
  expect(await log.of('acct_2')).toEqual([]);
  expect((await log.of('acct_1'))[0].requestId).toBe('req_5000');
  expect(await log.of('acct_new')).toEqual([line(6000, 'acct_new')]);
  expect(await log.of('acct_nobody')).toEqual([]);
});

test('an entry is cut to its byte budget', async () => {
  const log = new RecentRequests();
  log.record(line(1, 'acct_1', { path: `/v1/customers/${'x'.repeat(100_000)}`, idempotencyKey: 'k'.repeat(10_000), route: 'r'.repeat(5_000) }));
  log.record(line(2, 'acct_1', { path: `/v1/customers/${'😀'.repeat(50_000)}`, idempotencyKey: '€'.repeat(255) }));
  for (const entry of await log.of('acct_1')) expect(Buffer.byteLength(JSON.stringify(entry))).toBeLessThanOrEqual(RECENT_ENTRY_BYTES);
});

describe('in Redis', () => {
  const prefix = `test${randomBase62(8)}`;
  afterAll(async () => {
    const left = await t.runtime.redis.keys(`${prefix}:recentlog*`);
    if (left.length > 0) await t.runtime.redis.del(...left);
  });

  test('another process reads what this one recorded, sent in batches; Redis keeps the same bounds, and forgets in a day', async () => {
    const shared = { redis: t.runtime.redis, prefix };
    const here = new RecentRequests(shared);
    const there = new RecentRequests(shared);
    const evals = jest.spyOn(t.runtime.redis, 'eval');
    try {
      for (let i = 0; i < 3 * RECENT_PER_ACCOUNT; i++) here.record(line(i, 'acct_a'));
      await here.flush();
      // 300 requests, at most one script call per 500 (RECENT_BATCH) and one for the rest.
      expect(evals.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      evals.mockRestore();
    }
    const read = await there.of('acct_a');
    expect(read).toHaveLength(RECENT_PER_ACCOUNT);
    expect(read[0]).toEqual(line(3 * RECENT_PER_ACCOUNT - 1, 'acct_a'));
    const keys = recentLogKeys(prefix);
    expect(await t.runtime.redis.llen(`${keys.list}acct_a`)).toBe(RECENT_PER_ACCOUNT);
    expect(await t.runtime.redis.ttl(`${keys.list}acct_a`)).toBeGreaterThan(0);
    expect(await t.runtime.redis.ttl(keys.accounts)).toBeGreaterThan(0);

    for (let a = 0; a < RECENT_ACCOUNTS + 5; a++) here.record(line(10_000 + a, `acct_many${a}`));
    await here.flush();
    expect(await t.runtime.redis.zcard(keys.accounts)).toBe(RECENT_ACCOUNTS);
    const lists = (await t.runtime.redis.keys(`${keys.list}*`)).length;
    expect(lists).toBe(RECENT_ACCOUNTS);
    // The least recently written went, with their lists: acct_a first.
    expect(await t.runtime.redis.exists(`${keys.list}acct_a`)).toBe(0);
    expect(await there.of('acct_a')).toEqual([]);
  });

  test('what this process has not sent yet is read from its own ring', async () => {
    const here = new RecentRequests({ redis: t.runtime.redis, prefix });
    here.record(line(1, 'acct_unsent'));
    expect((await here.of('acct_unsent')).map((r) => r.requestId)).toEqual(['req_1']);
    await here.flush();
    expect((await here.of('acct_unsent')).map((r) => r.requestId)).toEqual(['req_1']);
  });
});

describe('what a request leaves', () => {
  test('every answer to a key: its line (method, path, status, idempotency key, masked key), no body', async () => {
    const key = newTestKey();
    const account = (await t.http().get('/v1/account').set(bearer(key))).body.id as string;
    const created = await t.http().post('/v1/customers').set(bearer(key)).set('Idempotency-Key', 'recent-1').type('form').send('name=Secret%20name');
    expect(created.status).toBe(200);
    const missing = await t.http().get('/v1/customers/cus_missing123').set(bearer(key));
    expect(missing.status).toBe(404);
    const unknown = await t.http().get('/v1/nothing-here').set(bearer(key));
    expect(unknown.status).toBe(404);
    const lines = await t.requestLog.recent.of(account);
    const byId = (res: { headers: Record<string, unknown> }) => lines.find((l) => l.requestId === res.headers['request-id']);
    expect(byId(created)).toMatchObject({
      method: 'POST',
      path: '/v1/customers',
      route: '/v1/customers',
      status: 200,
      idempotencyKey: 'recent-1',
      key: `sk_test_…${key.slice(-4)}`,
      stripeAccount: null,
      console: false,
    });
    expect(byId(missing)).toMatchObject({ method: 'GET', path: '/v1/customers/cus_missing123', route: '/v1/customers/{customer}', status: 404, idempotencyKey: null });
    expect(byId(unknown)).toMatchObject({ path: '/v1/nothing-here', route: 'unmatched', status: 404 });
    expect(JSON.stringify(lines)).not.toContain('Secret name');
    expect(JSON.stringify(lines)).not.toContain(key);
    // Newest first.
    expect(lines.slice(0, 3).map((l) => l.requestId)).toEqual([unknown, missing, created].map((r) => r.headers['request-id']));
  });

  test('a request as a connected account names it; one without a valid key leaves nothing', async () => {
    const key = newTestKey();
    const account = (await t.http().get('/v1/account').set(bearer(key))).body.id as string;
    const connected = (await createAccount(t, key)).id as string;
    const res = await t.http().get('/v1/customers').set(bearer(key)).set('Stripe-Account', connected);
    expect(res.status).toBe(200);
    expect((await t.requestLog.recent.of(account)).find((l) => l.requestId === res.headers['request-id'])).toMatchObject({ stripeAccount: connected });
    expect(await t.requestLog.recent.of(connected)).toEqual([]);
    const before = t.requestLog.recent.usage();
    const bad = await t.http().get('/v1/customers').set('Authorization', 'Bearer ');
    expect(bad.status).toBe(401);
    expect(t.requestLog.recent.usage()).toEqual(before);
  });
});
