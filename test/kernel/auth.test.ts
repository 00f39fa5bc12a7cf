import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { Authenticator, createPlatformAccount, extractKey, generateKey, generatePublishableKey, hashKey, maskKey } from '../../src/kernel/auth';
import { systemClock } from '../../src/lib/clock';
import { newId, randomBase62 } from '../../src/lib/ids';
import { accountOf, CREATE_BODY, createEndpoint, ENDPOINTS, expectError, mustCreate } from './util';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const NO_KEY =
  "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.";

const basic = (user: string, password = '') => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

/** A connected account of the key's platform, inserted directly. */
async function connectedAccountOf(app: TestApp, platformKey: string): Promise<string> {
  const platform = await accountOf(app, platformKey);
  const id = newId('acct', 16);
  await app.runtime.prisma.account.create({ data: { id, parentAccountId: platform, created: Math.floor(Date.now() / 1000) } });
  return id;
}

describe('how the key is sent', () => {
  test('Bearer', async () => {
    const res = await t.http().get(ENDPOINTS).set(bearer(newTestKey()));
    expect(res.status).toBe(200);
  });

  test('HTTP Basic with the key as user name and an empty password reaches the same account', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const res = await t.http().get(`${ENDPOINTS}/${created.id}`).set(basic(key));
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(created.id);
  });

  test('the SDK authenticates', async () => {
    const key = newTestKey();
    const created = await t.stripe(key).webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/sdk`, enabled_events: ['*'] });
    expect(created.id).toMatch(/^we_/);
    expect((await t.runtime.prisma.webhookEndpoint.findUnique({ where: { id: created.id } }))?.accountId).toBe(await accountOf(t, key));
  });

  test('extractKey reads Bearer (any case), Basic, and a bare key', () => {
    expect(extractKey('Bearer sk_test_abc')).toBe('sk_test_abc');
    expect(extractKey('bearer sk_test_abc')).toBe('sk_test_abc');
    expect(extractKey(basic('sk_test_abc').Authorization)).toBe('sk_test_abc');
    expect(extractKey(`Basic ${Buffer.from('sk_test_abc').toString('base64')}`)).toBe('sk_test_abc');
    expect(extractKey('sk_test_abc')).toBe('sk_test_abc');
    expect(extractKey(undefined)).toBeUndefined();
    expect(extractKey('Bearer ')).toBe('');
  });
});

describe('refusals', () => {
  test('no key: 401 with the public message', async () => {
    const res = await t.http().get(ENDPOINTS);
    expectError(res, 401, { message: NO_KEY });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  test('an empty Bearer value is "no key"', async () => {
    expectError(await t.http().get(ENDPOINTS).set('Authorization', 'Bearer '), 401, { message: NO_KEY });
  });

  test('a malformed key: 401, masked, last four shown', async () => {
    const key = 'sk_test_abc-def!wxyz';
    const res = await t.http().get(ENDPOINTS).set(bearer(key));
    expectError(res, 401, { message: `Invalid API Key provided: sk_test_${'*'.repeat(8)}wxyz` });
    expect(res.text).not.toContain('abc-def');
  });

  test('a restricted key in open mode works like a secret key: an account of its own', async () => {
    const key = `rk_test_${randomBase62(24)}`;
    const created = await t.http().post(ENDPOINTS).set(bearer(key)).type('form').send(`url=${CLOSED_ORIGIN}/h&enabled_events[]=*`);
    expect(created.status).toBe(200);
    const listed = await t.http().get(ENDPOINTS).set(bearer(key));
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([created.body.id]);
    expect((await t.http().get(ENDPOINTS).set(bearer(newTestKey()))).body.data).toEqual([]);
  });

  test('a live restricted key: 401 saying live mode is disabled, masked', async () => {
    const res = await t.http().get(ENDPOINTS).set(bearer(`rk_live_${'r'.repeat(20)}abcd`));
    expect(expectError(res, 401, {}).message).toContain(`rk_live_${'*'.repeat(20)}abcd`);
  });

  test('a live key: 401 saying live mode is disabled', async () => {
    const key = `sk_live_${'L'.repeat(20)}9876`;
    const res = await t.http().get(ENDPOINTS).set(bearer(key));
    const error = expectError(res, 401, {});
    expect(error.message).toMatch(/live mode is disabled/i);
    expect(error.message).toContain(`sk_live_${'*'.repeat(20)}9876`);
    expect(res.text).not.toContain('L'.repeat(20));
  });

  test('maskKey keeps the prefix and the last four', () => {
    expect(maskKey('sk_test_1234567890abcd')).toBe('sk_test_**********abcd');
    expect(maskKey('rk_live_xyzabcd')).toBe('rk_live_***abcd');
    expect(maskKey('sk_test_abc')).toBe('sk_test_***');
    expect(maskKey('garbage1234')).toBe('*******1234');
  });

  test('the SDK raises StripeAuthenticationError for a 401', async () => {
    const err = await t.stripe(`sk_live_${'x'.repeat(24)}`).webhookEndpoints.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(401);
  });
});

describe('open mode', () => {
  test('a new key gets its own acct_, stored by hash only', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const row = await t.runtime.prisma.apiKey.findUnique({ where: { keyHash: hashKey(key) } });
    expect(row).toMatchObject({ keyHash: hashKey(key), hint: maskKey(key), origin: 'open' });
    expect(row!.accountId).toMatch(/^acct_[A-Za-z0-9]{16}$/);
    expect(JSON.stringify(row)).not.toContain(key);
    const account = await t.runtime.prisma.account.findUnique({ where: { id: row!.accountId } });
    // No version pinned yet: that is for the first request that sends Stripe-Version.
    expect(account).toMatchObject({ parentAccountId: null, defaultApiVersion: null });
  });

  test('two keys get two accounts', async () => {
    const a = newTestKey();
    const b = newTestKey();
    await t.http().get(ENDPOINTS).set(bearer(a));
    await t.http().get(ENDPOINTS).set(bearer(b));
    expect(await accountOf(t, a)).not.toBe(await accountOf(t, b));
  });

  test('the key keeps its account across a restart', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const account = await accountOf(t, key);
    const restarted = await startTestApp();
    try {
      const res = await restarted.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(key));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(created.id);
      expect(await accountOf(restarted, key)).toBe(account);
      expect(await restarted.runtime.prisma.apiKey.count({ where: { accountId: account } })).toBe(1);
    } finally {
      await restarted.close();
    }
  });

  test("two keys never see each other's objects", async () => {
    const owner = newTestKey();
    const other = newTestKey();
    const created = await mustCreate(t, owner);
    await mustCreate(t, other, `url=${CLOSED_ORIGIN}/other&enabled_events[]=*`);
    const missing = { code: 'resource_missing', param: 'id', message: `No such webhook endpoint: '${created.id}'` };

    expectError(await t.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(other)), 404, missing);
    expectError(await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(other)).type('form').send('description=stolen'), 404, missing);
    expectError(await t.http().delete(`${ENDPOINTS}/${created.id}`).set(bearer(other)), 404, missing);
    const listed = await t.http().get(`${ENDPOINTS}?limit=100`).set(bearer(other));
    expect(listed.body.data.map((e: any) => e.id)).not.toContain(created.id);
    expect(listed.body.data).toHaveLength(1);

    // Still there and untouched for its owner.
    const mine = await t.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(owner));
    expect(mine.status).toBe(200);
    expect(mine.body.description).toBeNull();
  });
});

describe('registered mode', () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await startTestApp({ AUTH_MODE: 'registered' });
  });
  afterAll(() => r.close());

  test('an unknown key is refused with the masked message and no account is made', async () => {
    const key = `sk_test_${'u'.repeat(20)}abcd`;
    const res = await r.http().get(ENDPOINTS).set(bearer(key));
    expectError(res, 401, { message: `Invalid API Key provided: sk_test_${'*'.repeat(20)}abcd` });
    expect(await r.runtime.prisma.apiKey.findUnique({ where: { keyHash: hashKey(key) } })).toBeNull();
  });

  test('a key made as `npm run keys -- create` does works, and only its hash is stored', async () => {
    const key = generateKey();
    expect(key).toMatch(/^sk_test_[A-Za-z0-9]{99}$/);
    const account = await createPlatformAccount(r.runtime.prisma, systemClock, { keyHash: hashKey(key), hint: maskKey(key), origin: 'registered' });
    const res = await r.http().post(ENDPOINTS).set(bearer(key)).type('form').send(CREATE_BODY);
    expect(res.status).toBe(200);
    const row = await r.runtime.prisma.webhookEndpoint.findUnique({ where: { id: res.body.id } });
    expect(row?.accountId).toBe(account.id);
    const stored = await r.runtime.prisma.$queryRaw<Record<string, unknown>[]>`SELECT * FROM api_keys WHERE account_id = ${account.id}`;
    expect(stored).toHaveLength(1);
    expect(stored[0].key_hash).toBe(hashKey(key));
    expect(stored[0].origin).toBe('registered');
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(JSON.stringify(stored)).not.toContain(key.slice(8, 40));
  });

  test('a key an open-mode app registered earlier still works (the table is shared)', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    expect((await r.http().get(ENDPOINTS).set(bearer(key))).status).toBe(200);
  });
});

describe('Stripe-Account', () => {
  const PERMISSION = (key: string, account: string) =>
    `The provided key '${maskKey(key)}' does not have access to account '${account}' (or that account does not exist). Application access may have been revoked.`;

  test('a connected account of this platform works and scopes objects to it', async () => {
    const platform = newTestKey();
    await t.http().get(ENDPOINTS).set(bearer(platform));
    const connected = await connectedAccountOf(t, platform);
    const asConnected = { ...bearer(platform), 'Stripe-Account': connected };

    const created = await createEndpoint(t, platform, CREATE_BODY, { 'Stripe-Account': connected });
    expect(created.status).toBe(200);
    const row = await t.runtime.prisma.webhookEndpoint.findUnique({ where: { id: created.body.id } });
    expect(row?.accountId).toBe(connected);

    expect((await t.http().get(`${ENDPOINTS}/${created.body.id}`).set(asConnected)).status).toBe(200);
    expectError(await t.http().get(`${ENDPOINTS}/${created.body.id}`).set(bearer(platform)), 404, { code: 'resource_missing' });
    expect((await t.http().get(ENDPOINTS).set(bearer(platform))).body.data).toEqual([]);
    expect((await t.http().get(ENDPOINTS).set(asConnected)).body.data.map((e: any) => e.id)).toEqual([created.body.id]);

    const own = await mustCreate(t, platform);
    expectError(await t.http().get(`${ENDPOINTS}/${own.id}`).set(asConnected), 404, { code: 'resource_missing' });
  });

  test('the platform id itself acts as the platform', async () => {
    const platform = newTestKey();
    const own = await mustCreate(t, platform);
    const res = await t.http().get(`${ENDPOINTS}/${own.id}`).set(bearer(platform)).set('Stripe-Account', await accountOf(t, platform));
    expect(res.status).toBe(200);
  });

  test('the SDK sends stripeAccount', async () => {
    const platform = newTestKey();
    await t.http().get(ENDPOINTS).set(bearer(platform));
    const connected = await connectedAccountOf(t, platform);
    const created = await t.stripe(platform).webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/c`, enabled_events: ['*'] }, { stripeAccount: connected });
    expect((await t.runtime.prisma.webhookEndpoint.findUnique({ where: { id: created.id } }))?.accountId).toBe(connected);
  });

  test('an unknown account is a 403 with the public message', async () => {
    const key = newTestKey();
    const res = await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Account', 'acct_doesnotexist1');
    expectError(res, 403, { message: PERMISSION(key, 'acct_doesnotexist1') });
    expect(res.text).not.toContain(key);
  });

  test("another platform's connected account is a 403, for every operation", async () => {
    const owner = newTestKey();
    await t.http().get(ENDPOINTS).set(bearer(owner));
    const connected = await connectedAccountOf(t, owner);
    const created = await createEndpoint(t, owner, CREATE_BODY, { 'Stripe-Account': connected });
    expect(created.status).toBe(200);

    const intruder = newTestKey();
    const headers = { ...bearer(intruder), 'Stripe-Account': connected };
    const expected = { message: PERMISSION(intruder, connected) };
    expectError(await t.http().get(ENDPOINTS).set(headers), 403, expected);
    expectError(await t.http().get(`${ENDPOINTS}/${created.body.id}`).set(headers), 403, expected);
    expectError(await t.http().post(ENDPOINTS).set(headers).type('form').send(CREATE_BODY), 403, expected);
    expectError(await t.http().delete(`${ENDPOINTS}/${created.body.id}`).set(headers), 403, expected);
    expect(await t.runtime.prisma.webhookEndpoint.count({ where: { accountId: connected } })).toBe(1);
  });

  test('a platform account is not a connected account of another platform', async () => {
    const a = newTestKey();
    const b = newTestKey();
    await t.http().get(ENDPOINTS).set(bearer(b));
    const res = await t.http().get(ENDPOINTS).set(bearer(a)).set('Stripe-Account', await accountOf(t, b));
    expectError(res, 403, {});
  });

  test('a malformed account id is a 403, its echo bounded', async () => {
    const key = newTestKey();
    const res = await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Account', `not_an_account${'x'.repeat(300)}`);
    const error = expectError(res, 403, {});
    expect(error.message.length).toBeLessThan(400);
  });

  describe('access to a connected account is cached only while deletions are heard', () => {
    const get = (key: string, connected: string) => t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Account', connected);
    /** Deletes the row with triggers off, so no process hears of it: only a cache would still answer. */
    const deleteUnheard = (id: string) =>
      t.runtime.prisma.$transaction([
        t.runtime.prisma.$executeRawUnsafe(`SET LOCAL session_replication_role = replica`),
        t.runtime.prisma.$executeRaw`DELETE FROM accounts WHERE id = ${id}`,
      ]);
    const eventually = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await check()).toBe(true);
    };

    test('a deleted connected account is refused once its deletion is heard', async () => {
      await t.runtime.notifications.ready();
      const key = newTestKey();
      await t.http().get(ENDPOINTS).set(bearer(key));
      const connected = await connectedAccountOf(t, key);
      expect((await get(key, connected)).status).toBe(200);
      await t.runtime.prisma.account.delete({ where: { id: connected } });
      await eventually(async () => (await get(key, connected)).status === 403);
      expectError(await get(key, connected), 403, { code: 'account_invalid', message: PERMISSION(key, connected) });
    });

    test('reads take the cache (a deletion nobody announced still passes a GET, not a write), until its notification', async () => {
      await t.runtime.notifications.ready();
      const key = newTestKey();
      await t.http().get(ENDPOINTS).set(bearer(key));
      const connected = await connectedAccountOf(t, key);
      expect((await get(key, connected)).status).toBe(200);
      await deleteUnheard(connected);
      expect((await get(key, connected)).status).toBe(200);
      // A write always asks: none can write under an account deleted a moment ago.
      expectError(await createEndpoint(t, key, CREATE_BODY, { 'Stripe-Account': connected }), 403, { code: 'account_invalid' });
      await t.runtime.prisma.$executeRaw`SELECT pg_notify('account_revoked', ${connected})`;
      await eventually(async () => (await get(key, connected)).status === 403);
    });

    test('when the notification connection drops, the cache is emptied and nothing is cached until it is back', async () => {
      await t.runtime.notifications.ready();
      const key = newTestKey();
      await t.http().get(ENDPOINTS).set(bearer(key));
      const [a, b] = [await connectedAccountOf(t, key), await connectedAccountOf(t, key)];
      expect((await get(key, a)).status).toBe(200);
      // End the listening backend from the server side, as a PostgreSQL restart would.
      await t.runtime.prisma.$queryRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`;
      await eventually(async () => !t.runtime.notifications.live);
      await deleteUnheard(a);
      expect((await get(key, a)).status).toBe(403);
      await eventually(async () => t.runtime.notifications.live);
      expect((await get(key, b)).status).toBe(200);
      await deleteUnheard(b);
      expect((await get(key, b)).status).toBe(200);
    });
  });

  test('the SDK raises StripePermissionError for a 403', async () => {
    const err = await t.stripe(newTestKey()).webhookEndpoints.list({}, { stripeAccount: 'acct_nobodyhere1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripePermissionError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(403);
  });
});

describe('SDK error classes for the rest', () => {
  test('400 and 404 are StripeInvalidRequestError', async () => {
    const stripe = t.stripe(newTestKey());
    const bad = await stripe.webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/x`, enabled_events: ['*'], bogus: 1 } as any).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((bad as Stripe.errors.StripeError).statusCode).toBe(400);
    expect((bad as Stripe.errors.StripeError).code).toBe('parameter_unknown');
    expect((bad as Stripe.errors.StripeError).param).toBe('bogus');
    const missing = await stripe.webhookEndpoints.retrieve('we_nothere').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((missing as Stripe.errors.StripeError).statusCode).toBe(404);
    expect((missing as Stripe.errors.StripeError).code).toBe('resource_missing');
  });
});

describe("the platform's default API version", () => {
  const version = async (key: string, headers: Record<string, string> = {}) =>
    (await t.http().get(ENDPOINTS).set(bearer(key)).set(headers)).headers['stripe-version'];
  const stored = async (key: string) =>
    (await t.runtime.prisma.account.findUnique({ where: { id: await accountOf(t, key) }, select: { defaultApiVersion: true } }))!.defaultApiVersion;

  test('is DEFAULT_API_VERSION until a request sends Stripe-Version; the first that does pins it', async () => {
    const key = newTestKey();
    expect(await version(key)).toBe(t.config.defaultApiVersion);
    expect(await stored(key)).toBeNull();
    expect(await version(key, { 'Stripe-Version': '2024-06-20' })).toBe('2024-06-20');
    expect(await stored(key)).toBe('2024-06-20');
    expect(await version(key)).toBe('2024-06-20');
    // Later versions apply to their own request; the pin stays.
    expect(await version(key, { 'Stripe-Version': '2025-03-31.basil' })).toBe('2025-03-31.basil');
    expect(await stored(key)).toBe('2024-06-20');
    expect(await version(key)).toBe('2024-06-20');
  });

  test('an unknown version pins nothing; beta flags are dropped; acting as a connected account pins the platform', async () => {
    const key = newTestKey();
    await version(key);
    expect((await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Version', 'bogus')).status).toBe(400);
    expect(await stored(key)).toBeNull();
    const connected = await connectedAccountOf(t, key);
    expect(await version(key, { 'Stripe-Version': '2025-09-30.clover; some_beta=v1', 'Stripe-Account': connected })).toBe('2025-09-30.clover');
    expect(await stored(key)).toBe('2025-09-30.clover');
    expect(await version(key, { 'Stripe-Account': connected })).toBe('2025-09-30.clover');
  });

  test('the SDK pins the version it sends', async () => {
    const key = newTestKey();
    await t.stripe(key).webhookEndpoints.list();
    expect(await stored(key)).toBe('2026-10-28.endive');
  });

  test('two processes pinning at once agree on the first', async () => {
    const key = newTestKey();
    await version(key);
    const processes = [1, 2].map(() => new Authenticator(t.runtime.prisma, 'open', systemClock, 60, t.config.defaultApiVersion));
    const headers = (v?: string) => ({ authorization: `Bearer ${key}`, ...(v ? { 'stripe-version': v } : {}) });
    // Both cached the key unpinned.
    for (const p of processes) expect((await p.identify(headers())).defaultApiVersion).toBe(t.config.defaultApiVersion);
    expect((await processes[0].identify(headers('2023-10-16'))).defaultApiVersion).toBe('2023-10-16');
    expect((await processes[1].identify(headers('2024-04-10'))).defaultApiVersion).toBe('2023-10-16');
    expect((await processes[1].identify(headers())).defaultApiVersion).toBe('2023-10-16');
    expect(await stored(key)).toBe('2023-10-16');
  });

  test('a pinned key costs no write: the pin is cached with the key', async () => {
    const key = newTestKey();
    const auth = new Authenticator(t.runtime.prisma, 'open', systemClock, 60, t.config.defaultApiVersion);
    const headers = { authorization: `Bearer ${key}`, 'stripe-version': '2024-06-20' };
    await auth.identify(headers);
    const queries: string[] = [];
    const spy = jest.spyOn(t.runtime.prisma.account, 'updateMany').mockImplementation(((...args: unknown[]) => {
      queries.push(JSON.stringify(args));
      throw new Error('no write expected');
    }) as never);
    try {
      for (let i = 0; i < 3; i++) expect((await auth.identify(headers)).defaultApiVersion).toBe('2024-06-20');
    } finally {
      spy.mockRestore();
    }
    expect(queries).toEqual([]);
  });
});

describe('DEFAULT_API_VERSION', () => {
  let other: TestApp;
  beforeAll(async () => {
    other = await startTestApp({ DEFAULT_API_VERSION: '2025-03-31.basil' });
  });
  afterAll(() => other.close());

  test('is the version of platforms that pinned none, and of answers before the key is known', async () => {
    const key = newTestKey();
    expect((await other.http().get(ENDPOINTS).set(bearer(key))).headers['stripe-version']).toBe('2025-03-31.basil');
    expect((await other.http().get(ENDPOINTS)).headers['stripe-version']).toBe('2025-03-31.basil');
    expect((await other.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Version', '2024-06-20')).headers['stripe-version']).toBe('2024-06-20');
    expect((await other.http().get(ENDPOINTS).set(bearer(key))).headers['stripe-version']).toBe('2024-06-20');
  });
});

describe('publishable keys (pk_test_)', () => {
  const SECRET_KEY_REQUIRED = {
    code: 'secret_key_required',
    message:
      'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.',
  };
  /** A secret key and, in open mode, its publishable key. */
  const pair = (): { sk: string; pk: string } => {
    const sk = newTestKey();
    return { sk, pk: `pk_test_${sk.slice('sk_test_'.length)}` };
  };
  const createCard = (key: string, headers: Record<string, string> = {}) =>
    t.http().post('/v1/payment_methods').set(bearer(key)).set(headers).type('form').send('type=card&card[token]=tok_visa');

  test("open mode: pk_test_X creates PaymentMethods in sk_test_X's account, whichever key came first", async () => {
    for (const pkFirst of [false, true]) {
      const { sk, pk } = pair();
      if (!pkFirst) await t.http().get(ENDPOINTS).set(bearer(sk));
      const created = await createCard(pk);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ object: 'payment_method', type: 'card' });
      const row = await t.runtime.prisma.paymentMethod.findUnique({ where: { id: created.body.id } });
      expect(row?.accountId).toBe(await accountOf(t, sk));
      expect((await t.http().get(`/v1/payment_methods/${created.body.id}`).set(bearer(sk))).body.id).toBe(created.body.id);
      // The publishable key is no key of its own: only the secret key's row exists.
      expect(await t.runtime.prisma.apiKey.findUnique({ where: { keyHash: hashKey(pk) } })).toBeNull();
    }
  });

  test('every other operation answers the public 401 secret_key_required, and changes nothing', async () => {
    const { sk, pk } = pair();
    const card = (await createCard(sk)).body;
    expectError(await t.http().get('/v1/customers').set(bearer(pk)), 401, SECRET_KEY_REQUIRED);
    expectError(await t.http().post('/v1/customers').set(bearer(pk)).type('form').send('email=a@example.com'), 401, SECRET_KEY_REQUIRED);
    expectError(await t.http().get(`/v1/payment_methods/${card.id}`).set(bearer(pk)), 401, SECRET_KEY_REQUIRED);
    expectError(await t.http().get('/v1/payment_methods?type=card').set(bearer(pk)), 401, SECRET_KEY_REQUIRED);
    expectError(await t.http().delete(`${ENDPOINTS}/we_nothing`).set(bearer(pk)), 401, SECRET_KEY_REQUIRED);
    expect(await t.runtime.prisma.customer.count({ where: { accountId: await accountOf(t, sk) } })).toBe(0);
    // The SDKs raise their authentication error for it.
    const err = await t.stripe(pk).customers.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((err as Stripe.errors.StripeError).code).toBe('secret_key_required');
  });

  test('pk_live_ is refused like a live secret key, masked', async () => {
    const key = `pk_live_${'P'.repeat(20)}abcd`;
    const res = await createCard(key);
    const error = expectError(res, 401, {});
    expect(error.message).toMatch(/live mode is disabled/i);
    expect(error.message).toContain(`pk_live_${'*'.repeat(20)}abcd`);
    expect(res.text).not.toContain('P'.repeat(20));
  });

  test('maskKey masks a publishable key too; a malformed one is refused masked', async () => {
    expect(maskKey('pk_test_1234567890abcd')).toBe('pk_test_**********abcd');
    const res = await createCard('pk_test_abc-def!wxyz');
    expectError(res, 401, { message: `Invalid API Key provided: pk_test_${'*'.repeat(8)}wxyz` });
  });

  test('Stripe-Account works with a publishable key as with the secret key (Stripe.js stripeAccount)', async () => {
    const { sk, pk } = pair();
    await t.http().get(ENDPOINTS).set(bearer(sk));
    const connected = await connectedAccountOf(t, sk);
    const created = await createCard(pk, { 'Stripe-Account': connected });
    expect(created.status).toBe(200);
    expect((await t.runtime.prisma.paymentMethod.findUnique({ where: { id: created.body.id } }))?.accountId).toBe(connected);
    // Another platform's connected account: refused as for the secret key.
    const otherPlatform = newTestKey();
    await t.http().get(ENDPOINTS).set(bearer(otherPlatform));
    const foreign = await connectedAccountOf(t, otherPlatform);
    expectError(await createCard(pk, { 'Stripe-Account': foreign }), 403, { code: 'account_invalid' });
  });

  test("its requests are its platform's: one idempotency key space, one request log, and the log doesn't open with it", async () => {
    const { sk, pk } = pair();
    const first = await createCard(pk, { 'Idempotency-Key': 'pk-1' });
    expect(first.status).toBe(200);
    const replay = await createCard(sk, { 'Idempotency-Key': 'pk-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(first.body.id);

    const refused = await t.http().get('/v1/customers').set(bearer(pk));
    const url = new URL(refused.body.error.request_log_url);
    const page = () => t.http().get(url.pathname + url.search);
    let seen = 0;
    for (let i = 0; i < 50 && seen !== 200; i++) {
      seen = (await page().set(basic(sk))).status;
      if (seen !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toBe(200);
    const withPk = await page().set(basic(pk));
    expect(withPk.status).toBe(401);
    expect(withPk.headers['www-authenticate']).toMatch(/^Basic/);
    expect(withPk.text).not.toContain('secret_key_required');
    // No log line carries the key whole.
    expect(t.logText()).not.toContain(pk.slice(8));
  });
});

describe('publishable keys in registered mode', () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await startTestApp({ AUTH_MODE: 'registered' });
  });
  afterAll(() => r.close());

  test('a registered pair works; the publishable key is its own random key, stored as a hash', async () => {
    const [sk, pk] = [generateKey(), generatePublishableKey()];
    expect(pk).toMatch(/^pk_test_[A-Za-z0-9]{99}$/);
    const account = await createPlatformAccount(
      r.runtime.prisma,
      systemClock,
      [sk, pk].map((k) => ({ keyHash: hashKey(k), hint: maskKey(k), origin: 'registered' as const })),
    );
    const created = await r.http().post('/v1/payment_methods').set(bearer(pk)).type('form').send('type=card&card[token]=tok_visa');
    expect(created.status).toBe(200);
    expect((await r.runtime.prisma.paymentMethod.findUnique({ where: { id: created.body.id } }))?.accountId).toBe(account.id);
    expectError(await r.http().get('/v1/customers').set(bearer(pk)), 401, { code: 'secret_key_required' });
    expect((await r.http().get('/v1/customers').set(bearer(sk))).status).toBe(200);
    // Registered mode derives nothing: the publishable twin of the secret key is no key.
    const twin = `pk_test_${sk.slice(8)}`;
    expectError(await r.http().post('/v1/payment_methods').set(bearer(twin)).type('form').send('type=card&card[token]=tok_visa'), 401, {
      message: `Invalid API Key provided: ${maskKey(twin)}`,
    });
    const rows = await r.runtime.prisma.$queryRaw<Record<string, unknown>[]>`SELECT * FROM api_keys WHERE account_id = ${account.id}`;
    expect(rows.map((row) => row.hint).sort()).toEqual([maskKey(pk), maskKey(sk)].sort());
    expect(JSON.stringify(rows)).not.toContain(pk.slice(8, 40));
  });
});

describe('a publishable key counts against its platform rate limit', () => {
  let r: TestApp;
  const nowMs = Date.now();
  beforeAll(async () => {
    r = await startTestApp({ API_RATE_LIMIT: '3' }, { clock: { nowMs: () => nowMs } });
  });
  afterAll(() => r.close());

  test('secret and publishable requests share one bucket; a refused publishable request counts too', async () => {
    const sk = newTestKey();
    const pk = `pk_test_${sk.slice(8)}`;
    expect((await r.http().get(ENDPOINTS).set(bearer(sk))).status).toBe(200);
    expectError(await r.http().get(ENDPOINTS).set(bearer(pk)), 401, { code: 'secret_key_required' });
    expect((await r.http().post('/v1/payment_methods').set(bearer(pk)).type('form').send('type=card&card[token]=tok_visa')).status).toBe(200);
    expectError(await r.http().get(ENDPOINTS).set(bearer(sk)), 429, { code: 'rate_limit' });
  });
});
