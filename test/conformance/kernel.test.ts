import { requestLogUrlPattern } from '../helpers/requests';
import { loadOpenApiDocument, operationsOf, type OperationSpec } from '../../src/kernel/openapi';
import { DOCUMENTED_ERROR_CODES } from '../../src/kernel/errorCodes';
import { generatedSchemas, routes } from '../../src/resources';
import { randomBase62 } from '../../src/lib/ids';
import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN, pathFixtures, validParams } from '../helpers/fixtures';
import { baselineFor, closeAgent, encodeForm, sendRaw, setAt, slotsOf, validValue, type RawResponse, type Slot } from '../helpers/malformed';

// What the kernel does for every operation in openapi/, so each area added later is covered as
// soon as it is documented: booleans in any letter case, error bodies as the public API writes
// them, parameter errors that leave an Idempotency-Key free, a trailing slash that is a 404, CORS,
// restricted keys, and publishable keys (refused unless the route declares `publishable`).

const operations = operationsOf(loadOpenApiDocument(generatedSchemas));
const title = (op: OperationSpec): string => `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
const pathParamsOf = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
const bracketed = (path: readonly string[]): string => path.map((s, i) => (i === 0 ? s : `[${s}]`)).join('');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  closeAgent();
  await t.close();
});

/** The operation's path with an existing object of `key`'s account for each path parameter. */
async function pathOf(op: OperationSpec, key: string): Promise<string> {
  let path = op.path;
  // Each fixture gets the ones before it (a person's account, say).
  const made: Record<string, string> = {};
  for (const p of pathParamsOf(op.path)) {
    made[p] = await pathFixtures[p](t, key, made);
    path = path.replace(`{${p}}`, encodeURIComponent(made[p]));
  }
  return path;
}

interface Sent {
  res: RawResponse;
  body: any;
}

async function send(op: OperationSpec, path: string, key: string, params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Sent> {
  const text = encodeForm(params);
  const isGet = op.method === 'get';
  const res = await sendRaw(t.port, {
    method: op.method.toUpperCase(),
    path: isGet && text ? `${path}?${text}` : path,
    headers: { Authorization: `Bearer ${key}`, ...(isGet ? {} : { 'Content-Type': 'application/x-www-form-urlencoded' }), ...headers },
    body: isGet ? undefined : Buffer.from(text),
  });
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    body = undefined;
  }
  return { res, body };
}

const baselineOf = (op: OperationSpec): Record<string, unknown> => baselineFor(op.paramsSchema, validParams[op.operationId]);
const branchesOf = (schema: any): any[] => [schema, ...(schema?.anyOf ?? [])];
const typesOf = (schema: any): string[] => branchesOf(schema).flatMap((b) => [b?.type].flat().filter(Boolean));

/** Sets `value` at the slot, filling the required members of every object on the way. */
function withValueAt(op: OperationSpec, baseline: Record<string, unknown>, slot: Slot, value: unknown): Record<string, unknown> {
  let params = baseline;
  let schema: any = op.paramsSchema;
  for (let i = 0; i < slot.path.length - 1; i++) {
    const segment = slot.path[i];
    const next = branchesOf(schema.properties?.[segment] ?? schema.items).find((b: any) => b?.properties || b?.items?.properties);
    if (!next) break;
    schema = next.items?.properties && /^\d+$/.test(slot.path[i + 1]) ? next.items : next;
    const here = slot.path.slice(0, /^\d+$/.test(slot.path[i + 1]) ? i + 2 : i + 1);
    for (const required of schema.required ?? []) {
      if (required === slot.path[here.length]) continue;
      const at = [...here, required];
      let node: any = params;
      for (const s of at) node = node?.[s];
      if (node === undefined) params = setAt(params, at, validValue(schema.properties?.[required]));
    }
    if (here.length === i + 2) i++;
  }
  return setAt(params, slot.path, value);
}

/** Every problem with an error body's links: doc_url iff a documented code, request_log_url as the public API shapes it. */
function linkProblems(sent: Sent): string[] {
  const error = sent.body?.error;
  if (!error) return [];
  const problems: string[] = [];
  const documented = typeof error.code === 'string' && DOCUMENTED_ERROR_CODES.has(error.code);
  if (documented && error.doc_url !== `https://stripe.com/docs/error-codes/${error.code.replace(/_/g, '-')}`) problems.push(`no doc_url for documented code ${error.code}`);
  if (!documented && error.doc_url !== undefined) problems.push(`a doc_url for ${error.code ?? 'no code'}`);
  const log = requestLogUrlPattern(t, String(sent.res.headers['request-id']));
  if (!log.test(String(error.request_log_url))) problems.push(`request_log_url ${error.request_log_url}`);
  return problems;
}

const booleanSlots = (op: OperationSpec): Slot[] => slotsOf(op.paramsSchema).filter((s) => typesOf(s.schema).includes('boolean'));
const withBooleans = operations.filter((op) => booleanSlots(op).length > 0);

describe('booleans in any letter case (`True`/`False`, as SDKs before 2025 send them)', () => {
  test('some operations have booleans', () => {
    expect(withBooleans.length).toBeGreaterThan(3);
  });

  test.each(withBooleans.map((op) => [title(op), op] as const))('%s', async (_title, op) => {
    const key = newTestKey();
    const baseline = baselineOf(op);
    const failures: string[] = [];
    const path = await pathOf(op, key);
    for (const [i, slot] of booleanSlots(op).slice(0, 12).entries()) {
      const param = bracketed(slot.path);
      for (const value of i % 2 === 0 ? ['True', 'FALSE'] : ['False', 'tRuE']) {
        const { res, body } = await send(op, path, key, withValueAt(op, baseline, slot, value));
        const error = body?.error;
        if (res.status >= 500 || /Invalid boolean/.test(error?.message ?? '') || (error && error.param === param)) {
          failures.push(`${param}=${value} → ${res.status} ${res.text.slice(0, 300)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  test('the value is read, not just let through: True disables, false enables', async () => {
    const key = newTestKey();
    const op = operations.find((o) => o.operationId === 'PostWebhookEndpoints')!;
    const created = await send(op, '/v1/webhook_endpoints', key, { url: `${CLOSED_ORIGIN}/h`, enabled_events: ['*'], connect: 'TRUE' });
    expect(created.res.status).toBe(200);
    const update = operations.find((o) => o.method === 'post' && o.path === '/v1/webhook_endpoints/{webhook_endpoint}')!;
    const path = `/v1/webhook_endpoints/${created.body.id}`;
    expect((await send(update, path, key, { disabled: 'True' })).body.status).toBe('disabled');
    expect((await send(update, path, key, { disabled: 'false' })).body.status).toBe('enabled');
    const bad = await send(update, path, key, { disabled: 'yes' });
    expect(bad.body.error).toMatchObject({ message: 'Invalid boolean: yes', param: 'disabled' });
    expect(bad.body.error.code).toBeUndefined();
  });
});

/** A valid value that the form encoding doesn't drop: an object gets its first member. */
function nonEmpty(schema: any): unknown {
  const value = validValue(schema);
  const object = branchesOf(schema).find((b) => b?.properties);
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length > 0 || !object) return value;
  const [first] = Object.keys(object.properties);
  return { [first]: nonEmpty(object.properties[first]) };
}

/** `a`, `a or b`, `a, b, or c`. */
function listed(values: string[]): string {
  if (values.length <= 2) return values.join(' or ');
  return `${values.slice(0, -1).join(', ')}, or ${values[values.length - 1]}`;
}

describe('error bodies as the public API writes them', () => {
  describe.each(operations.map((op) => [title(op), op] as const))('%s', (_title, op) => {
    test('enums list every value without a code; arrays past maxItems; missing members by bracketed path; doc_url and request_log_url', async () => {
      const key = newTestKey();
      const baseline = baselineOf(op);
      const failures: string[] = [];
      const path = await pathOf(op, key);
      const check = async (what: string, params: Record<string, unknown>, expected: (error: any) => string | undefined) => {
        const sent = await send(op, path, key, params);
        const error = sent.body?.error;
        const problem = !error ? `not an error: ${sent.res.status}` : expected(error);
        const problems = [...(problem ? [problem] : []), ...linkProblems(sent)];
        if (problems.length) failures.push(`${what}: ${problems.join('; ')} → ${sent.res.status} ${sent.res.text.slice(0, 300)}`);
      };
      // A member of one of several object forms (a card or a bank account): the baseline fills one
      // form, so a change to another's member is judged as that form's (the resource tests cover them).
      const forms = (path: string[]) => branchesOf(slotsOf(op.paramsSchema).find((s) => s.path.join('/') === path.join('/'))?.schema).filter((b: any) => b?.properties).length;
      const slots = slotsOf(op.paramsSchema).filter((s) => s.path.length < 2 || forms(s.path.slice(0, -1)) < 2);

      for (const slot of slots.filter((s) => branchesOf(s.schema).some((b) => Array.isArray(b?.enum) && b.enum.some((v: unknown) => v !== ''))).slice(0, 8)) {
        const param = bracketed(slot.path);
        const values = branchesOf(slot.schema).flatMap((b) => b?.enum ?? []).filter((v: unknown) => v !== '').map(String);
        const message = `Invalid ${param}: must be one of ${listed(values)}`;
        await check(`enum ${param}`, withValueAt(op, baseline, slot, 'zz_not_a_value'), (e) =>
          e.param !== param || e.message !== message || e.code !== undefined ? `expected {param: ${param}, message: ${message}, no code}` : undefined,
        );
      }
      for (const slot of slots.filter((s) => typeof s.schema?.maxItems === 'number').slice(0, 4)) {
        const param = bracketed(slot.path);
        const items = Array.from({ length: slot.schema.maxItems + 1 }, (_, i) => {
          // An empty object is not sent at all, so each item has a member.
          const item = nonEmpty(slot.schema.items);
          return typeof item === 'string' && slot.schema.items?.enum === undefined ? `${item}${i}` : item;
        });
        const message = `Array ${param} exceeded maximum ${slot.schema.maxItems} allowed elements.`;
        await check(`maxItems ${param}`, withValueAt(op, baseline, slot, items), (e) => (e.param !== param || e.message !== message ? `expected ${message}` : undefined));
      }
      // A member missing from a nested object: the object is sent with its other required members.
      for (const slot of slots.filter((s) => s.path.length >= 2 && !s.path.includes('0')).slice(0, 40)) {
        const parent = slot.path.slice(0, -1);
        const parentSchema = slots.find((s) => s.path.join('/') === parent.join('/'))?.schema;
        const objectBranch = branchesOf(parentSchema).find((b: any) => b?.properties?.[slot.path[slot.path.length - 1]]);
        const member = slot.path[slot.path.length - 1];
        if (!objectBranch?.required?.includes(member)) continue;
        const others = Object.fromEntries((objectBranch.required as string[]).filter((r) => r !== member).map((r) => [r, validValue(objectBranch.properties[r])]));
        // An empty object is not sent at all (the form has nothing to say), so give it another
        // member, one that the form encodes (an empty `metadata` says nothing either).
        const encodes = (value: unknown) => typeof value !== 'object' || value === null || Object.keys(value).length > 0;
        const another = Object.keys(objectBranch.properties).find((p) => p !== member && encodes(nonEmpty(objectBranch.properties[p])));
        if (Object.keys(others).length === 0 && another !== undefined) others[another] = nonEmpty(objectBranch.properties[another]);
        // An object whose only member is this one can't be sent without it (the form says nothing).
        if (Object.keys(others).length === 0) continue;
        const param = bracketed(slot.path);
        await check(`missing ${param}`, withValueAt(op, baseline, { path: parent, schema: objectBranch }, others), (e) =>
          e.code !== 'parameter_missing' || e.param !== param ? `expected parameter_missing on ${param}` : undefined,
        );
      }
      // Any error at all has the public links.
      await check('an unknown parameter', { ...baseline, zz_unknown: 'x' }, (e) => (e.code === 'parameter_unknown' ? undefined : 'expected parameter_unknown'));
      expect(failures).toEqual([]);
    }, 120_000);
  });

  test('an enum of two values reads "a or b"', async () => {
    const op = operations.find((o) => o.operationId === 'PostAppsSecrets')!;
    const { body } = await send(op, '/v1/apps/secrets', newTestKey(), { name: 'n', payload: 'p', scope: { type: 'team' } });
    expect(body.error).toMatchObject({ param: 'scope[type]', message: 'Invalid scope[type]: must be one of account or user' });
  });
});

describe('idempotency: parameter errors are not kept, wherever they are raised', () => {
  const create = operations.find((o) => o.operationId === 'PostWebhookEndpoints')!;

  test('a url_invalid raised by the handler is not replayed: the corrected retry with the same key runs, then replays', async () => {
    const key = newTestKey();
    const headers = { 'Idempotency-Key': `k-${randomBase62(12)}` };
    const bad = await send(create, '/v1/webhook_endpoints', key, { url: 'ftp://example.invalid/h', enabled_events: ['*'] }, headers);
    expect(bad.res.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'url_invalid', param: 'url' });
    const again = await send(create, '/v1/webhook_endpoints', key, { url: 'ftp://example.invalid/h', enabled_events: ['*'] }, headers);
    expect(again.res.headers['idempotent-replayed']).toBeUndefined();

    const good = await send(create, '/v1/webhook_endpoints', key, { url: `${CLOSED_ORIGIN}/h`, enabled_events: ['*'] }, headers);
    expect(good.res.status).toBe(200);
    expect(good.res.headers['idempotent-replayed']).toBeUndefined();
    const replay = await send(create, '/v1/webhook_endpoints', key, { url: `${CLOSED_ORIGIN}/h`, enabled_events: ['*'] }, headers);
    expect(replay.res.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(good.body.id);
  });

  test('a state error (a 404 on the path id) is kept and replayed', async () => {
    const key = newTestKey();
    const update = operations.find((o) => o.method === 'post' && o.path === '/v1/webhook_endpoints/{webhook_endpoint}')!;
    const headers = { 'Idempotency-Key': `k-${randomBase62(12)}` };
    const path = '/v1/webhook_endpoints/we_000000000000000000000000';
    const first = await send(update, path, key, { description: 'x' }, headers);
    expect(first.res.status).toBe(404);
    const replay = await send(update, path, key, { description: 'x' }, headers);
    expect(replay.res.status).toBe(404);
    expect(replay.res.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  const posts = operations.filter((op) => op.method === 'post');
  test.each(posts.map((op) => [title(op), op] as const))('%s: after a parameter error, the same key runs other parameters', async (_title, op) => {
    const key = newTestKey();
    const path = await pathOf(op, key);
    const headers = { 'Idempotency-Key': `k-${randomBase62(12)}` };
    const bad = await send(op, path, key, { ...baselineOf(op), zz_unknown: 'x' }, headers);
    expect(bad.res.status).toBe(400);
    const next = await send(op, path, key, baselineOf(op), headers);
    expect(next.res.headers['idempotent-replayed']).toBeUndefined();
    expect(next.body?.error?.type).not.toBe('idempotency_error');
  });
});

describe('a trailing slash is an unknown URL', () => {
  test.each(operations.map((op) => [title(op), op] as const))('%s', async (_title, op) => {
    const key = newTestKey();
    const path = `${await pathOf(op, key)}/`;
    const { res, body } = await send(op, path, key, {});
    expect(res.status).toBe(404);
    expect(body.error.message).toBe(`Unrecognized request URL (${op.method.toUpperCase()}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`);
  });
});

describe('CORS, as the public API sends it', () => {
  const EXPOSED = 'Request-Id, Stripe-Manage-Version, Stripe-Should-Retry, X-Stripe-External-Auth-Required, X-Stripe-Privileged-Session-Required';

  test.each(operations.map((op) => [title(op), op] as const))('%s: a preflight needs no key; answers expose Request-Id', async (_title, op) => {
    const key = newTestKey();
    const path = await pathOf(op, key);
    const preflight = await sendRaw(t.port, {
      method: 'OPTIONS',
      path,
      headers: {
        Origin: 'http://localhost:3000',
        'Access-Control-Request-Method': op.method.toUpperCase(),
        'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key, stripe-version',
      },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, HEAD, PUT, PATCH, POST, DELETE',
      'access-control-allow-headers': 'authorization, content-type, idempotency-key, stripe-version',
      'access-control-max-age': '300',
    });
    expect(preflight.headers['access-control-allow-methods']).toContain(op.method.toUpperCase());

    const { res } = await send(op, path, key, baselineOf(op), { Origin: 'http://localhost:3000' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers']).toBe(EXPOSED);
  });

  test('errors carry the headers too, and hosted pages get none', async () => {
    const unauthorized = await sendRaw(t.port, { method: 'GET', path: '/v1/account', headers: { Origin: 'http://localhost:3000' } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers['access-control-allow-origin']).toBe('*');
    const hosted = await sendRaw(t.port, {
      method: 'OPTIONS',
      path: '/hosted/account_links/zz',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(hosted.headers['access-control-allow-origin']).toBeUndefined();
    expect(hosted.status).toBeGreaterThanOrEqual(400);
  });
});

describe('restricted keys (rk_test_) work like secret keys in open mode', () => {
  test.each(operations.map((op) => [title(op), op] as const))('%s', async (_title, op) => {
    const key = `rk_test_${randomBase62(24)}`;
    const { res } = await send(op, await pathOf(op, key), key, baselineOf(op));
    expect(res.status).not.toBe(401);
    expect(res.status).toBeLessThan(500);
    const live = await send(op, op.path, `rk_live_${randomBase62(24)}`, {});
    expect(live.res.status).toBe(401);
  });
});

describe('publishable keys (pk_test_) reach only the operations whose route declares `publishable`', () => {
  const routeOf = (op: OperationSpec) => routes.find((r) => r.operationId === op.operationId)!;
  /** What Stripe.js (and the mobile SDKs) call with a publishable key: nothing else may take one. */
  const STRIPE_JS = new Set([
    'PostPaymentMethods',
    'GetPaymentIntentsIntent',
    'PostPaymentIntentsIntentConfirm',
    'GetSetupIntentsIntent',
    'PostSetupIntentsIntentConfirm',
  ]);

  test('only what Stripe.js calls declares it, and POST /v1/payment_methods does', () => {
    const declared = routes.filter((r) => r.publishable !== undefined).map((r) => r.operationId);
    expect(declared).toContain('PostPaymentMethods');
    expect(declared.filter((id) => !STRIPE_JS.has(id))).toEqual([]);
  });

  test.each(operations.map((op) => [title(op), op] as const))('%s', async (_title, op) => {
    const key = newTestKey();
    const publishable = `pk_test_${key.slice('sk_test_'.length)}`;
    const path = await pathOf(op, key);
    const { publishable: option } = routeOf(op);
    const { client_secret: _dropped, ...baseline } = baselineOf(op);
    const sent = await send(op, path, publishable, baseline);
    if (option === undefined) {
      expect(sent.res.status).toBe(401);
      expect(sent.body.error).toMatchObject({ type: 'invalid_request_error', code: 'secret_key_required' });
      expect(sent.body.error.message).toMatch(/^This API call cannot be made with a publishable API key\./);
      expect(linkProblems(sent)).toEqual([]);
    } else if (option === 'client_secret') {
      expect(sent.res.status).toBe(400);
      expect(sent.body.error).toMatchObject({ code: 'parameter_missing', param: 'client_secret' });
      // A wrong one shows nothing of the object.
      const wrong = await send(op, path, publishable, { ...baseline, client_secret: `${path.split('/')[3]}_secret_wrong` });
      expect(wrong.res.status).toBe(400);
      expect(wrong.body.error).toMatchObject({ param: 'client_secret', code: expect.stringMatching(/_invalid_parameter$/) });
    } else {
      expect(sent.res.status).not.toBe(401);
      expect(sent.res.status).toBeLessThan(500);
    }
    const live = await send(op, op.path, `pk_live_${randomBase62(24)}`, {});
    expect(live.res.status).toBe(401);
    expect(live.body.error.message).toMatch(/live mode is disabled/i);
  });
});
