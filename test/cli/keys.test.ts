import { createRegisteredKey, listKeys, main, revokeKey } from '../../src/cli/keys';
import { loadConfig } from '../../src/config';
import { hashKey } from '../../src/kernel/auth';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ AUTH_MODE: 'registered' });
});
afterAll(() => t.close());

test('the keys command makes a secret key and its publishable key, accepted in registered mode and stored only as hashes', async () => {
  const { key, publishableKey, accountId } = await createRegisteredKey(loadConfig(process.env));
  expect(key).toMatch(/^sk_test_[A-Za-z0-9]{99}$/);
  expect(publishableKey).toMatch(/^pk_test_[A-Za-z0-9]{99}$/);
  // Unrelated random parts: the public one tells nothing of the secret one.
  expect(publishableKey.slice(8)).not.toBe(key.slice(8));

  const res = await t.http().get('/v1/webhook_endpoints').set(bearer(key));
  expect(res.status).toBe(200);
  const card = await t.http().post('/v1/payment_methods').set(bearer(publishableKey)).type('form').send('type=card&card[token]=tok_visa');
  expect(card.status).toBe(200);
  expect((await t.runtime.prisma.paymentMethod.findUnique({ where: { id: card.body.id } }))?.accountId).toBe(accountId);
  expect((await t.http().get('/v1/webhook_endpoints').set(bearer(publishableKey))).body.error.code).toBe('secret_key_required');

  const rows = await t.runtime.prisma.apiKey.findMany({ where: { accountId }, orderBy: { hint: 'desc' } });
  expect(rows.map((r) => r.keyHash)).toEqual([hashKey(key), hashKey(publishableKey)]);
  expect(rows.map((r) => r.origin)).toEqual(['registered', 'registered']);
  expect(JSON.stringify(rows)).not.toContain(key.slice(8));
  expect(JSON.stringify(rows)).not.toContain(publishableKey.slice(8));
  const listed = (await listKeys(loadConfig(process.env))).filter((k) => k.accountId === accountId).map((k) => k.hint.slice(0, 8));
  expect(listed.sort()).toEqual(['pk_test_', 'sk_test_']);
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
  // The key, then the account's publishable key.
  expect(printed).toHaveLength(2);
  const [key, publishable] = printed;
  expect(key).toMatch(/^rk_test_[A-Za-z0-9]{99}$/);
  expect(publishable).toMatch(/^pk_test_[A-Za-z0-9]{99}$/);
  expect((await t.http().post('/v1/payment_methods').set(bearer(publishable)).type('form').send('type=card&card[token]=tok_visa')).status).toBe(200);
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
    const { key, publishableKey, accountId } = await createRegisteredKey(config);
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

    // Each key is revoked on its own: the publishable key still works until it is revoked too.
    expect((await listKeys(config)).filter((k) => k.accountId === accountId).map((k) => k.hint.slice(0, 8))).toEqual(['pk_test_']);
    expect((await uncached.http().get('/v1/account').set(bearer(publishableKey))).body.error.code).toBe('secret_key_required');
    expect(await revokeKey(config, publishableKey)).toEqual({ accountId });
    expect((await uncached.http().get('/v1/account').set(bearer(publishableKey))).body.error.message).toMatch(/^Invalid API Key provided: pk_test_\*+/);
    expect((await listKeys(config)).some((k) => k.accountId === accountId)).toBe(false);
    expect(await uncached.runtime.prisma.account.count({ where: { id: accountId } })).toBe(1);
    expect((await uncached.http().get('/v1/account').set(bearer(other.key))).status).toBe(200);
  });
});
