import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { CLOSED_ORIGIN, createWebhookEndpoint, createWebhookEndpoints, form, WEBHOOK_URL } from '../../helpers/fixtures';
import { expectErrorBody } from '../../helpers/responseSchemas';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { Encryption } from '../../../src/lib/encryption';
import { sealPlaintextSecrets } from '../../../src/resources/webhooks/webhook_endpoints/service';
import { prepareSecrets } from '../../../src/runtime';

// Webhook endpoints end to end, over HTTP (supertest) and through the official SDK.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

// The public object's members, checked against the SDK's type at compile time in both directions.
type SdkKeys = Exclude<keyof Stripe.WebhookEndpoint, 'deleted'>;
const SDK_KEYS = [
  'api_version',
  'application',
  'created',
  'description',
  'enabled_events',
  'id',
  'livemode',
  'metadata',
  'object',
  'secret',
  'status',
  'url',
] as const satisfies readonly SdkKeys[];
type MissingKeys = Exclude<SdkKeys, (typeof SDK_KEYS)[number]>;
const sdkKeysComplete: [MissingKeys] extends [never] ? true : MissingKeys = true;
const KEYS_WITHOUT_SECRET = SDK_KEYS.filter((k) => k !== 'secret');

const BASE = '/v1/webhook_endpoints';
const ID = /^we_[A-Za-z0-9]{24}$/;
const SECRET = /^whsec_[A-Za-z0-9]{32,}$/;
const LIMIT = 16;

type Res = { status: number; body: any; headers: Record<string, string>; text: string };

const post = (key: string, path: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t
    .http()
    .post(path)
    .set(bearer(key))
    .set(headers)
    .type('form')
    .send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>;
const get = (key: string, path: string): Promise<Res> => t.http().get(path).set(bearer(key)) as unknown as Promise<Res>;
const del = (key: string, path: string): Promise<Res> => t.http().delete(path).set(bearer(key)) as unknown as Promise<Res>;

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

const missing = (id: string) => ({
  type: 'invalid_request_error',
  code: 'resource_missing',
  message: `No such webhook endpoint: '${id}'`,
  param: 'id',
});

const withoutSecret = (body: Record<string, unknown>) => {
  const { secret: _secret, ...rest } = body;
  return rest;
};

async function listAll(key: string): Promise<any[]> {
  const res = await get(key, `${BASE}?limit=100`);
  expect(res.status).toBe(200);
  return res.body.data;
}

test('the key list above matches the SDK type', () => {
  expect(sdkKeysComplete).toBe(true);
});

describe('create', () => {
  test('with every parameter, over HTTP', async () => {
    const key = newTestKey();
    const before = Math.floor(Date.now() / 1000);
    const res = await post(key, BASE, {
      url: `${CLOSED_ORIGIN}/hooks/orders?source=sandbank`,
      enabled_events: ['charge.succeeded', 'account.updated'],
      api_version: '2024-06-20',
      connect: true,
      description: 'Order events',
      metadata: { order: '42', team: 'billing' },
    });
    const after = Math.floor(Date.now() / 1000);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(ID),
      object: 'webhook_endpoint',
      api_version: '2024-06-20',
      application: null,
      created: expect.any(Number),
      description: 'Order events',
      enabled_events: ['charge.succeeded', 'account.updated'],
      livemode: false,
      metadata: { order: '42', team: 'billing' },
      secret: expect.stringMatching(SECRET),
      status: 'enabled',
      url: `${CLOSED_ORIGIN}/hooks/orders?source=sandbank`,
    });
    expect(Object.keys(res.body).sort()).toEqual([...SDK_KEYS].sort());
    expect(Number.isInteger(res.body.created)).toBe(true);
    expect(res.body.created).toBeGreaterThanOrEqual(before - 1);
    expect(res.body.created).toBeLessThanOrEqual(after + 1);
  });

  test('with every parameter except description, over HTTP', async () => {
    const key = newTestKey();
    const res = await post(key, BASE, {
      url: 'http://localhost:0/webhook',
      enabled_events: ['identity.verification_session.verified', 'identity.verification_session.redacted'],
      api_version: '2026-10-28.endive',
      connect: false,
      metadata: { env: 'ci' },
    });
    expect(res.status).toBe(200);
    expect(withoutSecret(res.body)).toEqual({
      id: expect.stringMatching(ID),
      object: 'webhook_endpoint',
      api_version: '2026-10-28.endive',
      application: null,
      created: expect.any(Number),
      description: null,
      enabled_events: ['identity.verification_session.verified', 'identity.verification_session.redacted'],
      livemode: false,
      metadata: { env: 'ci' },
      status: 'enabled',
      url: 'http://localhost:0/webhook',
    });
    expect(res.body.secret).toMatch(SECRET);
  });

  test("enabled_events ['*'] and the defaults of the optional parameters", async () => {
    const key = newTestKey();
    const res = await post(key, BASE, `url=${CLOSED_ORIGIN}/all&enabled_events[]=*`);
    expect(res.status).toBe(200);
    expect(withoutSecret(res.body)).toEqual({
      id: expect.stringMatching(ID),
      object: 'webhook_endpoint',
      api_version: null,
      application: null,
      created: expect.any(Number),
      description: null,
      enabled_events: ['*'],
      livemode: false,
      metadata: {},
      status: 'enabled',
      url: `${CLOSED_ORIGIN}/all`,
    });
    const fetched = await get(key, `${BASE}/${res.body.id}`);
    expect(fetched.body.enabled_events).toEqual(['*']);
  });

  test('with every parameter, through the SDK', async () => {
    const stripe = t.stripe(newTestKey());
    const endpoint = await stripe.webhookEndpoints.create({
      url: `${CLOSED_ORIGIN}/sdk`,
      enabled_events: ['*'],
      api_version: '2025-03-31.basil',
      connect: true,
      description: 'From the SDK',
      metadata: { source: 'sdk' },
    });
    expect(endpoint.lastResponse.statusCode).toBe(200);
    expect(endpoint.id).toMatch(ID);
    expect(endpoint.object).toBe('webhook_endpoint');
    expect(endpoint.api_version).toBe('2025-03-31.basil');
    expect(endpoint.application).toBeNull();
    expect(endpoint.description).toBe('From the SDK');
    expect(endpoint.enabled_events).toEqual(['*']);
    expect(endpoint.livemode).toBe(false);
    expect(endpoint.metadata).toEqual({ source: 'sdk' });
    expect(endpoint.status).toBe('enabled');
    expect(endpoint.url).toBe(`${CLOSED_ORIGIN}/sdk`);
    expect(endpoint.secret).toMatch(SECRET);
  });

  test('through the SDK without a description', async () => {
    const stripe = t.stripe(newTestKey());
    const endpoint = await stripe.webhookEndpoints.create({
      url: `${CLOSED_ORIGIN}/sdk`,
      enabled_events: ['account.updated'],
      connect: true,
      metadata: { source: 'sdk' },
    });
    expect(endpoint.enabled_events).toEqual(['account.updated']);
    expect(endpoint.metadata).toEqual({ source: 'sdk' });
    expect(endpoint.description).toBeNull();
    expect(endpoint.api_version).toBeNull();
    expect(endpoint.secret).toMatch(SECRET);
  });

  test('connect must be a boolean', async () => {
    const key = newTestKey();
    expect((await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], connect: 'false' })).status).toBe(200);
    const res = await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], connect: 'yes' });
    expectError(res, 400, { type: 'invalid_request_error', param: 'connect' });
  });

  test('an Idempotency-Key replays the same endpoint and secret and creates only one', async () => {
    const key = newTestKey();
    const body = { url: WEBHOOK_URL, enabled_events: ['charge.failed'] };
    const first = await post(key, BASE, body, { 'Idempotency-Key': 'create-once' });
    const second = await post(key, BASE, body, { 'Idempotency-Key': 'create-once' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.body.secret).toMatch(SECRET);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect((await listAll(key)).map((e) => e.id)).toEqual([first.body.id]);
  });

  test('Idempotency-Keys are scoped to the account', async () => {
    const a = newTestKey();
    const b = newTestKey();
    const ra = await post(a, BASE, { url: `${WEBHOOK_URL}/a`, enabled_events: ['*'] }, { 'Idempotency-Key': 'shared-key' });
    const rb = await post(b, BASE, { url: `${WEBHOOK_URL}/b`, enabled_events: ['*'] }, { 'Idempotency-Key': 'shared-key' });
    expect(ra.status).toBe(200);
    expect(rb.status).toBe(200);
    expect(rb.body.id).not.toBe(ra.body.id);
    expect(rb.body.url).toBe(`${WEBHOOK_URL}/b`);
  });
});

describe('secret', () => {
  test('is long, random, and shown only in the create response', async () => {
    const key = newTestKey();
    const created = await Promise.all([1, 2, 3].map((i) => createWebhookEndpoint(t, key, { url: `${WEBHOOK_URL}/${i}` })));
    const secrets = created.map((c) => c.secret);
    for (const s of secrets) expect(s).toMatch(SECRET);
    expect(new Set(secrets).size).toBe(3);

    const id = created[0].id;
    const responses: Res[] = [
      await get(key, `${BASE}/${id}`),
      await get(key, `${BASE}?limit=100`),
      await post(key, `${BASE}/${id}`, { url: `${WEBHOOK_URL}/updated` }),
      await post(key, `${BASE}/${id}`, {}),
      await del(key, `${BASE}/${created[1].id}`),
    ];
    for (const res of responses) {
      expect(res.status).toBe(200);
      for (const s of secrets) expect(res.text).not.toContain(s);
      expect(res.text).not.toContain('"secret"');
      expect(res.text).not.toContain('whsec_');
    }
    expect(Object.keys(responses[0].body).sort()).toEqual([...KEYS_WITHOUT_SECRET].sort());
    for (const item of responses[1].body.data) expect(Object.keys(item).sort()).toEqual([...KEYS_WITHOUT_SECRET].sort());
    expect(Object.keys(responses[2].body).sort()).toEqual([...KEYS_WITHOUT_SECRET].sort());

    const viaSdk = await t.stripe(key).webhookEndpoints.retrieve(id);
    expect(viaSdk.secret).toBeUndefined();
    // Nor does it reach the logs.
    for (const s of secrets) expect(t.logText()).not.toContain(s);
  });

  test('is stored sealed under a recorded key, with its idempotent copy, and appears in no table, no pg_dump, no log', async () => {
    const key = newTestKey();
    const body = { url: WEBHOOK_URL, enabled_events: ['*'] };
    const idempotencyKey = `sealed-${newTestKey()}`;
    const created = await post(key, BASE, body, { 'Idempotency-Key': idempotencyKey });
    expect(created.status).toBe(200);
    const secret: string = created.body.secret;

    const prisma = t.runtime.prisma;
    const row = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.secret).toMatch(/^sealed:v1:/);
    expect(row.keyId).toBe(Encryption.keyIdOf(row.secret));
    expect(await t.runtime.encryption.open(row.secret)).toBe(secret);
    const record = await prisma.idempotencyRecord.findFirstOrThrow({ where: { key: idempotencyKey } });
    expect(record.responseBody).toMatch(/^sealed:v1:/);

    // A retry (the SDKs send one with the same key) replays the secret from the sealed copy.
    const replay = await post(key, BASE, body, { 'Idempotency-Key': idempotencyKey });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(created.body);
    // The endpoints emit no events, so none carries it either (the search covers `events`).
    expect((await get(key, '/v1/events')).body.data).toEqual([]);
    await expectNowhereAtRest(t, secret, [created.body.id, row.secret]);
  });

  test('a secret an earlier version kept in plain text, and its stored create response, are sealed at start', async () => {
    const key = newTestKey();
    const body = { url: WEBHOOK_URL, enabled_events: ['*'] };
    const idempotencyKey = `legacy-${newTestKey()}`;
    const created = await post(key, BASE, body, { 'Idempotency-Key': idempotencyKey });
    const secret: string = created.body.secret;
    // What an earlier version left: the secret and the stored response in plain text, no key id.
    const prisma = t.runtime.prisma;
    await prisma.webhookEndpoint.update({ where: { id: created.body.id }, data: { secret, keyId: null } });
    await prisma.idempotencyRecord.updateMany({ where: { key: idempotencyKey }, data: { responseBody: JSON.stringify(created.body) } });

    // The API and the worker start together: each seals what it finds; no row is sealed twice.
    await Promise.all([prepareSecrets(t.runtime), sealPlaintextSecrets(t.runtime)]);
    const row = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.keyId).toBe(Encryption.keyIdOf(row.secret));
    expect(await t.runtime.encryption.open(row.secret)).toBe(secret);
    const record = await prisma.idempotencyRecord.findFirstOrThrow({ where: { key: idempotencyKey } });
    expect(JSON.parse(await t.runtime.encryption.open(record.responseBody!))).toEqual(created.body);
    expect(await sealPlaintextSecrets(t.runtime)).toBe(0); // nothing left to seal

    const replay = await post(key, BASE, body, { 'Idempotency-Key': idempotencyKey });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.secret).toBe(secret);
    expect((await get(key, `${BASE}/${created.body.id}`)).text).not.toContain(secret);
    await expectNowhereAtRest(t, secret, [created.body.id]);
  });
});

describe('retrieve', () => {
  test('returns the endpoint as created, without the secret, over HTTP and the SDK', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key, { enabled_events: ['*'], api_version: '2024-06-20', metadata: { a: '1' } });
    const res = await get(key, `${BASE}/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(withoutSecret(created));
    const viaSdk = await t.stripe(key).webhookEndpoints.retrieve(created.id);
    expect({ ...viaSdk }).toEqual(expect.objectContaining(withoutSecret(created)));
    expect(viaSdk.lastResponse.statusCode).toBe(200);
  });

  test('expanding a field that cannot be expanded is refused', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key);
    const res = await get(key, `${BASE}/${created.id}?expand[]=url`);
    expectError(res, 400, { type: 'invalid_request_error', param: 'expand', message: 'This property cannot be expanded (url).' });
  });

  test('an unknown id is a 404 resource_missing', async () => {
    const key = newTestKey();
    const id = 'we_000000000000000000000000';
    const res = await get(key, `${BASE}/${id}`);
    expectError(res, 404, missing(id));
    expect(res.body.error.doc_url).toBe('https://stripe.com/docs/error-codes/resource-missing');
  });

  test('ids that cannot be webhook endpoint ids are a 404, not a crash', async () => {
    const key = newTestKey();
    for (const [path, id] of [
      ['we_%00', 'we_\u0000'],
      ['%00', '\u0000'],
      // Repeated up to ECHO_LIMIT characters (kernel/errors.ts).
      ['x'.repeat(300), `${'x'.repeat(200)}…`],
      ['%E2%98%83', '\u2603'],
      ['we_abc%27%3B--', "we_abc';--"],
    ]) {
      expectError(await get(key, `${BASE}/${path}`), 404, missing(id));
      expectError(await post(key, `${BASE}/${path}`, { url: WEBHOOK_URL }), 404, missing(id));
      expectError(await del(key, `${BASE}/${path}`), 404, missing(id));
    }
  });
});

describe('update', () => {
  test('url and enabled_events change and nothing else does', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key, { api_version: '2024-06-20', metadata: { keep: 'me' } });
    const res = await post(key, `${BASE}/${created.id}`, { url: 'https://example.org/new', enabled_events: ['account.updated', 'capability.updated'] });
    expect(res.status).toBe(200);
    const expected = { ...withoutSecret(created), url: 'https://example.org/new', enabled_events: ['account.updated', 'capability.updated'] };
    expect(res.body).toEqual(expected);
    expect((await get(key, `${BASE}/${created.id}`)).body).toEqual(expected);

    const star = await post(key, `${BASE}/${created.id}`, 'enabled_events[]=*');
    expect(star.body.enabled_events).toEqual(['*']);
    expect(star.body.url).toBe('https://example.org/new');
  });

  test('disabled=true and disabled=false move status between enabled and disabled', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key);
    const path = `${BASE}/${created.id}`;
    const off = await post(key, path, 'disabled=true');
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('disabled');
    expect((await get(key, path)).body.status).toBe('disabled');
    // Disabling twice is fine.
    expect((await post(key, path, 'disabled=true')).body.status).toBe('disabled');
    const on = await post(key, path, 'disabled=false');
    expect(on.body.status).toBe('enabled');
    expect((await get(key, path)).body.status).toBe('enabled');

    const stripe = t.stripe(key);
    expect((await stripe.webhookEndpoints.update(created.id, { disabled: true })).status).toBe('disabled');
    expect((await stripe.webhookEndpoints.update(created.id, { disabled: false })).status).toBe('enabled');
    expectError(await post(key, path, 'disabled=maybe'), 400, { type: 'invalid_request_error', param: 'disabled' });
  });

  test('description is set, and unset with an empty string', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key);
    const path = `${BASE}/${created.id}`;
    const set = await post(key, path, { description: 'Billing events' });
    expect({ status: set.status, description: set.body.description }).toEqual({ status: 200, description: 'Billing events' });
    expect((await get(key, path)).body.description).toBe('Billing events');
    const unset = await post(key, path, 'description=');
    expect({ status: unset.status, description: unset.body.description }).toEqual({ status: 200, description: null });
    expect((await get(key, path)).body.description).toBeNull();

    const stripe = t.stripe(key);
    expect((await stripe.webhookEndpoints.update(created.id, { description: 'Via SDK' })).description).toBe('Via SDK');
    expect((await stripe.webhookEndpoints.update(created.id, { description: '' })).description).toBeNull();
  });

  test('metadata: set keys, unset one key, unset all with metadata=', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key, { metadata: { a: '1', b: '2' } });
    const path = `${BASE}/${created.id}`;
    expect(created.metadata).toEqual({ a: '1', b: '2' });

    const added = await post(key, path, { metadata: { c: '3', a: 'one' } });
    expect(added.body.metadata).toEqual({ a: 'one', b: '2', c: '3' });
    const unsetOne = await post(key, path, 'metadata[a]=');
    expect(unsetOne.body.metadata).toEqual({ b: '2', c: '3' });
    const unsetAll = await post(key, path, 'metadata=');
    expect(unsetAll.body.metadata).toEqual({});
    expect((await get(key, path)).body.metadata).toEqual({});

    const stripe = t.stripe(key);
    expect((await stripe.webhookEndpoints.update(created.id, { metadata: { x: 'y', z: 'w' } })).metadata).toEqual({ x: 'y', z: 'w' });
    expect((await stripe.webhookEndpoints.update(created.id, { metadata: { x: '' } })).metadata).toEqual({ z: 'w' });
    expect((await stripe.webhookEndpoints.update(created.id, { metadata: '' })).metadata).toEqual({});
  });

  test('metadata holds at most 50 keys after the update is applied', async () => {
    const key = newTestKey();
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, `v${i}`]));
    const created = await createWebhookEndpoint(t, key, { metadata: fifty });
    const path = `${BASE}/${created.id}`;
    expect(Object.keys(created.metadata)).toHaveLength(50);
    expectError(await post(key, path, { metadata: { extra: 'x' } }), 400, { type: 'invalid_request_error', param: 'metadata' });
    // Unsetting one key while adding another stays within the limit.
    const swapped = await post(key, path, { metadata: { k0: '', extra: 'x' } });
    expect(swapped.status).toBe(200);
    expect(Object.keys(swapped.body.metadata)).toHaveLength(50);
    expect(swapped.body.metadata.extra).toBe('x');
    expect(swapped.body.metadata.k0).toBeUndefined();
  });

  test('no parameters returns the endpoint unchanged', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key, { metadata: { a: '1' } });
    const res = await post(key, `${BASE}/${created.id}`, '');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(withoutSecret(created));
  });

  test('validates like create, refuses create-only parameters, and changes nothing when it fails', async () => {
    const key = newTestKey();
    const created = await createWebhookEndpoint(t, key);
    const path = `${BASE}/${created.id}`;
    expectError(await post(key, path, { url: 'ftp://example.com/x' }), 400, { param: 'url' });
    expectError(await post(key, path, { url: '/relative' }), 400, { param: 'url' });
    expectError(await post(key, path, { enabled_events: ['charge.exploded'] }), 400, { param: 'enabled_events[0]' });
    expectError(await post(key, path, { enabled_events: ['*', 'charge.succeeded'] }), 400, { param: 'enabled_events' });
    expectError(await post(key, path, 'enabled_events='), 400, { param: 'enabled_events' });
    for (const param of ['connect', 'api_version', 'secret', 'status']) {
      const value = param === 'connect' ? 'true' : param === 'api_version' ? '2024-06-20' : 'x';
      expectError(await post(key, path, `${param}=${value}`), 400, {
        code: 'parameter_unknown',
        param,
        message: `Received unknown parameter: ${param}`,
      });
    }
    expect((await get(key, path)).body).toEqual(withoutSecret(created));
  });
});

describe('delete', () => {
  test('returns the deleted shape, then the endpoint is gone for retrieve, update, delete and list', async () => {
    const key = newTestKey();
    const keep = await createWebhookEndpoint(t, key, { url: `${WEBHOOK_URL}/keep` });
    const created = await createWebhookEndpoint(t, key);
    const path = `${BASE}/${created.id}`;
    const res = await del(key, path);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.id, object: 'webhook_endpoint', deleted: true });
    expectError(await get(key, path), 404, missing(created.id));
    expectError(await post(key, path, { url: WEBHOOK_URL }), 404, missing(created.id));
    expectError(await del(key, path), 404, missing(created.id));
    expect((await listAll(key)).map((e) => e.id)).toEqual([keep.id]);
  });

  test('through the SDK', async () => {
    const stripe = t.stripe(newTestKey());
    const created = await stripe.webhookEndpoints.create({ url: WEBHOOK_URL, enabled_events: ['*'] });
    const deleted = await stripe.webhookEndpoints.del(created.id);
    expect({ id: deleted.id, object: deleted.object, deleted: deleted.deleted }).toEqual({ id: created.id, object: 'webhook_endpoint', deleted: true });
    const err = await stripe.webhookEndpoints.retrieve(created.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(err).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'id', message: `No such webhook endpoint: '${created.id}'` });
  });
});

describe('validation', () => {
  test('enabled_events must name public event types', async () => {
    const key = newTestKey();
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['charge.exploded'] }), 400, {
      type: 'invalid_request_error',
      param: 'enabled_events[0]',
    });
    const second = await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['charge.succeeded', 'nope.nope'] });
    expectError(second, 400, { param: 'enabled_events[1]' });
    expect(second.body.error.message).toMatch(/^Invalid enabled_events\[1\]: must be one of \*, /);
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['CHARGE.SUCCEEDED'] }), 400, { param: 'enabled_events[0]' });
    expect(await listAll(key)).toEqual([]);
  });

  test("'*' cannot be combined with other event types", async () => {
    const key = newTestKey();
    for (const events of [['*', 'charge.succeeded'], ['account.updated', '*']]) {
      expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: events }), 400, {
        type: 'invalid_request_error',
        param: 'enabled_events',
      });
    }
    expect(await listAll(key)).toEqual([]);
  });

  test('enabled_events cannot be empty', async () => {
    const key = newTestKey();
    expectError(await post(key, BASE, `url=${encodeURIComponent(WEBHOOK_URL)}&enabled_events=`), 400, { param: 'enabled_events' });
  });

  test('url must be an absolute http or https URL', async () => {
    const key = newTestKey();
    const bad = [
      '/relative/path',
      'example.com/hooks',
      '//example.com/hooks',
      'ftp://example.com/hooks',
      'javascript:alert(1)',
      'mailto:ops@example.com',
      'garbage',
      'http://',
      'https://exa mple.com/',
      'https://example.com/\u0000',
      'https://example.com/a\nb',
      '',
    ];
    for (const url of bad) {
      const res = await post(key, BASE, { url, enabled_events: ['*'] });
      expect({ url, status: res.status, param: res.body.error?.param }).toEqual({ url, status: 400, param: 'url' });
      expectErrorBody(res.body);
    }
    for (const url of ['http://localhost:0/webhook', CLOSED_ORIGIN, 'https://127.0.0.1:0/a/b?c=d']) {
      const res = await post(key, BASE, { url, enabled_events: ['*'] });
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      expect(res.body.url).toBe(url);
    }
  });

  test('api_version must be a published version', async () => {
    const key = newTestKey();
    for (const version of ['not-a-version', '2099-01-01', '2026-08-26.DAHLIA', '']) {
      const res = await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], api_version: version });
      expectError(res, 400, { type: 'invalid_request_error', param: 'api_version' });
    }
    expect(await listAll(key)).toEqual([]);
  });

  test('url and enabled_events are required', async () => {
    const key = newTestKey();
    expectError(await post(key, BASE, { enabled_events: ['*'] }), 400, {
      type: 'invalid_request_error',
      code: 'parameter_missing',
      param: 'url',
      message: 'Missing required param: url.',
    });
    expectError(await post(key, BASE, { url: WEBHOOK_URL }), 400, {
      code: 'parameter_missing',
      param: 'enabled_events',
      message: 'Missing required param: enabled_events.',
    });
    const neither = await post(key, BASE, '');
    expectError(neither, 400, { code: 'parameter_missing' });
    expect(['url', 'enabled_events']).toContain(neither.body.error.param);
  });

  test('strings are at most 5000 characters', async () => {
    const key = newTestKey();
    const longUrl = `${CLOSED_ORIGIN}/${'a'.repeat(5000)}`;
    expectError(await post(key, BASE, { url: longUrl, enabled_events: ['*'] }), 400, {
      code: 'invalid_string_too_long',
      param: 'url',
    });
  });

  test('description is at most 5000 characters', async () => {
    const key = newTestKey();
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], description: 'd'.repeat(5001) }), 400, {
      code: 'invalid_string_too_long',
      param: 'description',
    });
    expect((await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], description: 'd'.repeat(5000) })).status).toBe(200);
  });

  test('metadata limits: 50 keys, keys of 40 characters, values of 500', async () => {
    const key = newTestKey();
    const fiftyOne = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], metadata: fiftyOne }), 400, { param: 'metadata' });
    const longKey = 'k'.repeat(41);
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], metadata: { [longKey]: 'v' } }), 400, {
      param: `metadata[${longKey}]`,
    });
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], metadata: { k: 'v'.repeat(501) } }), 400, {
      param: 'metadata[k]',
    });
    const atLimits = await post(key, BASE, {
      url: WEBHOOK_URL,
      enabled_events: ['*'],
      metadata: { ['k'.repeat(40)]: 'v'.repeat(500) },
    });
    expect(atLimits.status).toBe(200);
    expect(atLimits.body.metadata).toEqual({ ['k'.repeat(40)]: 'v'.repeat(500) });
  });

  test('metadata keys that are also JavaScript property names are kept', async () => {
    const key = newTestKey();
    const res = await post(key, BASE, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&metadata[constructor]=a&metadata[toString]=b&metadata[plain]=c`);
    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({ constructor: 'a', toString: 'b', plain: 'c' });
  });

  test('numeric metadata keys are kept (the SDK sends them as metadata[0]=…)', async () => {
    const stripe = t.stripe(newTestKey());
    const created = await stripe.webhookEndpoints.create({ url: WEBHOOK_URL, enabled_events: ['*'], metadata: { '0': 'zero', '7': 'seven' } });
    expect(created.metadata).toEqual({ '0': 'zero', '7': 'seven' });
    const updated = await stripe.webhookEndpoints.update(created.id, { metadata: { '2500': 'big' } });
    expect(updated.metadata).toEqual({ '0': 'zero', '7': 'seven', '2500': 'big' });
  });

  test('unknown parameters are refused by name, nested ones in brackets', async () => {
    const key = newTestKey();
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'], zz_bogus: '1' }), 400, {
      code: 'parameter_unknown',
      param: 'zz_bogus',
      message: 'Received unknown parameter: zz_bogus',
    });
    expectError(await get(key, `${BASE}?zz_bogus=1`), 400, { code: 'parameter_unknown', param: 'zz_bogus' });
  });

  test('parameter names that are JavaScript property names are unknown parameters, not ignored', async () => {
    const key = newTestKey();
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const res = await get(key, `${BASE}?${name}=1`);
      expectError(res, 400, { type: 'invalid_request_error', code: 'parameter_unknown', param: name });
    }
    const body = await post(key, BASE, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&constructor[prototype][polluted]=yes`);
    expectError(body, 400, { code: 'parameter_unknown' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await listAll(key)).toEqual([]);
  });
});

describe('the limit of 16 endpoints per account', () => {
  test('the 17th is refused, and after a delete one more fits', async () => {
    const key = newTestKey();
    const ids = await createWebhookEndpoints(t, key, LIMIT);
    const refused = await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'] });
    expectError(refused, 400, { type: 'invalid_request_error' });
    expect(refused.body.error.message).toContain('16');
    expect((await listAll(key)).length).toBe(LIMIT);

    expect((await del(key, `${BASE}/${ids[3]}`)).status).toBe(200);
    const again = await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'] });
    expect(again.status).toBe(200);
    expectError(await post(key, BASE, { url: WEBHOOK_URL, enabled_events: ['*'] }), 400, { type: 'invalid_request_error' });
    const listed = (await listAll(key)).map((e) => e.id);
    expect(listed).toHaveLength(LIMIT);
    expect(listed).not.toContain(ids[3]);
    expect(listed[0]).toBe(again.body.id);
  });

  test('concurrent creates never exceed it', async () => {
    const key = newTestKey();
    expect((await get(key, BASE)).status).toBe(200); // the account exists before the race
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(key, BASE, { url: `${WEBHOOK_URL}/${i}`, enabled_events: ['*'] }, { 'Idempotency-Key': `race-${i}` }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(LIMIT);
    expect(refused.map((r) => r.status)).toEqual(Array(30 - LIMIT).fill(400));
    for (const r of refused) expectErrorBody(r.body);
    const listed = (await listAll(key)).map((e) => e.id);
    expect(listed).toHaveLength(LIMIT);
    expect(new Set(listed)).toEqual(new Set(ok.map((r) => r.body.id)));
  });

  test("a new key's first requests, sent at once, all land in one account", async () => {
    const key = newTestKey();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(key, BASE, { url: `${WEBHOOK_URL}/${i}`, enabled_events: ['*'] })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect((await listAll(key)).length).toBe(8);
  });
});

describe('isolation between accounts', () => {
  test("another key can't see, update or delete the endpoint", async () => {
    const owner = newTestKey();
    const other = newTestKey();
    const created = await createWebhookEndpoint(t, owner, { metadata: { a: '1' } });
    const path = `${BASE}/${created.id}`;
    expectError(await get(other, path), 404, missing(created.id));
    expectError(await post(other, path, { url: `${CLOSED_ORIGIN}/other`, disabled: 'true', metadata: { a: '2' } }), 404, missing(created.id));
    expectError(await del(other, path), 404, missing(created.id));
    expect(await listAll(other)).toEqual([]);
    // The owner's endpoint is untouched.
    expect((await get(owner, path)).body).toEqual(withoutSecret(created));

    const err = await t.stripe(other).webhookEndpoints.retrieve(created.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(err).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'id' });
  });
});

describe('through the SDK', () => {
  test('error classes follow the HTTP status', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const badUrl = await stripe.webhookEndpoints.create({ url: 'ftp://example.com', enabled_events: ['*'] }).catch((e: unknown) => e);
    expect(badUrl).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(badUrl).toMatchObject({ statusCode: 400, param: 'url', type: 'StripeInvalidRequestError' });
    expect((badUrl as Stripe.errors.StripeError).requestId).toMatch(/^req_[A-Za-z0-9]{14,}$/);

    const notFound = await stripe.webhookEndpoints.update('we_nope', { disabled: true }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(notFound).toMatchObject({ statusCode: 404, code: 'resource_missing', message: "No such webhook endpoint: 'we_nope'" });
  });

  test('a bad or missing key is a StripeAuthenticationError', async () => {
    const malformed = await t.stripe('sk_test_bad-key!').webhookEndpoints.list().catch((e: unknown) => e);
    expect(malformed).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(malformed).toMatchObject({ statusCode: 401, message: 'Invalid API Key provided: sk_test_****key!' });

    const publishable = await t.stripe('pk_test_abcdef123456').webhookEndpoints.list().catch((e: unknown) => e);
    expect(publishable).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);

    const live = await t.stripe('sk_live_abcdef123456').webhookEndpoints.list().catch((e: unknown) => e);
    expect(live).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((live as Error).message).toMatch(/live mode/i);

    // No Authorization header at all: an authenticator that adds nothing.
    const none = await t
      .stripe('', { authenticator: async () => undefined })
      .webhookEndpoints.list()
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(none).toMatchObject({ statusCode: 401 });
    expect((none as Error).message).toMatch(/^You did not provide an API key\./);
  });

  test('the same Idempotency-Key with other parameters is a StripeIdempotencyError', async () => {
    const stripe = t.stripe(newTestKey());
    const first = await stripe.webhookEndpoints.create({ url: `${WEBHOOK_URL}/1`, enabled_events: ['*'] }, { idempotencyKey: 'idem-sdk' });
    const replay = await stripe.webhookEndpoints.create({ url: `${WEBHOOK_URL}/1`, enabled_events: ['*'] }, { idempotencyKey: 'idem-sdk' });
    expect(replay.id).toBe(first.id);
    expect(replay.secret).toBe(first.secret);
    expect(replay.lastResponse.headers['idempotent-replayed']).toBe('true');

    const err = await stripe.webhookEndpoints
      .create({ url: `${WEBHOOK_URL}/2`, enabled_events: ['*'] }, { idempotencyKey: 'idem-sdk' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(err).toMatchObject({ statusCode: 400, rawType: 'idempotency_error' });
    expect((err as Error).message).toContain("'idem-sdk'");
    const all = await stripe.webhookEndpoints.list({ limit: 100 });
    expect(all.data.map((e) => e.id)).toEqual([first.id]);
  });

  test('lastResponse carries request-id, idempotency-key and stripe-version', async () => {
    const stripe = t.stripe(newTestKey());
    const created = await stripe.webhookEndpoints.create({ url: WEBHOOK_URL, enabled_events: ['*'] }, { idempotencyKey: 'headers-check' });
    expect(created.lastResponse.headers['request-id']).toMatch(/^req_[A-Za-z0-9]{14,}$/);
    expect(created.lastResponse.requestId).toBe(created.lastResponse.headers['request-id']);
    expect(created.lastResponse.headers['idempotency-key']).toBe('headers-check');
    expect(created.lastResponse.headers['stripe-version']).toBe(Stripe.API_VERSION);

    const fetched = await stripe.webhookEndpoints.retrieve(created.id);
    expect(fetched.lastResponse.headers['request-id']).toMatch(/^req_[A-Za-z0-9]{14,}$/);
    expect(fetched.lastResponse.headers['request-id']).not.toBe(created.lastResponse.headers['request-id']);
    expect(fetched.lastResponse.headers['idempotency-key']).toBeUndefined();

    const pinned = t.stripe(newTestKey(), { apiVersion: '2024-06-20' as Stripe.LatestApiVersion });
    const list = await pinned.webhookEndpoints.list();
    expect(list.lastResponse.headers['stripe-version']).toBe('2024-06-20');
  });

  test('auto-pagination returns every endpoint once, newest first', async () => {
    const key = newTestKey();
    const ids = await createWebhookEndpoints(t, key, 12);
    const all = await t.stripe(key).webhookEndpoints.list({ limit: 3 }).autoPagingToArray({ limit: 100 });
    expect(all.map((e) => e.id)).toEqual([...ids].reverse());
    for (const e of all) expect(e.secret).toBeUndefined();
  });
});

