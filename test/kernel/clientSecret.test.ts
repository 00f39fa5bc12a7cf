import express from 'express';
import request from 'supertest';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { errorMiddleware, mountRoutes, requestIdentity } from '../../src/kernel/http';
import { RequestUpgrader } from '../../src/kernel/requestVersions';
import { resourceMissing } from '../../src/kernel/errors';
import { requireClientSecret } from '../../src/kernel/clientSecret';
import { route, type RequestContext, type Route } from '../../src/kernel/route';
import type { OperationSpec } from '../../src/kernel/openapi';
import { newId, randomBase62 } from '../../src/lib/ids';
import { accountOf, expectError } from './util';

// `publishable: 'client_secret'` routes and `requireClientSecret`, through the kernel's own
// pipeline on routes of this test's (the intents that declare it are resources of their own):
// a handler reads its object of the caller's account, then checks the client secret with the helper.

let t: TestApp;
let http: () => ReturnType<typeof request>;

/** Objects of the test's routes: account, sealed client secret. */
const objects = new Map<string, { accountId: string; sealed: string }>();

async function load(ctx: RequestContext) {
  const id = ctx.pathParams.intent;
  const row = objects.get(id);
  // An unknown id (or another account's) answers its 404 before any secret is looked at.
  if (!row || row.accountId !== ctx.caller.accountId) throw resourceMissing('test_intent', id, 'intent');
  return { id, row };
}

const handler = (object?: string) => async (ctx: RequestContext) => {
  const { id, row } = await load(ctx);
  await requireClientSecret(ctx, row.sealed, object);
  return { id, object: 'test_intent', client_secret: await ctx.deps.encryption.open(row.sealed), publishable: ctx.caller.publishable };
};

const schema = { type: 'object', properties: { client_secret: { type: 'string', maxLength: 5000 }, expand: { type: 'array', items: { type: 'string', maxLength: 5000 } } }, additionalProperties: false };
const one = { object: 'test_intent' };
const routes: Route[] = [
  route('get', '/v1/test_intents/{intent}', 'GetTestIntentsIntent', one, handler(), { publishable: 'client_secret' }),
  route('post', '/v1/test_intents/{intent}/confirm', 'PostTestIntentsIntentConfirm', one, handler(), { publishable: 'client_secret', responseHasSecret: true }),
  route('get', '/v1/test_setups/{intent}', 'GetTestSetupsIntent', one, handler('setup_intent'), { publishable: 'client_secret' }),
  route('post', '/v1/test_open', 'PostTestOpen', one, async (ctx) => ({ object: 'test_intent', publishable: ctx.caller.publishable }), { publishable: true }),
  route('get', '/v1/test_closed/{intent}', 'GetTestClosedIntent', one, async (ctx) => (await load(ctx)).id),
];
const operationOf = (r: Route, paramsSchema: object = schema): OperationSpec => ({ method: r.method, path: r.path, operationId: r.operationId, paramsSchema } as OperationSpec);

function buildTestApp(app: TestApp) {
  const server = express();
  server.set('query parser', false);
  server.use(requestIdentity(app.config.defaultApiVersion));
  // Only this test's routes: no request change names them.
  mountRoutes(server, routes, routes.map((r) => operationOf(r)), { ...app.kernel, requests: new RequestUpgrader([]) });
  server.use(errorMiddleware(app.runtime.logger));
  return server;
}

beforeAll(async () => {
  t = await startTestApp();
  const server = buildTestApp(t);
  http = () => request(server);
});
afterAll(() => t.close());

/** A platform (its secret and publishable keys) with one object and its client secret. */
async function fixture(): Promise<{ sk: string; pk: string; id: string; secret: string }> {
  const sk = newTestKey();
  const pk = `pk_test_${sk.slice(8)}`;
  await t.http().get('/v1/customers').set(bearer(sk));
  const id = newId('ti', 24);
  const secret = `${id}_secret_${randomBase62(25)}`;
  objects.set(id, { accountId: await accountOf(t, sk), sealed: await t.runtime.encryption.seal(secret) });
  return { sk, pk, id, secret };
}

const MISMATCH = (name: string, code: string) => ({
  code,
  param: 'client_secret',
  message: `The client_secret provided does not match the client_secret associated with the ${name}.`,
});

test('a publishable key with the right client secret reads the object, and the handler knows the key is publishable', async () => {
  const { pk, id, secret } = await fixture();
  const res = await http().get(`/v1/test_intents/${id}?client_secret=${secret}`).set(bearer(pk));
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ id, object: 'test_intent', client_secret: secret, publishable: true });
  const confirmed = await http().post(`/v1/test_intents/${id}/confirm`).set(bearer(pk)).type('form').send({ client_secret: secret });
  expect(confirmed.status).toBe(200);
});

test('without client_secret a publishable key gets parameter_missing; a secret key needs none', async () => {
  const { sk, pk, id, secret } = await fixture();
  expectError(await http().get(`/v1/test_intents/${id}`).set(bearer(pk)), 400, { code: 'parameter_missing', param: 'client_secret', message: 'Missing required param: client_secret.' });
  expectError(await http().post(`/v1/test_intents/${id}/confirm`).set(bearer(pk)).type('form').send(''), 400, { code: 'parameter_missing', param: 'client_secret' });
  const bySecretKey = await http().get(`/v1/test_intents/${id}`).set(bearer(sk));
  expect(bySecretKey.body).toEqual({ id, object: 'test_intent', client_secret: secret, publishable: false });
  // A secret key's client_secret is not compared (only a publishable key needs one).
  expect((await http().get(`/v1/test_intents/${id}?client_secret=wrong`).set(bearer(sk))).status).toBe(200);
});

test("a wrong client secret gets the public 400 and nothing of the object; another object's secret is wrong too", async () => {
  const a = await fixture();
  const b = await fixture();
  for (const wrong of ['wrong', `${a.secret}x`, a.secret.slice(0, -1), `${a.id}_secret_`, b.secret]) {
    const res = await http().get(`/v1/test_intents/${a.id}?client_secret=${encodeURIComponent(wrong)}`).set(bearer(a.pk));
    expectError(res, 400, MISMATCH('TestIntent', 'test_intent_invalid_parameter'));
    expect(res.text).not.toContain(a.secret);
  }
  // The object's type as the route names it, or as the handler passes it.
  expectError(await http().get(`/v1/test_setups/${a.id}?client_secret=wrong`).set(bearer(a.pk)), 400, MISMATCH('SetupIntent', 'setup_intent_invalid_parameter'));
});

test("an unknown id, or another platform's object with its own right secret, is the usual 404", async () => {
  const mine = await fixture();
  const theirs = await fixture();
  const missing = { code: 'resource_missing', param: 'intent' };
  expectError(await http().get(`/v1/test_intents/ti_nothing?client_secret=${mine.secret}`).set(bearer(mine.pk)), 404, missing);
  expectError(await http().get(`/v1/test_intents/${theirs.id}?client_secret=${theirs.secret}`).set(bearer(mine.pk)), 404, {
    ...missing,
    message: `No such test_intent: '${theirs.id}'`,
  });
});

test('a wrong client secret leaves the Idempotency-Key free: the corrected confirm with it runs', async () => {
  const { pk, id, secret } = await fixture();
  const send = (client_secret: string) => http().post(`/v1/test_intents/${id}/confirm`).set(bearer(pk)).set('Idempotency-Key', `k-${id}`).type('form').send({ client_secret });
  expectError(await send('wrong'), 400, { code: 'test_intent_invalid_parameter' });
  const corrected = await send(secret);
  expect(corrected.status).toBe(200);
  expect(corrected.headers['idempotent-replayed']).toBeUndefined();
});

test('`publishable: true` takes a publishable key as is; an operation without the option refuses it', async () => {
  const { pk, id } = await fixture();
  const open = await http().post('/v1/test_open').set(bearer(pk)).type('form').send('');
  expect(open.body).toEqual({ object: 'test_intent', publishable: true });
  expectError(await http().get(`/v1/test_closed/${id}`).set(bearer(pk)), 401, { code: 'secret_key_required' });
});

test("a route taking client secrets whose OpenAPI parameters don't declare client_secret stops the start", () => {
  const r = routes[0];
  expect(() =>
    mountRoutes(express(), [r], [operationOf(r, { type: 'object', properties: {}, additionalProperties: false })], { ...t.kernel, requests: new RequestUpgrader([]) }),
  ).toThrow(/GetTestIntentsIntent takes publishable keys with a client secret, but its OpenAPI parameters have no client_secret/);
});
