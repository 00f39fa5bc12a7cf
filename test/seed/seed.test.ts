import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { loadConfig } from '../../src/config';
import { randomBase62 } from '../../src/lib/ids';
import { createLogger } from '../../src/lib/logger';
import { openRuntime, StartupError } from '../../src/runtime';
import { seedFromFile, SeedError, type FixtureOutcome, type SeedResult } from '../../src/seed/seed';
import { startApi } from '../../src/server';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { deleteQueueKeys } from '../helpers/isolation';

// Seeding through the API's own pipeline: references between fixtures, each fixture applied once
// per account however often the file runs, and SEED_FILE at start.

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(tmpdir(), 'sandbank-seed-'));
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const fixturesFile = (fixtures: unknown[], ext = 'json'): string => {
  const file = path.join(dir, `${randomBase62(8)}.${ext}`);
  const data = { _meta: { template_version: 0 }, fixtures };
  writeFileSync(file, ext === 'json' ? JSON.stringify(data, null, 2) : toYaml(data));
  return file;
};

const seed = (file: string, apiKey: string, env: Record<string, string> = {}): Promise<SeedResult> => seedFromFile(t.app, t.runtime, { file, apiKey, env });

const outcomes = (result: SeedResult): Record<string, FixtureOutcome['outcome']> => Object.fromEntries(result.fixtures.map((f) => [f.name, f.outcome]));
const ids = (result: SeedResult): Record<string, string | null> => Object.fromEntries(result.fixtures.map((f) => [f.name, f.id]));

async function get(key: string, url: string, account?: string) {
  const req = t.http().get(url).set(bearer(key));
  const res = await (account ? req.set('Stripe-Account', account) : req);
  expect(res.status).toBe(200);
  return res.body;
}

const count = async (accountId: string) => ({
  customers: await t.runtime.prisma.customer.count({ where: { accountId } }),
  products: await t.runtime.prisma.product.count({ where: { accountId } }),
  prices: await t.runtime.prisma.price.count({ where: { accountId } }),
  paymentMethods: await t.runtime.prisma.paymentMethod.count({ where: { accountId } }),
  webhookEndpoints: await t.runtime.prisma.webhookEndpoint.count({ where: { accountId } }),
  events: await t.runtime.prisma.event.count({ where: { accountId } }),
});

const CONNECTED = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application' },
  capabilities: { transfers: { requested: true } },
  business_type: 'individual',
  country: 'US',
};

/** A storefront: every kind of reference, on the key's platform and on a connected account of it. */
const STOREFRONT = [
  { name: 'cus_alice', path: '/v1/customers', method: 'post', params: { name: 'Alice', email: '${.env:ALICE_EMAIL}', metadata: { tier: '${.env:TIER|silver}' } } },
  // In a path, and in params.
  { name: 'pm_alice', path: '/v1/payment_methods/pm_card_visa/attach', method: 'post', params: { customer: '${cus_alice:id}' } },
  { name: 'cus_alice_card', path: '/v1/customers/${cus_alice:id}', method: 'post', params: { invoice_settings: { default_payment_method: '${pm_alice:id}' } } },
  // A whole reference keeps its type: alice's metadata object becomes bob's.
  { name: 'cus_bob', path: '/v1/customers', method: 'post', params: { name: 'Bob', metadata: '${cus_alice:metadata}' } },
  { name: 'prod_basic', path: '/v1/products', method: 'post', params: { name: 'Basic' } },
  { name: 'price_monthly', path: '/v1/prices', method: 'post', params: { product: '${prod_basic:id}', currency: 'usd', unit_amount: 1500, recurring: { interval: 'month' } } },
  { name: 'prod_basic_default', path: '/v1/products/${prod_basic:id}', method: 'post', params: { default_price: '${price_monthly:id}' } },
  // Inside longer strings, and a field of an update's answer.
  {
    name: 'price_yearly',
    path: '/v1/prices',
    method: 'post',
    params: { product: '${prod_basic:id}', currency: 'usd', unit_amount: 15000, recurring: { interval: 'year' }, nickname: '${prod_basic:name} yearly (${price_monthly:unit_amount}/mo)', metadata: { monthly: '${prod_basic_default:default_price}' } },
  },
  // A get runs every time; its answer can be referenced like any other.
  { name: 'alice_now', path: '/v1/customers/${cus_alice:id}', method: 'get', params: { expand: ['invoice_settings.default_payment_method'] } },
  { name: 'we_backend', path: '/v1/webhook_endpoints', method: 'post', params: { url: `${CLOSED_ORIGIN}/hook`, enabled_events: ['customer.created'], description: 'card ${alice_now:invoice_settings.default_payment_method.card.last4}' } },
  // A connected account, and a customer of its own through Stripe-Account; a nested path into a list.
  { name: 'acct_shop', path: '/v1/accounts', method: 'post', params: CONNECTED },
  { name: 'cus_shop', path: '/v1/customers', method: 'post', headers: { 'Stripe-Account': '${acct_shop:id}' }, params: { name: 'Shop customer', metadata: { first_due: '${acct_shop:requirements.currently_due.0}' } } },
  // An expected failure is an answer, not a stop.
  { name: 'missing', path: '/v1/customers/cus_doesnotexist', method: 'get', expected_error_type: 'invalid_request_error' },
];

test('references: ids, nested paths, paths, longer strings, env variables and Stripe-Account; the objects are the key\'s own', async () => {
  const key = newTestKey();
  const result = await seed(fixturesFile(STOREFRONT), key, { ALICE_EMAIL: 'alice@example.test' });
  const id = ids(result);
  expect(outcomes(result)).toEqual({
    cus_alice: 'created',
    pm_alice: 'created',
    cus_alice_card: 'created',
    cus_bob: 'created',
    prod_basic: 'created',
    price_monthly: 'created',
    prod_basic_default: 'created',
    price_yearly: 'created',
    alice_now: 'fetched',
    we_backend: 'created',
    acct_shop: 'created',
    cus_shop: 'created',
    missing: 'expected_error',
  });

  const alice = await get(key, `/v1/customers/${id.cus_alice}`);
  expect(alice).toMatchObject({ email: 'alice@example.test', metadata: { tier: 'silver' }, invoice_settings: { default_payment_method: id.pm_alice } });
  expect(id.cus_alice_card).toBe(id.cus_alice);
  expect(await get(key, `/v1/payment_methods/${id.pm_alice}`)).toMatchObject({ customer: id.cus_alice });
  expect((await get(key, `/v1/customers/${id.cus_bob}`)).metadata).toEqual({ tier: 'silver' });
  expect(await get(key, `/v1/products/${id.prod_basic}`)).toMatchObject({ default_price: id.price_monthly });
  expect(await get(key, `/v1/prices/${id.price_yearly}`)).toMatchObject({
    product: id.prod_basic,
    unit_amount: 15000,
    nickname: 'Basic yearly (1500/mo)',
    metadata: { monthly: id.price_monthly },
  });
  expect(await get(key, `/v1/webhook_endpoints/${id.we_backend}`)).toMatchObject({ url: `${CLOSED_ORIGIN}/hook`, description: 'card 4242' });
  const shop = await get(key, `/v1/accounts/${id.acct_shop}`);
  expect(shop.requirements.currently_due.length).toBeGreaterThan(0);
  expect(await get(key, `/v1/customers/${id.cus_shop}`, id.acct_shop!)).toMatchObject({ metadata: { first_due: shop.requirements.currently_due[0] } });

  // Made as API calls make them: with their events, in the key's platform account and no other.
  const platform = result.accountId;
  expect(await count(platform)).toMatchObject({ customers: 2, products: 1, prices: 2, paymentMethods: 1, webhookEndpoints: 1 });
  const types = (await t.runtime.prisma.event.findMany({ where: { accountId: platform }, select: { type: true } })).map((e) => e.type);
  expect(types).toEqual(expect.arrayContaining(['customer.created', 'customer.updated', 'payment_method.attached', 'product.created', 'price.created']));
  expect((await get(key, '/v1/customers?limit=10')).data.map((c: { id: string }) => c.id).sort()).toEqual([id.cus_alice, id.cus_bob].sort());
  const other = newTestKey();
  expect((await get(other, '/v1/customers')).data).toEqual([]);
  expect((await get(other, '/v1/products')).data).toEqual([]);
  expect((await t.http().get(`/v1/customers/${id.cus_alice}`).set(bearer(other))).status).toBe(404);
});

test('fixtures/example.json seeds as it is', async () => {
  const result = await seed(path.join(__dirname, '..', '..', 'fixtures', 'example.json'), newTestKey());
  expect(result.fixtures.every((f) => f.outcome === 'created' && f.id !== null)).toBe(true);
});

test('YAML reads as JSON does', async () => {
  const fixtures = [
    { name: 'prod', path: '/v1/products', method: 'post', params: { name: 'From YAML', active: true, metadata: { n: 1 } } },
    { name: 'price', path: '/v1/prices', method: 'post', params: { product: '${prod:id}', currency: 'eur', unit_amount: 250 } },
  ];
  const key = newTestKey();
  const result = await seed(fixturesFile(fixtures, 'yaml'), key);
  expect(outcomes(result)).toEqual({ prod: 'created', price: 'created' });
  expect(await get(key, `/v1/prices/${ids(result).price}`)).toMatchObject({ product: ids(result).prod, currency: 'eur', unit_amount: 250 });
  expect(await get(key, `/v1/products/${ids(result).prod}`)).toMatchObject({ name: 'From YAML', metadata: { n: '1' } });
});

describe('running a file again', () => {
  const FILE = [
    { name: 'cus_alice', path: '/v1/customers', method: 'post', params: { email: 'alice@example.test' } },
    // Two fixtures that send the same request are two objects.
    { name: 'cus_twin_1', path: '/v1/customers', method: 'post', params: { name: 'Twin' } },
    { name: 'cus_twin_2', path: '/v1/customers', method: 'post', params: { name: 'Twin' } },
    { name: 'cus_gone', path: '/v1/customers', method: 'post', params: { name: 'Temporary' } },
    // Run again, a delete would fail on the missing customer: it is applied once like the rest.
    { name: 'cus_gone_deleted', path: '/v1/customers/${cus_gone:id}', method: 'delete' },
    { name: 'we', path: '/v1/webhook_endpoints', method: 'post', params: { url: `${CLOSED_ORIGIN}/hook`, enabled_events: ['*'] } },
  ];

  test('creates nothing twice, even once idempotency keys expired or after a crash before the record; an edit is reported, a new fixture added', async () => {
    const key = newTestKey();
    const file = fixturesFile(FILE);
    const first = await seed(file, key);
    expect(Object.values(outcomes(first))).toEqual(Array(6).fill('created'));
    expect(ids(first).cus_twin_1).not.toBe(ids(first).cus_twin_2);
    const platform = first.accountId;
    const after = await count(platform);
    // cus_gone's row stays, marked deleted, as a deleted customer's does.
    expect(after).toMatchObject({ customers: 4, webhookEndpoints: 1 });

    const again = await seed(file, key);
    expect(Object.values(outcomes(again))).toEqual(Array(6).fill('existing'));
    expect(ids(again)).toEqual(ids(first));
    expect(await count(platform)).toEqual(after);

    // A crash after the API committed but before the record was written: the request's key replays it.
    await t.runtime.prisma.seedRun.delete({ where: { accountId_name: { accountId: platform, name: 'cus_twin_2' } } });
    const replayed = await seed(file, key);
    expect(outcomes(replayed).cus_twin_2).toBe('created');
    expect(ids(replayed).cus_twin_2).toBe(ids(first).cus_twin_2);
    expect(await count(platform)).toEqual(after);

    // A week later: the idempotency records are long gone, the seed's own records are not.
    await t.runtime.prisma.idempotencyRecord.deleteMany({ where: { accountId: platform } });
    expect(Object.values(outcomes(await seed(file, key)))).toEqual(Array(6).fill('existing'));
    expect(await count(platform)).toEqual(after);

    // An edited fixture is left as it was (and said so); a new one is applied and can reference the old.
    const edited = fixturesFile([
      { ...FILE[0], params: { email: 'alice@new.example.test' } },
      ...FILE.slice(1),
      { name: 'cus_carol', path: '/v1/customers', method: 'post', params: { metadata: { referred_by: '${cus_alice:id}' } } },
    ]);
    const third = await seed(edited, key);
    expect(outcomes(third)).toMatchObject({ cus_alice: 'changed', cus_twin_1: 'existing', cus_carol: 'created' });
    expect((await get(key, `/v1/customers/${ids(first).cus_alice}`)).email).toBe('alice@example.test');
    expect((await get(key, `/v1/customers/${ids(third).cus_carol}`)).metadata).toEqual({ referred_by: ids(first).cus_alice });
    expect(await count(platform)).toMatchObject({ customers: after.customers + 1, webhookEndpoints: 1 });

    // The record keeps the answer sealed: it can carry a secret (the endpoint's whsec_).
    const record = await t.runtime.prisma.seedRun.findUniqueOrThrow({ where: { accountId_name: { accountId: platform, name: 'we' } } });
    expect(record.response).toMatch(/^sealed:v1:/);
    expect(record.objectId).toBe(ids(first).we);
  });

  test('another key seeds its own objects from the same file', async () => {
    const file = fixturesFile(FILE.slice(0, 1));
    const [a, b] = [newTestKey(), newTestKey()];
    const first = await seed(file, a);
    const second = await seed(file, b);
    expect(outcomes(second)).toEqual({ cus_alice: 'created' });
    expect(second.accountId).not.toBe(first.accountId);
    expect(ids(second).cus_alice).not.toBe(ids(first).cus_alice);
  });

  test('DELETE /sandbox/v1/data forgets what was seeded, so the next seed applies it again', async () => {
    const key = newTestKey();
    const file = fixturesFile(FILE.slice(5));
    const first = await seed(file, key);
    const wiped = await t.http().delete('/sandbox/v1/data').set(bearer(key));
    expect(wiped.status).toBe(200);
    expect(wiped.body.deleted).toMatchObject({ webhook_endpoints: 1, seed_runs: 1 });
    const again = await seed(file, key);
    expect(outcomes(again)).toEqual({ we: 'created' });
    expect(ids(again).we).not.toBe(ids(first).we);
    expect((await get(key, '/v1/webhook_endpoints')).data.map((w: { id: string }) => w.id)).toEqual([ids(again).we]);
  });
});

describe('failures', () => {
  test("an API error stops the seed with the fixture's name and the API's message; what came before stays applied", async () => {
    const key = newTestKey();
    const fixtures = [
      { name: 'prod_ok', path: '/v1/products', method: 'post', params: { name: 'Fine' } },
      { name: 'price_bad', path: '/v1/prices', method: 'post', params: { product: '${prod_ok:id}', currency: 'usd', unit_amount: -5 } },
      { name: 'prod_after', path: '/v1/products', method: 'post', params: { name: 'Never' } },
    ];
    const error = await seed(fixturesFile(fixtures), key).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SeedError);
    expect((error as Error).message).toMatch(/^fixture price_bad: POST \/v1\/prices answered 400: .*unit_amount/);
    expect((await get(key, '/v1/products')).data.map((p: { name: string }) => p.name)).toEqual(['Fine']);

    // Fixed, it runs on from where it stopped.
    fixtures[1].params.unit_amount = 500;
    const fixed = await seed(fixturesFile(fixtures), key);
    expect(outcomes(fixed)).toEqual({ prod_ok: 'existing', price_bad: 'created', prod_after: 'created' });
  });

  test('an unknown reference names the fixture and sends nothing for it', async () => {
    const key = newTestKey();
    const fixtures = [
      { name: 'cus_alice', path: '/v1/customers', method: 'post', params: {} },
      { name: 'pm_bob', path: '/v1/payment_methods/pm_card_visa/attach', method: 'post', params: { customer: '${cus_bob:id}' } },
    ];
    await expect(seed(fixturesFile(fixtures), key)).rejects.toThrow('fixture pm_bob: ${cus_bob:id} refers to cus_bob, but no fixture has that name');
    expect(await t.runtime.prisma.paymentMethod.count({ where: { accountId: (await get(key, '/v1/account')).id } })).toBe(0);
  });

  test('a missing file, and a key the API refuses', async () => {
    await expect(seed(path.join(dir, 'nope.json'), newTestKey())).rejects.toThrow(`can't read ${path.join(dir, 'nope.json')}: no such file`);
    const registered = await startTestApp({ AUTH_MODE: 'registered' });
    try {
      const file = fixturesFile([{ name: 'c', path: '/v1/customers', method: 'post' }]);
      await expect(seedFromFile(registered.app, registered.runtime, { file, apiKey: 'sk_test_unregistered', env: {} })).rejects.toThrow(
        /^the API refused the key: Invalid API Key provided: sk_test_\*+ered$/,
      );
    } finally {
      await registered.close();
    }
  });
});

describe('SEED_FILE at start', () => {
  const start = async (env: Record<string, string>) => {
    const config = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent', QUEUE_PREFIX: `test${randomBase62(8)}`, ...env });
    const runtime = openRuntime(config, { logger: createLogger('silent') });
    const stop = async () => {
      await runtime.close();
      await deleteQueueKeys(config.redisUrl, config.queuePrefix);
    };
    try {
      const api = await startApi(runtime);
      return {
        port: (api.server.address() as { port: number }).port,
        stop: async () => {
          await api.close();
          await stop();
        },
      };
    } catch (err) {
      await stop();
      throw err;
    }
  };

  test('the API applies it before it listens, once however many processes start, and a restart adds nothing', async () => {
    const key = newTestKey();
    const file = fixturesFile([
      { name: 'cus_staging', path: '/v1/customers', method: 'post', params: { email: 'staging@example.test' } },
      { name: 'we_staging', path: '/v1/webhook_endpoints', method: 'post', params: { url: `${CLOSED_ORIGIN}/hook`, enabled_events: ['customer.created'], metadata: { customer: '${cus_staging:id}' } } },
      // Deletes carry no idempotency key: only the lock keeps a second process from deleting again (a 404).
      { name: 'cus_temp', path: '/v1/customers', method: 'post', params: { name: 'Temporary' } },
      { name: 'cus_temp_deleted', path: '/v1/customers/${cus_temp:id}', method: 'delete' },
    ]);
    const env = { SEED_FILE: file, SEED_API_KEY: key };
    // Two API processes starting at once with one SEED_FILE.
    const starts = await Promise.allSettled([start(env), start(env)]);
    const apis = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const first: any = apis.length > 0 ? await fetch(`http://127.0.0.1:${apis[0].port}/v1/customers`, { headers: bearer(key) }).then((r) => r.json()) : undefined;
    await Promise.all(apis.map((api) => api.stop()));
    expect(starts.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual(['started', 'started']);
    expect(first.data.map((c: { email: string }) => c.email)).toEqual(['staging@example.test']);

    const restarted = await start(env);
    await restarted.stop();
    const platform = (await get(key, '/v1/account')).id;
    expect(await count(platform)).toMatchObject({ customers: 2, webhookEndpoints: 1 });
    const endpoint = (await get(key, '/v1/webhook_endpoints')).data[0];
    expect(endpoint.metadata.customer).toBe(first.data[0].id);
  });

  test('a seed that fails stops the start with one line naming the file and the fixture', async () => {
    const file = fixturesFile([{ name: 'prod_nameless', path: '/v1/products', method: 'post', params: {} }]);
    const error = await start({ SEED_FILE: file, SEED_API_KEY: newTestKey() }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toMatch(new RegExp(`^SEED_FILE ${file}: fixture prod_nameless: POST /v1/products answered 400: .*name`));
    expect((error as Error).message).not.toContain('\n');
  });
});
