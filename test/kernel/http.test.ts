import { connect } from 'node:net';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { resolveApiVersion } from '../../src/kernel/http';
import { API_VERSIONS, CONTRACT_API_VERSION, LATEST_API_VERSION } from '../../src/kernel/versions';
import { routes as registeredRoutes } from '../../src/resources';
import { CREATE_BODY, createEndpoint, ENDPOINTS, expectError, mustCreate } from './util';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const REQUEST_ID = /^req_[A-Za-z0-9]{14,}$/;

describe('Request-Id', () => {
  test('on successes, errors, unknown URLs and kernel endpoints, different every time', async () => {
    const key = newTestKey();
    const responses = [
      await createEndpoint(t, key),
      await t.http().get(ENDPOINTS).set(bearer(key)),
      await t.http().get(ENDPOINTS),
      await t.http().get(`${ENDPOINTS}?limit=abc`).set(bearer(key)),
      await t.http().get('/v1/foo'),
      await t.http().get('/healthz'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 401, 400, 404, 200]);
    for (const r of responses) expect(r.headers['request-id']).toMatch(REQUEST_ID);
    expect(new Set(responses.map((r) => r.headers['request-id'])).size).toBe(responses.length);
  });

  test('the error body links the same request id', async () => {
    const res = await t.http().get(`${ENDPOINTS}/we_nope`).set(bearer(newTestKey()));
    // As the public API shapes it: the request's log, at the second the request arrived.
    const before = Math.floor(Date.now() / 1000);
    const url = new URL(res.body.error.request_log_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${t.config.publicUrl}/test/logs/${res.headers['request-id']}`);
    expect(Number(url.searchParams.get('t'))).toBeGreaterThanOrEqual(before - 5);
    expect(Number(url.searchParams.get('t'))).toBeLessThanOrEqual(before);
  });

  test('the SDK sees it', async () => {
    const list = await t.stripe(newTestKey()).webhookEndpoints.list();
    expect(list.lastResponse.requestId).toMatch(REQUEST_ID);
  });
});

describe('Idempotency-Key echo', () => {
  test('echoed on POST, and on errors', async () => {
    const key = newTestKey();
    const ok = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': 'echo-me-1' });
    expect(ok.headers['idempotency-key']).toBe('echo-me-1');
    const bad = await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/h`, { 'Idempotency-Key': 'echo-me-2' });
    expect(bad.status).toBe(400);
    expect(bad.headers['idempotency-key']).toBe('echo-me-2');
  });

  test('absent when none was sent', async () => {
    const res = await t.http().get(ENDPOINTS).set(bearer(newTestKey()));
    expect(res.headers['idempotency-key']).toBeUndefined();
  });
});

describe('Stripe-Version', () => {
  test(`the default (DEFAULT_API_VERSION, the contract's ${CONTRACT_API_VERSION}) is echoed when none is sent; the newest answers when pinned`, async () => {
    expect(LATEST_API_VERSION).toBe('2026-10-28.endive');
    expect(CONTRACT_API_VERSION).toBe('2026-08-26.dahlia');
    expect(t.config.defaultApiVersion).toBe(CONTRACT_API_VERSION);
    const key = newTestKey();
    const res = await t.http().get(ENDPOINTS).set(bearer(key));
    expect(res.headers['stripe-version']).toBe('2026-08-26.dahlia');
    const pinned = await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Version', LATEST_API_VERSION);
    expect(pinned.headers['stripe-version']).toBe(LATEST_API_VERSION);
  });

  test('the version stripe@23 sends is accepted and echoed', async () => {
    const res = await t.http().get(ENDPOINTS).set(bearer(newTestKey())).set('Stripe-Version', '2026-10-28.endive');
    expect(res.status).toBe(200);
    expect(res.headers['stripe-version']).toBe('2026-10-28.endive');
    const list = await t.stripe(newTestKey()).webhookEndpoints.list();
    expect(list.lastResponse.apiVersion).toBe('2026-10-28.endive');
  });

  test('once the default is pinned, a version applies to its request only', async () => {
    const key = newTestKey();
    await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Version', '2025-03-31.basil');
    const first = await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Version', '2024-06-20');
    expect(first.headers['stripe-version']).toBe('2024-06-20');
    const next = await t.http().get(ENDPOINTS).set(bearer(key));
    expect(next.headers['stripe-version']).toBe('2025-03-31.basil');
  });

  test('beta flags after ";" are accepted', async () => {
    const res = await t.http().get(ENDPOINTS).set(bearer(newTestKey())).set('Stripe-Version', '2026-10-28.endive; some_beta=v1');
    expect(res.status).toBe(200);
    expect(res.headers['stripe-version']).toBe('2026-10-28.endive');
  });

  test.each(['2099-01-01.zebra', 'latest', '2026-08-26'])('an unknown version (%s) is a 400', async (version) => {
    const res = await t.http().get(ENDPOINTS).set(bearer(newTestKey())).set('Stripe-Version', version);
    expectError(res, 400, { message: `Invalid Stripe API version: ${version}` });
  });

  test('a 401 (no key) echoes a known requested version, and the default for an unknown one', async () => {
    const known = await t.http().get(ENDPOINTS).set('Stripe-Version', '2024-06-20');
    expect(known.status).toBe(401);
    expect(known.headers['stripe-version']).toBe('2024-06-20');
    const unknown = await t.http().get(ENDPOINTS).set('Stripe-Version', 'bogus');
    expect(unknown.status).toBe(401);
    expect(unknown.headers['stripe-version']).toBe(CONTRACT_API_VERSION);
  });

  test('an unknown version creates nothing', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const res = await createEndpoint(t, key, CREATE_BODY, { 'Stripe-Version': 'bogus' });
    expect(res.status).toBe(400);
    const list = await t.http().get(ENDPOINTS).set(bearer(key));
    expect(list.body.data).toHaveLength(1);
  });

  test('resolveApiVersion', () => {
    expect(resolveApiVersion(undefined, 'fallback')).toBe('fallback');
    expect(resolveApiVersion(' 2025-03-31.basil ', LATEST_API_VERSION)).toBe('2025-03-31.basil');
    expect(() => resolveApiVersion('x'.repeat(500), LATEST_API_VERSION)).toThrow(`Invalid Stripe API version: ${'x'.repeat(100)}`);
    expect(API_VERSIONS).toContain('2026-10-28.endive');
  });
});

describe('response basics', () => {
  test('JSON, not cached', async () => {
    const res = await t.http().get(ENDPOINTS).set(bearer(newTestKey()));
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-cache, no-store');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  test('answers are indented with two spaces, as the public API answers: objects, lists, errors and replays', async () => {
    const key = newTestKey();
    const created = await t.http().post('/v1/customers').set(bearer(key)).set('Idempotency-Key', `indent-${Date.now()}`).type('form').send('name=Indented&metadata[a]=b');
    expect(created.status).toBe(200);
    expect(created.text).toBe(JSON.stringify(created.body, null, 2));
    expect(created.text).toMatch(/^\{\n  "id": "cus_/);
    expect(created.text).toContain('\n  "metadata": {\n    "a": "b"\n  },\n');
    expect(created.text).toContain('"preferred_locales": [],');
    const replay = await t.http().post('/v1/customers').set(bearer(key)).set('Idempotency-Key', created.headers['idempotency-key']).type('form').send('name=Indented&metadata[a]=b');
    expect(replay.text).toBe(created.text);
    const list = await t.http().get('/v1/customers?limit=1').set(bearer(key));
    expect(list.text).toBe(JSON.stringify(list.body, null, 2));
    expect(list.text).toMatch(/^\{\n  "object": "list",\n  "data": \[\n    \{\n      "id": "cus_/);
    const missing = await t.http().get('/v1/customers/cus_nope').set(bearer(key));
    expect(missing.status).toBe(404);
    expect(missing.text).toBe(JSON.stringify(missing.body, null, 2));
    expect(missing.text).toMatch(/^\{\n  "error": \{\n    "/);
  });
});

describe('kernel endpoints', () => {
  test('/healthz is 200 without a key', async () => {
    const res = await t.http().get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  test('/readyz is 200 when PostgreSQL and Redis answer', async () => {
    const res = await t.http().get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', postgres: true, redis: true });
  });

  test('/readyz is 503 when Redis cannot be reached', async () => {
    const down = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const res = await down.http().get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'unavailable', postgres: true, redis: false });
      expect(res.headers['request-id']).toMatch(REQUEST_ID);
    } finally {
      down.runtime.redis.disconnect();
      await down.close();
    }
  });

  test('/readyz is 503 when PostgreSQL cannot be reached', async () => {
    const down = await startTestApp({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/nowhere' });
    try {
      const res = await down.http().get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'unavailable', postgres: false, redis: true });
    } finally {
      await down.close();
    }
  });

  test('/openapi.json serves the document with every routed operation', async () => {
    const res = await t.http().get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const routes = registeredRoutes;
    expect(routes.length).toBeGreaterThanOrEqual(5);
    for (const r of routes) {
      expect(doc.paths[r.path]?.[r.method]?.operationId).toBe(r.operationId);
    }
    for (const p of ['/healthz', '/readyz', '/openapi.json']) expect(doc.paths[p].get['x-kernel']).toBe(true);
    const ids = Object.values<any>(doc.paths).flatMap((item) => ['get', 'post', 'delete'].filter((m) => item[m]).map((m) => item[m].operationId));
    expect(new Set(ids).size).toBe(ids.length);
    // Schemas generated from code are in the document too.
    expect(doc.components.schemas.api_version.enum).toContain(LATEST_API_VERSION);
  });
});

describe('requests Node refuses before routing', () => {
  /** Writes `request` on a raw socket (in one write, or in the parts given) and reads the whole answer. */
  function raw(parts: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(t.port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.on('error', reject);
      socket.on('connect', async () => {
        for (const part of parts) {
          socket.write(part);
          await new Promise((r) => setTimeout(r, 50));
        }
      });
    });
  }
  const oversized = (method: string) => `${method} /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
  const split = (answer: string) => {
    const end = answer.indexOf('\r\n\r\n');
    return { head: answer.slice(0, end), body: answer.slice(end + 4) };
  };

  test('a HEAD answered 431 carries no body', async () => {
    const { head, body } = split(await raw([oversized('HEAD')]));
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toContain('Content-Length: 0');
    expect(body).toBe('');
  });

  test('a GET answered 431 gets the error shape', async () => {
    const { head, body } = split(await raw([oversized('GET')]));
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/\r\nRequest-Id: req_[A-Za-z0-9]+\r\n/);
    expect(JSON.parse(body).error).toEqual({ type: 'invalid_request_error', message: 'The request headers (or the URL) are too large.' });
  });

  test("a request whose start Node no longer holds, or that follows another in one write, gets no body (its method can't be seen)", async () => {
    const request = oversized('HEAD');
    const late = split(await raw([request.slice(0, 40), request.slice(40)]));
    expect(late.head).toMatch(/^HTTP\/1\.1 431 /);
    expect(late.body).toBe('');
    const pipelined = await raw([`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n${request}`]);
    expect(pipelined).toMatch(/^HTTP\/1\.1 200 /);
    const second = pipelined.slice(pipelined.indexOf('HTTP/1.1 431'));
    expect(split(second).body).toBe('');
  });

  test('a HEAD refused as bad HTTP carries no body either', async () => {
    const { head, body } = split(await raw(['HEAD /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n']));
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(body).toBe('');
  });
});

describe("an error's status follows the request's version", () => {
  test("a key without access to the account named is a 403, and a 401 at versions before 2016-10-19, with the same body", async () => {
    const key = newTestKey();
    const stranger = 'acct_1NotMine0000000';
    const newest = await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Account', stranger);
    expectError(newest, 403, { code: 'account_invalid' });
    const older = await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Account', stranger).set('Stripe-Version', '2016-07-06');
    expectError(older, 401, { code: 'account_invalid', message: newest.body.error.message });
    const since = await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Account', stranger).set('Stripe-Version', '2016-10-19');
    expect(since.status).toBe(403);
    // Other errors keep their status at any version.
    expect((await t.http().get(`${ENDPOINTS}/we_nope`).set(bearer(key)).set('Stripe-Version', '2016-07-06')).status).toBe(404);
  });
});

describe('an unknown URL checks the key first, as the public API does', () => {
  const PATH = '/v1/no_such_thing/at_all';

  test('a malformed or live key answers 401; a valid key or none, 404', async () => {
    for (const authorization of ['Bearer not_a_key', 'Bearer sk_live_abcdefghijklmnopqrstuvwx', 'Bearer ']) {
      const res = await t.http().get(PATH).set('Authorization', authorization);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error' });
      expect(res.body.error.message).not.toContain('Unrecognized request URL');
    }
    const post = await t.http().post(PATH).set('Authorization', 'Bearer sk_test_short!').type('form').send('a=1');
    expect(post.status).toBe(401);
    expect((await t.http().get(PATH).set(bearer(newTestKey()))).status).toBe(404);
    expect((await t.http().get(PATH)).status).toBe(404);
  });

  test('the official SDK sees an authentication error for a bad key on an unknown route', async () => {
    const stripe = t.stripe('sk_test_bad key');
    const err = await (stripe as any).rawRequest('GET', PATH).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'StripeAuthenticationError', statusCode: 401 });
  });

  test('in registered mode an unregistered key answers 401 on an unknown route', async () => {
    const r = await startTestApp({ AUTH_MODE: 'registered' });
    try {
      const res = await r.http().get(PATH).set(bearer(newTestKey()));
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/^Invalid API Key provided/);
    } finally {
      await r.close();
    }
  });
});
