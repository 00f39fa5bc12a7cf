import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { form } from '../../helpers/fixtures';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';

// The Stripe CLI's session endpoint over HTTP, with the form `stripe listen` / `stripe logs tail` send
// (the CLI's pkg/stripeauth). The CLI itself runs in test/cli/stripecli.test.ts.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ PUBLIC_URL: 'http://127.0.0.1:12999' });
});
afterAll(() => t.close());

type Res = { status: number; body: any; headers: Record<string, string>; text: string };
const BASE = '/v1/stripecli/sessions';
const post = (key: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t
    .http()
    .post(BASE)
    .set(bearer(key))
    .set(headers)
    .type('form')
    .send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>;

// What `stripe listen --forward-to …` sends: `websocket_features[]=webhooks` without indices.
const LISTEN = 'device_name=laptop&websocket_features%5B%5D=webhooks&forward_to_url=http%3A%2F%2F127.0.0.1%3A4242%2Fwebhook';

describe('create', () => {
  test('answers what the CLI reads, with a sealed secret that is never at rest in plain text', async () => {
    const key = newTestKey();
    const res = await post(key, LISTEN, { 'Idempotency-Key': `cli-${newTestKey()}` });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostStripecliSessions', 200, res.body);
    expect(res.body).toEqual({
      object: 'stripecli_session',
      display_connect_filter_warning: false,
      reconnect_delay: 5,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{64}$/),
      websocket_authorized_feature: 'webhooks',
      websocket_id: expect.stringMatching(/^cli_[A-Za-z0-9]{24}$/),
      websocket_url: 'ws://127.0.0.1:12999/v1/stripecli/socket',
      default_version: expect.any(String),
      latest_version: LATEST_API_VERSION,
    });
    const row = await t.runtime.prisma.stripecliSession.findUniqueOrThrow({ where: { id: res.body.websocket_id } });
    expect(row).toEqual(expect.objectContaining({ deviceName: 'laptop', feature: 'webhooks', filters: null }));
    expect(row.secret).not.toContain('whsec_');
    await expectNowhereAtRest(t, res.body.secret, [res.body.websocket_id]);
    expect(t.logText()).not.toContain(res.body.secret);
  });

  test('the default version is the account\'s pinned one', async () => {
    const key = newTestKey();
    await t.http().get('/v1/customers').set(bearer(key)).set('Stripe-Version', '2024-06-20');
    const res = await post(key, LISTEN);
    expect(res.body.default_version).toBe('2024-06-20');
  });

  test('`stripe logs tail` gets a request_logs session keeping its filters', async () => {
    const key = newTestKey();
    const filters = JSON.stringify({ filter_http_method: ['POST'], filter_status_code: ['200'] });
    const res = await post(key, { device_name: 'laptop', websocket_features: ['request_logs'], filters });
    expect(res.status).toBe(200);
    expect(res.body.websocket_authorized_feature).toBe('request_logs');
    const row = await t.runtime.prisma.stripecliSession.findUniqueOrThrow({ where: { id: res.body.websocket_id } });
    expect(row.filters).toEqual(JSON.parse(filters));
  });

  test('each session has its own id and secret', async () => {
    const key = newTestKey();
    const [a, b] = await Promise.all([post(key, LISTEN), post(key, LISTEN)]);
    expect(a.body.websocket_id).not.toBe(b.body.websocket_id);
    expect(a.body.secret).not.toBe(b.body.secret);
  });
});

describe('bad input', () => {
  test.each([
    ['no device name', 'websocket_features%5B%5D=webhooks', 'device_name'],
    ['no features', 'device_name=x', 'websocket_features'],
    ['an unknown feature', 'device_name=x&websocket_features%5B%5D=telepathy', 'websocket_features'],
    ['filters that are not JSON', 'device_name=x&websocket_features%5B%5D=request_logs&filters=%7Bnope', 'filters'],
    ['filters that are not an object', 'device_name=x&websocket_features%5B%5D=request_logs&filters=%5B1%5D', 'filters'],
  ])('%s: 400 naming the parameter', async (_name, body, param) => {
    const res = await post(newTestKey(), body);
    expect(res.status).toBe(400);
    expectErrorBody(res.body);
    expect(res.body.error).toEqual(expect.objectContaining({ type: 'invalid_request_error', param }));
  });

  test('no key: 401', async () => {
    const res = (await t.http().post(BASE).type('form').send(LISTEN)) as unknown as Res;
    expect(res.status).toBe(401);
    expectErrorBody(res.body);
  });
});
