import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { createAccount, createAppSecret, form } from '../../helpers/fixtures';
import { privateDatabase, type PrivateDatabase } from '../../helpers/isolation';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { Encryption } from '../../../src/lib/encryption';
import { randomBase62 } from '../../../src/lib/ids';

// App secrets end to end: the four operations through supertest and the official SDK, replace
// semantics, scope validation, expiry on read (injected clock), isolation between keys and
// through Stripe-Account, and the payload kept out of the database (pg_dump included), the logs
// and error messages. The file has a database of its own, so no other file's worker sweeps it.

type Res = { status: number; body: any; headers: Record<string, string> };

let nowMs = Date.UTC(2026, 10, 25, 12, 0, 0);
const clock = { nowMs: () => nowMs };
const now = () => Math.floor(nowMs / 1000);

const SE = '/v1/apps/secrets';
const ACCOUNT = { type: 'account' };
const user = (id: string) => ({ type: 'user', user: id });

let db: PrivateDatabase;
let t: TestApp;
beforeAll(async () => {
  db = await privateDatabase('apps_secrets');
  t = await startTestApp({ DATABASE_URL: db.url }, { clock });
});
afterAll(async () => {
  await t.close();
  await db.drop();
});

const post = (key: string, path: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().post(path).set(bearer(key)).set(headers).type('form').send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>;
const get = (key: string, path: string, query: string | Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t
    .http()
    .get(`${path}?${typeof query === 'string' ? query : form(query)}`)
    .set(bearer(key))
    .set(headers) as unknown as Promise<Res>;

const create = (key: string, body: Record<string, unknown>, headers?: Record<string, string>) => post(key, SE, body, headers);
const find = (key: string, name: string, scope: Record<string, unknown> = ACCOUNT, headers?: Record<string, string>) =>
  get(key, `${SE}/find`, { name, scope }, headers);
const list = (key: string, scope: Record<string, unknown> = ACCOUNT, headers?: Record<string, string>) => get(key, SE, { scope }, headers);
const remove = (key: string, name: string, scope: Record<string, unknown> = ACCOUNT, headers?: Record<string, string>) =>
  post(key, `${SE}/delete`, { name, scope }, headers);

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

const listIds = (res: Res): string[] => res.body.data.map((s: { id: string }) => s.id);

describe('POST /v1/apps/secrets, find, list and delete', () => {
  test('create answers without the payload; find answers with it; names are case-sensitive', async () => {
    const key = newTestKey();
    const created = await create(key, { name: 'api-key', payload: 'p@ss word&=', scope: ACCOUNT });
    expect(created.status).toBe(200);
    expectMatchesResponseSchema('PostAppsSecrets', 200, created.body);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^appsecret_[A-Za-z0-9]{24}$/),
      object: 'apps.secret',
      created: now(),
      expires_at: null,
      livemode: false,
      name: 'api-key',
      scope: { type: 'account' },
    });

    const found = await find(key, 'api-key');
    expect(found.status).toBe(200);
    expectMatchesResponseSchema('GetAppsSecretsFind', 200, found.body);
    expect(found.body).toEqual({ ...created.body, payload: 'p@ss word&=' });

    const other = await find(key, 'API-KEY');
    expectError(other, 404, { type: 'invalid_request_error', code: 'resource_missing', param: 'name', message: "No such secret: 'API-KEY'" });
  });

  test('user-scoped secrets are separate per user and from the account scope, with the same name', async () => {
    const key = newTestKey();
    await createAppSecret(t, key, { name: 'token', payload: 'for-account' });
    await createAppSecret(t, key, { name: 'token', payload: 'for-alice', scope: user('usr_alice') });
    await createAppSecret(t, key, { name: 'token', payload: 'for-bob', scope: user('usr_bob') });
    expect((await find(key, 'token')).body.payload).toBe('for-account');
    expect((await find(key, 'token', user('usr_alice'))).body).toMatchObject({ payload: 'for-alice', scope: { type: 'user', user: 'usr_alice' } });
    expect((await find(key, 'token', user('usr_bob'))).body.payload).toBe('for-bob');
    expect((await find(key, 'token', user('usr_carol'))).status).toBe(404);
    expect(listIds(await list(key, user('usr_alice')))).toHaveLength(1);
    expect(listIds(await list(key))).toHaveLength(1);
  });

  test('posting the same name and scope replaces the secret: new id, created, payload and expiry', async () => {
    const key = newTestKey();
    const first = await createAppSecret(t, key, { name: 'rotating', payload: 'one', expires_at: now() + 3600 });
    const neighbour = await createAppSecret(t, key, { name: 'neighbour' });
    const start = nowMs;
    try {
      nowMs += 5000;
      const second = await create(key, { name: 'rotating', payload: 'two', scope: ACCOUNT });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ name: 'rotating', scope: ACCOUNT, created: now(), expires_at: null });
      expect(second.body.id).not.toBe(first.id);

      const found = await find(key, 'rotating');
      expect(found.body).toMatchObject({ id: second.body.id, payload: 'two', created: now(), expires_at: null });
      // One secret of that name, now the newest; the old id names nothing any more.
      const page = await list(key);
      expect(listIds(page)).toEqual([second.body.id, neighbour.id]);
      expectError(await get(key, SE, { scope: ACCOUNT, starting_after: first.id }), 400, { code: 'resource_missing', param: 'starting_after' });
      expect(await t.runtime.prisma.appSecret.count({ where: { name: 'rotating', id: { in: [first.id, second.body.id] } } })).toBe(1);
    } finally {
      nowMs = start;
    }
  });

  test('concurrent sets of one name leave exactly one secret', async () => {
    const key = newTestKey();
    await createAppSecret(t, key, { name: 'warm-up' }); // the key's account exists before the race
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(key, { name: 'raced', payload: `v${i}`, scope: ACCOUNT })));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const page = await list(key);
    const raced = page.body.data.filter((s: { name: string }) => s.name === 'raced');
    expect(raced).toHaveLength(1);
    expect(answers.map((a) => a.body.id)).toContain(raced[0].id);
  });

  test('list answers newest first without payloads, one scope only', async () => {
    const key = newTestKey();
    const a = await createAppSecret(t, key, { name: 'a' });
    const b = await createAppSecret(t, key, { name: 'b', expires_at: now() + 60 });
    await createAppSecret(t, key, { name: 'c', scope: user('usr_1') });
    const page = await list(key);
    expect(page.status).toBe(200);
    expectMatchesResponseSchema('GetAppsSecrets', 200, page.body);
    expect(page.body).toMatchObject({ object: 'list', has_more: false, url: SE });
    expect(listIds(page)).toEqual([b.id, a.id]);
    for (const secret of page.body.data) expect(secret).not.toHaveProperty('payload');
    expect(page.body.data[0].expires_at).toBe(now() + 60);
  });

  test('delete answers the secret with deleted: true, and it is gone afterwards', async () => {
    const key = newTestKey();
    const created = await createAppSecret(t, key, { name: 'doomed', payload: 'bye', scope: user('usr_9'), expires_at: now() + 60 });
    const res = await remove(key, 'doomed', user('usr_9'));
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostAppsSecretsDelete', 200, res.body);
    expect(res.body).toEqual({ ...created, deleted: true });
    expect(res.body).not.toHaveProperty('payload');
    expectError(await find(key, 'doomed', user('usr_9')), 404, { code: 'resource_missing', param: 'name' });
    expectError(await remove(key, 'doomed', user('usr_9')), 404, { code: 'resource_missing', param: 'name', message: "No such secret: 'doomed'" });
    expect(listIds(await list(key, user('usr_9')))).toEqual([]);
    expect(await t.runtime.prisma.appSecret.count({ where: { id: created.id } })).toBe(0);
  });

  test('through the official SDK: create, find, list, deleteWhere, and its error classes', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const secret = await stripe.apps.secrets.create({ name: 'sdk', payload: 'from the sdk', scope: { type: 'user', user: 'usr_sdk' }, expires_at: now() + 600 });
    expect(secret).toMatchObject({ object: 'apps.secret', name: 'sdk', scope: { type: 'user', user: 'usr_sdk' }, expires_at: now() + 600 });
    expect(secret.payload).toBeUndefined();

    const found = await stripe.apps.secrets.find({ name: 'sdk', scope: { type: 'user', user: 'usr_sdk' } });
    expect(found.id).toBe(secret.id);
    expect(found.payload).toBe('from the sdk');

    await stripe.apps.secrets.create({ name: 'sdk-2', payload: 'x', scope: { type: 'user', user: 'usr_sdk' } });
    const names: string[] = [];
    for await (const s of stripe.apps.secrets.list({ scope: { type: 'user', user: 'usr_sdk' }, limit: 1 })) names.push(s.name);
    expect(names).toEqual(['sdk-2', 'sdk']);

    const deleted = await stripe.apps.secrets.deleteWhere({ name: 'sdk', scope: { type: 'user', user: 'usr_sdk' } });
    expect(deleted).toMatchObject({ id: secret.id, deleted: true });

    await expect(stripe.apps.secrets.find({ name: 'sdk', scope: { type: 'user', user: 'usr_sdk' } })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 404,
      code: 'resource_missing',
    });
    await expect(stripe.apps.secrets.create({ name: 'n', payload: 'p', scope: { type: 'user' } })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      code: 'parameter_missing',
      param: 'scope[user]',
    });
  });
});

describe('validation', () => {
  const OPERATIONS = [
    ['create', (key: string, scope: unknown) => create(key, { name: 'n', payload: 'p', scope })],
    ['find', (key: string, scope: unknown) => get(key, `${SE}/find`, { name: 'n', scope })],
    ['list', (key: string, scope: unknown) => get(key, SE, { scope })],
    ['delete', (key: string, scope: unknown) => post(key, `${SE}/delete`, { name: 'n', scope })],
  ] as const;

  test.each(OPERATIONS)('%s: scope is required, user exactly when type is user', async (_name, call) => {
    const key = newTestKey();
    expectError(await call(key, undefined), 400, { code: 'parameter_missing', param: 'scope', message: 'Missing required param: scope.' });
    expectError(await call(key, { type: 'user' }), 400, { code: 'parameter_missing', param: 'scope[user]' });
    const both = await call(key, { type: 'account', user: 'usr_1' });
    expectError(both, 400, { type: 'invalid_request_error', param: 'scope[user]' });
    expect(both.body.error.message).toMatch(/scope\[user\].*scope\[type\] is user/);
    expectError(await call(key, { type: 'team' }), 400, { param: 'scope[type]' });
    expectError(await call(key, { user: 'usr_1' }), 400, { code: 'parameter_missing', param: 'scope[type]' });
    expectError(await call(key, { type: 'user', user: '' }), 400, { code: 'parameter_invalid_empty', param: 'scope[user]' });
    expectError(await call(key, { type: 'account', bogus: '1' }), 400, { code: 'parameter_unknown', param: 'scope[bogus]' });
    expectError(await call(key, 'account'), 400, { param: 'scope' });
  });

  test('name and payload are required, non-empty and at most 5000 characters; names can be that long', async () => {
    const key = newTestKey();
    expectError(await create(key, { payload: 'p', scope: ACCOUNT }), 400, { code: 'parameter_missing', param: 'name' });
    expectError(await create(key, { name: 'n', scope: ACCOUNT }), 400, { code: 'parameter_missing', param: 'payload' });
    expectError(await create(key, { name: '', payload: 'p', scope: ACCOUNT }), 400, { code: 'parameter_invalid_empty', param: 'name' });
    expectError(await create(key, { name: 'n', payload: '', scope: ACCOUNT }), 400, { code: 'parameter_invalid_empty', param: 'payload' });
    expectError(await create(key, { name: 'n'.repeat(5001), payload: 'p', scope: ACCOUNT }), 400, { code: 'invalid_string_too_long', param: 'name' });
    expectError(await get(key, `${SE}/find`, { name: 'n'.repeat(5001), scope: ACCOUNT }), 400, { code: 'invalid_string_too_long', param: 'name' });
    expectError(await get(key, `${SE}/find`, { scope: ACCOUNT }), 400, { code: 'parameter_missing', param: 'name' });

    // The longest name, payload and user id fit (no index limit in the way), multi-byte ones too.
    const name = 'n'.repeat(4999) + 'N';
    const payload = '秘'.repeat(5000);
    const longUser = user('u'.repeat(5000));
    expect((await create(key, { name, payload, scope: longUser })).status).toBe(200);
    expect((await find(key, name, longUser)).body.payload).toBe(payload);
    expect((await find(key, name.slice(0, -1) + 'n', longUser)).status).toBe(404);
    const wide = 'é'.repeat(5000);
    expect((await create(key, { name: wide, payload, scope: user('usr_wide') })).status).toBe(200);
    expect((await list(key, user('usr_wide'))).body.data.map((s: { name: string }) => s.name)).toEqual([wide]);
    // Its query string (30,000 bytes) is over Node's header limit: refused before the API sees it.
    expect((await find(key, wide, user('usr_wide'))).status).toBe(431);
  });

  test('a payload that is too long is refused without repeating it', async () => {
    const key = newTestKey();
    const marker = `toolong${randomBase62(16)}`;
    const res = await create(key, { name: 'n', payload: marker.repeat(400), scope: ACCOUNT });
    expectError(res, 400, { code: 'invalid_string_too_long', param: 'payload' });
    expect(res.body.error.message).toMatch(/at most 5000 characters/);
    expect(JSON.stringify(res.body)).not.toContain(marker);
    expect(t.logText()).not.toContain(marker);
  });

  test('expires_at must be a future timestamp', async () => {
    const key = newTestKey();
    for (const expiresAt of [now(), now() - 1, 1, 0]) {
      const res = await create(key, { name: 'n', payload: 'p', scope: ACCOUNT, expires_at: expiresAt });
      expectError(res, 400, { code: 'parameter_invalid', param: 'expires_at' });
      expect(res.body.error.message).toContain('not in the future');
    }
    expectError(await create(key, { name: 'n', payload: 'p', scope: ACCOUNT, expires_at: 'soon' }), 400, { code: 'parameter_invalid_integer', param: 'expires_at' });
    expectError(await create(key, { name: 'n', payload: 'p', scope: ACCOUNT, expires_at: -5 }), 400, { param: 'expires_at' });
    expectError(await create(key, { name: 'n', payload: 'p', scope: ACCOUNT, expires_at: 2 ** 31 }), 400, { code: 'parameter_invalid', param: 'expires_at' });
    expect((await find(key, 'n')).status).toBe(404);
    const ok = await create(key, { name: 'n', payload: 'p', scope: ACCOUNT, expires_at: now() + 1 });
    expect(ok.body.expires_at).toBe(now() + 1);
  });
});

describe('expiry on read', () => {
  test('past expires_at a secret is never found, listed or deleted, even while its row remains', async () => {
    const key = newTestKey();
    const expiring = await createAppSecret(t, key, { name: 'brief', payload: 'short-lived', expires_at: now() + 60 });
    const lasting = await createAppSecret(t, key, { name: 'lasting' });
    const start = nowMs;
    try {
      nowMs = start + 59_000;
      expect((await find(key, 'brief')).status).toBe(200);
      expect(listIds(await list(key))).toEqual([lasting.id, expiring.id]);

      nowMs = start + 60_000;
      expectError(await find(key, 'brief'), 404, { code: 'resource_missing', param: 'name' });
      expect(listIds(await list(key))).toEqual([lasting.id]);
      expectError(await get(key, SE, { scope: ACCOUNT, ending_before: expiring.id }), 400, { code: 'resource_missing', param: 'ending_before' });
      // Nothing swept it yet: the read itself hides it.
      expect(await t.runtime.prisma.appSecret.count({ where: { id: expiring.id } })).toBe(1);
      expectError(await remove(key, 'brief'), 404, { code: 'resource_missing', param: 'name' });

      // The name is free again.
      const again = await create(key, { name: 'brief', payload: 'new', scope: ACCOUNT });
      expect((await find(key, 'brief')).body).toMatchObject({ id: again.body.id, payload: 'new', expires_at: null });
    } finally {
      nowMs = start;
    }
  });
});

describe('isolation', () => {
  test("one key never sees another key's secrets", async () => {
    const mine = newTestKey();
    const theirs = newTestKey();
    const secret = await createAppSecret(t, mine, { name: 'private', payload: 'mine only' });
    await createAppSecret(t, theirs, { name: 'other' });
    expectError(await find(theirs, 'private'), 404, { code: 'resource_missing' });
    expect(listIds(await list(theirs))).not.toContain(secret.id);
    expectError(await get(theirs, SE, { scope: ACCOUNT, starting_after: secret.id }), 400, { code: 'resource_missing' });
    expectError(await remove(theirs, 'private'), 404, { code: 'resource_missing' });
    // Setting the same name elsewhere leaves mine alone.
    await createAppSecret(t, theirs, { name: 'private', payload: 'theirs' });
    expect((await find(mine, 'private')).body).toMatchObject({ id: secret.id, payload: 'mine only' });
  });

  test('Stripe-Account: a platform acting as its connected account has that account\'s secrets', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id;
    const as = { 'Stripe-Account': connected };
    await createAppSecret(t, key, { name: 'shared-name', payload: 'platform' });
    const ofConnected = await create(key, { name: 'shared-name', payload: 'connected', scope: ACCOUNT }, as);
    expect(ofConnected.status).toBe(200);
    expect((await find(key, 'shared-name', ACCOUNT, as)).body.payload).toBe('connected');
    expect((await find(key, 'shared-name')).body.payload).toBe('platform');
    expect(listIds(await list(key, ACCOUNT, as))).toEqual([ofConnected.body.id]);
    expect(await t.runtime.prisma.appSecret.findUnique({ where: { id: ofConnected.body.id }, select: { accountId: true } })).toEqual({ accountId: connected });

    // The SDK's per-request stripeAccount reaches the same secrets.
    const stripe = t.stripe(key);
    expect((await stripe.apps.secrets.find({ name: 'shared-name', scope: { type: 'account' } }, { stripeAccount: connected })).payload).toBe('connected');

    expect((await remove(key, 'shared-name', ACCOUNT, as)).status).toBe(200);
    expect((await find(key, 'shared-name')).body.payload).toBe('platform');

    // Another platform can't act as this connected account at all.
    expect((await find(newTestKey(), 'shared-name', ACCOUNT, as)).status).toBe(403);
  });
});

describe('the payload at rest', () => {
  test('is sealed with AES-256-GCM under a recorded key, and appears in no table, no pg_dump, no log', async () => {
    const key = newTestKey();
    const payload = `plaintext-${randomBase62(24)}`;
    const idempotencyKey = `seal-${randomBase62(12)}`;
    const created = await create(key, { name: 'sealed', payload, scope: ACCOUNT, expires_at: now() + 3600 }, { 'Idempotency-Key': idempotencyKey });
    expect(created.status).toBe(200);
    // A replay (the SDKs retry with the same key) and a find go through the stored copies too.
    const replay = await create(key, { name: 'sealed', payload, scope: ACCOUNT, expires_at: now() + 3600 }, { 'Idempotency-Key': idempotencyKey });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await find(key, 'sealed')).body.payload).toBe(payload);
    await create(key, { name: 'sealed', payload, scope: { type: 'account', user: 'x' } }); // refused, after reading the payload

    const prisma = t.runtime.prisma;
    const row = await prisma.appSecret.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.payload).toMatch(/^sealed:v1:/);
    expect(row.keyId).toBe(Encryption.keyIdOf(row.payload));
    expect(await t.runtime.encryption.open(row.payload)).toBe(payload);
    // The key is in the key file, not in the database.
    expect(await prisma.encryptionKey.count()).toBe(0);

    await expectNowhereAtRest(t, payload, ['app_secrets', created.body.id]);
  });
});

