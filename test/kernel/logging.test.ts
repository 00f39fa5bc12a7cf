import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { ENDPOINTS, mustCreate } from './util';
import { httpRequests } from '../../src/lib/metrics';
import { until } from '../helpers/queues';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());
afterEach(() => jest.restoreAllMocks());

const accessLine = (requestId: string) => t.logs.find((l) => l.msg === 'request' && l.request_id === requestId);

describe('structured lines', () => {
  test('every line is JSON; each request has one access line with its request id, route and status', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const res = await t.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(key));
    const text = t.logText();
    const lines = text.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();

    const line = accessLine(res.headers['request-id']);
    expect(line).toMatchObject({
      level: 30,
      service: 'sandbank',
      method: 'GET',
      route: '/v1/webhook_endpoints/{webhook_endpoint}',
      status: 200,
    });
    expect(typeof line!.duration_ms).toBe('number');
    expect(typeof line!.time).toBe('number');
    expect(t.logs.filter((l) => l.request_id === res.headers['request-id'] && l.msg === 'request')).toHaveLength(1);
  });

  test('the service endpoints name their route', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/metrics']) {
      const res = await t.http().get(path);
      expect(accessLine(res.headers['request-id'])).toMatchObject({ method: 'GET', route: path, status: res.status });
    }
  });

  test('errors and unknown URLs are logged with their status; the route is null when nothing matched', async () => {
    const res = await t.http().get('/v1/nowhere/at/all?secret_query=1');
    expect(accessLine(res.headers['request-id'])).toMatchObject({ method: 'GET', route: null, status: 404 });
    expect(t.logText()).not.toContain('secret_query');
    const unauth = await t.http().get(ENDPOINTS);
    expect(accessLine(unauth.headers['request-id'])).toMatchObject({ route: '/v1/webhook_endpoints', status: 401 });
  });
});

describe('what is never logged', () => {
  test('the key, the Authorization header and whsec_ secrets, across successes and every kind of error', async () => {
    const key = newTestKey();
    const basicValue = `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

    const created = await mustCreate(t, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&description=logged-test`);
    expect(created.secret).toMatch(/^whsec_/);
    const ids: string[] = [];
    const track = (r: { headers: Record<string, string> }) => ids.push(r.headers['request-id']);

    track(await t.http().get(`${ENDPOINTS}/${created.id}`).set('Authorization', basicValue));
    track(await t.http().get(`${ENDPOINTS}?limit=abc`).set(bearer(key)));
    track(await t.http().get(`${ENDPOINTS}/we_missing`).set(bearer(key)));
    track(await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Account', 'acct_nothere12345'));
    track(await t.http().get(ENDPOINTS).set(bearer(key)).set('Stripe-Version', 'nope'));
    track(await t.http().post(ENDPOINTS).set(bearer(key)).set('Content-Type', 'application/json').send(`{"secret":"${created.secret}"}`));
    track(await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send(`description=${created.secret}&bogus=${key}`));

    // Unexpected failures are logged in detail; still nothing secret.
    jest.spyOn(t.runtime.sql, 'query').mockRejectedValueOnce(new Error('boom while reading'));
    const boom = await t.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(key));
    expect(boom.status).toBe(500);
    track(boom);
    jest.spyOn(t.runtime.prisma, '$transaction').mockRejectedValueOnce(new Error('boom while updating'));
    const boom2 = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('metadata[k]=v');
    expect(boom2.status).toBe(500);
    track(boom2);

    // A brand-new key whose lookup fails: the error path of authentication itself.
    const freshKey = newTestKey();
    jest.spyOn(t.runtime.prisma.apiKey, 'findUnique').mockRejectedValueOnce(new Error('boom while authenticating'));
    const authBoom = await t.http().get(ENDPOINTS).set(bearer(freshKey));
    expect(authBoom.status).toBe(500);
    track(authBoom);

    for (const id of ids) expect(accessLine(id)).toBeDefined();
    expect(t.logs.filter((l) => l.msg === 'unexpected error').map((l) => (l.err as any).message)).toEqual(
      expect.arrayContaining(['boom while reading', 'boom while updating', 'boom while authenticating']),
    );

    const text = t.logText();
    expect(text).not.toContain(key);
    expect(text).not.toContain(freshKey);
    expect(text).not.toContain(key.slice('sk_test_'.length));
    expect(text).not.toContain(basicValue.slice('Basic '.length));
    expect(text).not.toContain(created.secret);
    expect(text).not.toContain('whsec_');
    expect(text.toLowerCase()).not.toContain('bearer sk_');
    expect(text.toLowerCase()).not.toContain('"authorization"');
  });

  test('the SDK path logs no key or secret either', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const created = await stripe.webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/sdk`, enabled_events: ['*'] });
    await stripe.webhookEndpoints.retrieve('we_nope').catch(() => undefined);
    const text = t.logText();
    expect(text).not.toContain(key);
    expect(text).not.toContain(created.secret!);
  });
});

describe('clients that go away', () => {
  /** Sends a request head promising 500 bytes of body, some of it, then hangs up. */
  async function hangUpMidBody(head: string, partialBody: string): Promise<void> {
    const { connect } = await import('node:net');
    await new Promise<void>((resolve, reject) => {
      const socket = connect(t.port, '127.0.0.1', () => {
        socket.write(`${head}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 500\r\n\r\n${partialBody}`);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
      socket.on('error', reject);
    });
    // The operation ends once its body read failed; nobody is there to read the answer.
    await t.kernel.inFlight.idle();
  }

  const requestsCounted = async (route: string, status: string): Promise<number> =>
    (await httpRequests.get()).values.filter((v) => v.labels.route === route && String(v.labels.status) === status).reduce((n, v) => n + v.value, 0);

  test('a client that hangs up mid-body is logged as a client abort (499, no stack), not as an unexpected error or a 5xx', async () => {
    const before = t.logs.length;
    const counted = { aborted: await requestsCounted(ENDPOINTS, '499'), failed: await requestsCounted(ENDPOINTS, '500') };
    await hangUpMidBody(`POST ${ENDPOINTS} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${newTestKey()}\r\n`, 'url=http%3A%2F%2F127.0.0.1');
    await until(() => t.logs.length > before, 5000, 'a log line');
    const lines = t.logs.slice(before);
    expect(lines.filter((l) => l.msg === 'unexpected error' || (l.level as number) >= 40)).toEqual([]);
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, msg: 'request', method: 'POST', route: ENDPOINTS, status: 499, client_closed: true, request_id: expect.stringMatching(/^req_/) }),
    ]);
    expect(lines[0]).not.toHaveProperty('err');
    expect(await requestsCounted(ENDPOINTS, '499')).toBe(counted.aborted + 1);
    expect(await requestsCounted(ENDPOINTS, '500')).toBe(counted.failed);
  });

  test('the same on a hosted page', async () => {
    const before = t.logs.length;
    await hangUpMidBody('POST /hosted/account_links/notatoken HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'field=1');
    await until(() => t.logs.length > before, 5000, 'a log line');
    expect(t.logs.slice(before)).toEqual([expect.objectContaining({ level: 30, msg: 'request', method: 'POST', status: 499, client_closed: true })]);
  });

  test('a client that waits gets its answer and an ordinary access line', async () => {
    const res = await t.http().get(ENDPOINTS).set(bearer(newTestKey()));
    expect(accessLine(res.headers['request-id'])).not.toHaveProperty('client_closed');
  });
});
