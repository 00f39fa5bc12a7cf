import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { ENDPOINTS, mustCreate } from './util';

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

    const created = await mustCreate(t, key, 'url=https://example.com/h&enabled_events[]=*&description=logged-test');
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
    jest.spyOn(t.runtime.prisma.webhookEndpoint, 'findUnique').mockRejectedValueOnce(new Error('boom while reading'));
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
    const created = await stripe.webhookEndpoints.create({ url: 'https://example.com/sdk', enabled_events: ['*'] });
    await stripe.webhookEndpoints.retrieve('we_nope').catch(() => undefined);
    const text = t.logText();
    expect(text).not.toContain(key);
    expect(text).not.toContain(created.secret!);
  });
});
