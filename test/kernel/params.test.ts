import { request as httpRequest } from 'node:http';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { parseForm } from '../../src/kernel/params';
import { ApiError } from '../../src/kernel/errors';
import { accountOf, createEndpoint, ENDPOINTS, endpointCount, expectError, mustCreate } from './util';

let t: TestApp;
/** The same app with small limits, so the limits are cheap to reach. */
let small: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  small = await startTestApp({ PARAM_DEPTH_LIMIT: '3', PARAM_COUNT_LIMIT: '20', BODY_LIMIT_BYTES: '1024' });
});
afterAll(async () => {
  await t.close();
  await small.close();
});

describe('form parsing', () => {
  test('bracketed objects become nested objects', async () => {
    const body = await mustCreate(t, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&metadata[order]=42&metadata[customer]=c%20d`);
    expect(body.metadata).toEqual({ order: '42', customer: 'c d' });
  });

  test('a[] and indexed arrays keep their order', async () => {
    const key = newTestKey();
    const pushed = await mustCreate(t, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=account.updated&enabled_events[]=capability.updated`);
    expect(pushed.enabled_events).toEqual(['account.updated', 'capability.updated']);
    const indexed = await mustCreate(t, key, `url=${CLOSED_ORIGIN}/h&enabled_events[1]=capability.updated&enabled_events[0]=account.updated`);
    expect(indexed.enabled_events).toEqual(['account.updated', 'capability.updated']);
  });

  test('sparse indexes are refused rather than silently compacted', async () => {
    const res = await createEndpoint(t, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[0]=account.updated&enabled_events[2]=capability.updated`);
    expectError(res, 400, { code: 'parameter_invalid', param: 'enabled_events' });
  });

  test('a[] pushes and nested pushes number their own arrays', async () => {
    const body = await mustCreate(
      t,
      newTestKey(),
      `enabled_events[]=account.updated&url=${CLOSED_ORIGIN}/h&enabled_events%5B%5D=capability.updated&metadata[a]=1`,
    );
    expect(body.enabled_events).toEqual(['account.updated', 'capability.updated']);
    expect(body.metadata).toEqual({ a: '1' });
  });

  test('numeric metadata keys stay keys (the SDK sends metadata[0]=…)', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&metadata[0]=zero&metadata[7]=seven`);
    expect(created.metadata).toEqual({ '0': 'zero', '7': 'seven' });
    const updated = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('metadata[2500]=big&metadata[0]=');
    expect(updated.body.metadata).toEqual({ '7': 'seven', '2500': 'big' });
    const viaSdk = await t.stripe(key).webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/s`, enabled_events: ['*'], metadata: { '1': 'one', x: 'y' } });
    expect(viaSdk.metadata).toEqual({ '1': 'one', x: 'y' });
  });

  test('percent-encoded brackets and + as a space are decoded', async () => {
    const body = await mustCreate(t, newTestKey(), `url=${encodeURIComponent(`${CLOSED_ORIGIN}/h`)}&enabled_events%5B%5D=*&description=two+words&metadata%5Bk%5D=v`);
    expect(body).toMatchObject({ url: `${CLOSED_ORIGIN}/h`, description: 'two words', metadata: { k: 'v' } });
  });

  test('metadata keys named like Object.prototype members are kept', async () => {
    const body = await mustCreate(t, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&metadata[constructor]=a&metadata[toString]=b`);
    expect(body.metadata).toEqual({ constructor: 'a', toString: 'b' });
  });

  test('__proto__ anywhere in a name is an unknown parameter, and pollutes nothing', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const base = `url=${CLOSED_ORIGIN}/h&enabled_events[]=*`;
    for (const [text, param] of [
      [`${base}&__proto__=x`, '__proto__'],
      [`${base}&__proto__[polluted]=yes`, '__proto__'],
      [`${base}&metadata[__proto__][polluted]=yes`, 'metadata[__proto__]'],
      [`${base}&metadata%5B__proto__%5D=x`, 'metadata[__proto__]'],
    ]) {
      expectError(await createEndpoint(t, key, text), 400, { code: 'parameter_unknown', param, message: `Received unknown parameter: ${param}` });
    }
    expectError(await t.http().get(`${ENDPOINTS}?__proto__[polluted]=yes`).set(bearer(key)), 400, { code: 'parameter_unknown', param: '__proto__' });
    expect(({} as any).polluted).toBeUndefined();
    expect(await endpointCount(t, await accountOf(t, key))).toBe(1);
  });

  test('other prototype names are ordinary (unknown) parameters', async () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      expectError(await t.http().get(`${ENDPOINTS}?${name}=1`).set(bearer(newTestKey())), 400, { code: 'parameter_unknown', param: name });
    }
    const res = await createEndpoint(t, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&constructor[prototype][polluted]=yes`);
    expectError(res, 400, { code: 'parameter_unknown', param: 'constructor' });
    expect(({} as any).polluted).toBeUndefined();
  });

  test('a NUL character in a name or a value is a 400, not a database error', async () => {
    const base = `url=${CLOSED_ORIGIN}/h&enabled_events[]=*`;
    expectError(await createEndpoint(t, newTestKey(), `${base}&description=a%00b`), 400, {
      code: 'parameter_invalid',
      param: 'description',
      message: 'Invalid request body: description must not contain NUL characters.',
    });
    expectError(await createEndpoint(t, newTestKey(), `${base}&metadata[k]=a%00b`), 400, { code: 'parameter_invalid', param: 'metadata[k]' });
    expectError(await createEndpoint(t, newTestKey(), `${base}&metadata[a%00b]=v`), 400, { code: 'parameter_invalid', param: 'metadata[a\\0b]' });
    expectError(await t.http().get(`${ENDPOINTS}?starting_after=we_%00`).set(bearer(newTestKey())), 400, {
      code: 'parameter_invalid',
      param: 'starting_after',
      message: 'Invalid query string: starting_after must not contain NUL characters.',
    });
  });

  test('the query string and the form body are merged', async () => {
    const key = newTestKey();
    const res = await t.http().post(`${ENDPOINTS}?url=${encodeURIComponent(`${CLOSED_ORIGIN}/from-query`)}`).set(bearer(key)).type('form').send('enabled_events[]=*');
    expect(res.status).toBe(200);
    expect(res.body.url).toBe(`${CLOSED_ORIGIN}/from-query`);
    expect(res.body.enabled_events).toEqual(['*']);
  });

  test('the body wins over the query string for the same name', async () => {
    const res = await t
      .http()
      .post(`${ENDPOINTS}?url=${encodeURIComponent(`${CLOSED_ORIGIN}/query`)}`)
      .set(bearer(newTestKey()))
      .type('form')
      .send(`url=${CLOSED_ORIGIN}/body&enabled_events[]=*`);
    expect(res.status).toBe(200);
    expect(res.body.url).toBe(`${CLOSED_ORIGIN}/body`);
  });

  test('GET parameters come from the query string', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    await mustCreate(t, key);
    const res = await t.http().get(`${ENDPOINTS}?limit=1`).set(bearer(key));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.has_more).toBe(true);
  });

  test('an unknown parameter in the query string of a POST is refused like one in the body', async () => {
    const res = await t.http().post(`${ENDPOINTS}?bogus=1`).set(bearer(newTestKey())).type('form').send(`url=${CLOSED_ORIGIN}/h&enabled_events[]=*`);
    expectError(res, 400, { code: 'parameter_unknown', param: 'bogus' });
  });
});

describe('limits', () => {
  test('nesting deeper than the limit is a 400 in the error shape', async () => {
    const key = newTestKey();
    const res = await createEndpoint(small, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&metadata[a][b][c][d]=1`);
    expectError(res, 400, {
      code: 'parameter_invalid',
      message: 'Invalid request body: parameters may be nested at most 3 levels deep.',
    });
  });

  test('nesting at the limit is parsed (and then judged by the schema)', async () => {
    const res = await createEndpoint(small, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&metadata[a][b][c]=1`);
    // Parsed fine; the schema then refuses a nested metadata value.
    expectError(res, 400, { code: 'parameter_unknown', param: 'metadata[a][b]' });
  });

  test('the default depth limit (8) is enforced too', async () => {
    const deep = 'metadata' + '[a]'.repeat(9);
    const res = await createEndpoint(t, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&${deep}=1`);
    expectError(res, 400, { code: 'parameter_invalid', message: /nested at most 8 levels deep/ });
  });

  test('too many parameters in the body is a 400', async () => {
    const pairs = Array.from({ length: 21 }, (_, i) => `metadata[k${i}]=v`).join('&');
    const res = await createEndpoint(small, newTestKey(), pairs);
    expectError(res, 400, { code: 'parameter_invalid', message: 'Invalid request body: at most 20 parameters are allowed.' });
  });

  test('too many parameters in the query string is a 400', async () => {
    const pairs = Array.from({ length: 21 }, (_, i) => `x${i}=1`).join('&');
    const res = await small.http().get(`${ENDPOINTS}?${pairs}`).set(bearer(newTestKey()));
    expectError(res, 400, { code: 'parameter_invalid', message: 'Invalid query string: at most 20 parameters are allowed.' });
  });

  test('exactly the limit of parameters is accepted', async () => {
    const pairs = [`url=${CLOSED_ORIGIN}/h`, 'enabled_events[]=*', ...Array.from({ length: 18 }, (_, i) => `metadata[k${i}]=v`)].join('&');
    const body = await mustCreate(small, newTestKey(), pairs);
    expect(Object.keys(body.metadata)).toHaveLength(18);
  });

  test('a huge array index is a 400, not a huge sparse array', async () => {
    const res = await createEndpoint(t, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[100000]=*`);
    expectError(res, 400, { code: 'parameter_invalid', param: 'enabled_events', message: /^Invalid array for enabled_events/ });
  });

  test('a body over the limit is a 413 in the error shape and creates nothing', async () => {
    const key = newTestKey();
    await mustCreate(small, key);
    const account = await accountOf(small, key);
    const res = await createEndpoint(small, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&description=${'x'.repeat(2000)}`);
    expectError(res, 413, { code: 'request_too_large', message: 'The request body is too large: the limit is 1024 bytes.' });
    expect(res.headers['request-id']).toMatch(/^req_/);
    expect(await endpointCount(small, account)).toBe(1);
  });

  test('a chunked body (no Content-Length) over the limit is a 413 too', async () => {
    const key = newTestKey();
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: small.port,
          method: 'POST',
          path: ENDPOINTS,
          headers: { ...bearer(key), 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(`url=${CLOSED_ORIGIN}/h&enabled_events[]=*&description=`);
      for (let i = 0; i < 4; i++) req.write('y'.repeat(500));
      req.end();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body).error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
  });

  test('a body just under the limit is accepted', async () => {
    const prefix = `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&description=`;
    const body = await mustCreate(small, newTestKey(), prefix + 'z'.repeat(1024 - prefix.length));
    expect(body.description).toHaveLength(1024 - prefix.length);
  });
});

describe('content types', () => {
  test('a JSON body is a 400 and creates nothing', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const res = await t
      .http()
      .post(ENDPOINTS)
      .set(bearer(key))
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ url: `${CLOSED_ORIGIN}/h`, enabled_events: ['*'] }));
    expectError(res, 400, { code: 'invalid_content_type', message: /must be sent as application\/x-www-form-urlencoded, not application\/json/ });
    expect(await endpointCount(t, await accountOf(t, key))).toBe(1);
  });

  test.each(['text/plain', 'multipart/form-data; boundary=x'])('a %s body is a 400', async (type) => {
    const res = await t.http().post(ENDPOINTS).set(bearer(newTestKey())).set('Content-Type', type).send(`url=${CLOSED_ORIGIN}/h&enabled_events[]=*`);
    expectError(res, 400, { code: 'invalid_content_type' });
  });

  test('the form type with a charset is accepted', async () => {
    const res = await t
      .http()
      .post(ENDPOINTS)
      .set(bearer(newTestKey()))
      .set('Content-Type', 'application/x-www-form-urlencoded; charset=utf-8')
      .send(`url=${CLOSED_ORIGIN}/h&enabled_events[]=*`);
    expect(res.status).toBe(200);
  });

  test('another content type without a body is fine (an update with nothing to change)', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const res = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).set('Content-Type', 'application/json');
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(created.id);
  });
});

describe('parseForm', () => {
  const limits = { bodyLimitBytes: 1024, depthLimit: 2, countLimit: 3 };

  test('parses nested objects and arrays', () => {
    // Arrays stay indexed objects until coerce sees an array schema.
    expect(parseForm('a[b]=1&c[]=x&c[]=y&d[0]=z', { ...limits, countLimit: 10 }, 'request body')).toEqual({
      a: { b: '1' },
      c: { 0: 'x', 1: 'y' },
      d: { 0: 'z' },
    });
    expect(parseForm('i[][p]=1&i[][p]=2', { ...limits, countLimit: 10 }, 'request body')).toEqual({ i: { 0: { p: '1' }, 1: { p: '2' } } });
    expect(parseForm('x=1&x=2', { ...limits, countLimit: 10 }, 'request body')).toEqual({ x: ['1', '2'] });
  });

  test('empty input is an empty bag', () => {
    expect(parseForm('', limits, 'query string')).toEqual({});
  });

  test('limits throw ApiErrors that name the source', () => {
    const depth = (() => {
      try {
        parseForm('a[b][c][d]=1', limits, 'query string');
      } catch (err) {
        return err;
      }
    })();
    expect(depth).toBeInstanceOf(ApiError);
    expect((depth as ApiError).status).toBe(400);
    expect((depth as ApiError).message).toBe('Invalid query string: parameters may be nested at most 2 levels deep.');
    expect(() => parseForm('a=1&b=2&c=3&d=4', limits, 'request body')).toThrow('Invalid request body: at most 3 parameters are allowed.');
  });
});

describe('malformed parameter names', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  test.each(['a[b]c=x', 'metadata[a]]]=x', '[a]=x', 'metadata[a=x', 'expand[0]]=x'])('%s is refused, not silently reread', async (query) => {
    const res = await app.http().get(`/v1/webhook_endpoints?${query}`).set(bearer(newTestKey()));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('parameter_invalid');
    expect(res.body.error.message).toMatch(/is malformed/);
  });
});
