import { createRegisteredKey, listKeys, main, revokeKey } from '../../src/cli/keys';
import { loadConfig } from '../../src/config';
import { hashKey } from '../../src/kernel/auth';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ AUTH_MODE: 'registered' });
});
afterAll(() => t.close());

test('a key made by the keys command is accepted in registered mode and stored only as a hash', async () => {
  const { key, accountId } = await createRegisteredKey(loadConfig(process.env));
  expect(key).toMatch(/^sk_test_[A-Za-z0-9]{99}$/);

  const res = await t.http().get('/v1/webhook_endpoints').set(bearer(key));
  expect(res.status).toBe(200);

  const rows = await t.runtime.prisma.apiKey.findMany({ where: { accountId } });
  expect(rows).toHaveLength(1);
  expect(rows[0].keyHash).toBe(hashKey(key));
  expect(rows[0].origin).toBe('registered');
  expect(JSON.stringify(rows)).not.toContain(key.slice(8));
});

test('`keys create --restricted` makes an rk_test_ key that works like a secret key in registered mode', async () => {
  const printed: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
  const err = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    expect(await main(['create', '--restricted'])).toBe(0);
    expect(await main(['create', '--bogus'])).toBe(2);
  } finally {
    log.mockRestore();
    err.mockRestore();
  }
  expect(printed).toHaveLength(1);
  const key = printed[0];
  expect(key).toMatch(/^rk_test_[A-Za-z0-9]{99}$/);
  const res = await t.http().post('/v1/webhook_endpoints').set(bearer(key)).type('form').send('url=http://127.0.0.1:0/h&enabled_events[]=*');
  expect(res.status).toBe(200);
  expect((await listKeys(loadConfig(process.env))).some((k) => k.hint.startsWith('rk_test_') && k.hint.endsWith(key.slice(-4)))).toBe(true);
  // An unregistered restricted key is refused like an unregistered secret key.
  const unknown = await t.http().get('/v1/account').set(bearer(`rk_test_${'x'.repeat(24)}`));
  expect(unknown.status).toBe(401);
});

test('registered mode refuses a well-formed key nobody registered', async () => {
  const res = await t.http().get('/v1/webhook_endpoints').set(bearer(newTestKey()));
  expect(res.status).toBe(401);
  expect(res.body.error.message).toMatch(/^Invalid API Key provided: sk_test_\*+/);
});

describe('revoking a key', () => {
  let uncached: TestApp;
  let nowMs = Date.UTC(2026, 10, 23, 12, 0, 0);
  let cached: TestApp;
  beforeAll(async () => {
    uncached = await startTestApp({ AUTH_MODE: 'registered', API_KEY_CACHE_SECONDS: '0' });
    cached = await startTestApp({ AUTH_MODE: 'registered', API_KEY_CACHE_SECONDS: '30' }, { clock: { nowMs: () => nowMs } });
  });
  afterAll(async () => {
    await uncached.close();
    await cached.close();
  });

  test('the key stops working, at once without a cache and after API_KEY_CACHE_SECONDS with one; its account stays', async () => {
    const config = loadConfig(process.env);
    const { key, accountId } = await createRegisteredKey(config);
    const other = await createRegisteredKey(config);
    for (const app of [uncached, cached]) expect((await app.http().get('/v1/account').set(bearer(key))).status).toBe(200);
    expect((await listKeys(config)).map((k) => k.accountId)).toEqual(expect.arrayContaining([accountId, other.accountId]));

    expect(await revokeKey(config, key)).toEqual({ accountId });
    expect(await revokeKey(config, key)).toBeNull();
    expect((await uncached.http().get('/v1/account').set(bearer(key))).status).toBe(401);
    // A running process remembers the key until its cache entry expires.
    expect((await cached.http().get('/v1/account').set(bearer(key))).status).toBe(200);
    nowMs += 31_000;
    expect((await cached.http().get('/v1/account').set(bearer(key))).status).toBe(401);

    expect((await listKeys(config)).some((k) => k.accountId === accountId)).toBe(false);
    expect(await uncached.runtime.prisma.account.count({ where: { id: accountId } })).toBe(1);
    expect((await uncached.http().get('/v1/account').set(bearer(other.key))).status).toBe(200);
  });
});
