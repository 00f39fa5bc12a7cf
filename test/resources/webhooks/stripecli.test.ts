import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { form } from '../../helpers/fixtures';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectNowhereAtRest } from '../../helpers/atRest';
import WebSocket from 'ws';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import { verifySignature } from '../../../src/events/signature';

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

  test('each session has its own id; an account keeps its secret, another account has its own', async () => {
    const key = newTestKey();
    const a = await post(key, LISTEN);
    const b = await post(key, LISTEN);
    expect(a.body.websocket_id).not.toBe(b.body.websocket_id);
    expect(b.body.secret).toBe(a.body.secret);
    expect((await post(newTestKey(), LISTEN)).body.secret).not.toBe(a.body.secret);
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

describe('the websocket `stripe listen` opens', () => {
  const socketUrl = () => `ws://127.0.0.1:${t.port}/v1/stripecli/socket?websocket_feature=webhooks`;
  type Frame = Record<string, any>;

  /** Opens the session's socket and collects its frames. */
  async function listen(id: string): Promise<{ ws: WebSocket; frames: Frame[]; next(n: number): Promise<Frame[]> }> {
    const ws = new WebSocket(socketUrl(), { headers: { 'Websocket-Id': id } });
    const frames: Frame[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
    await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
    const next = async (n: number) => {
      const deadline = Date.now() + 5000;
      while (frames.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      return frames.splice(0, n);
    };
    return { ws, frames, next };
  }
  const closed = (ws: WebSocket) => new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const customer = async (key: string) => (await t.http().post('/v1/customers').set(bearer(key)).type('form').send('email=a%40example.com')).body.id as string;

  test('each new event comes twice (its version, the latest), signed with the session secret; acks, responses and replay', async () => {
    const key = newTestKey();
    await customer(key); // before the session: not sent
    const session = (await post(key, LISTEN)).body;
    const cus = await customer(key);
    const a = await listen(session.websocket_id);
    const frames = await a.next(2);
    expect(frames.map((f) => [f.type, f.endpoint.api_version])).toEqual([
      ['webhook_event', null],
      ['webhook_event', LATEST_API_VERSION],
    ]);
    const now = Math.floor(Date.now() / 1000);
    for (const f of frames) {
      expect(verifySignature(f.event_payload, f.http_headers['Stripe-Signature'], session.secret, now)).toBe(true);
      expect(verifySignature(f.event_payload, f.http_headers['Stripe-Signature'], 'whsec_other', now)).toBe(false);
      const event = JSON.parse(f.event_payload);
      expect(event).toEqual(expect.objectContaining({ object: 'event', type: 'customer.created' }));
      expect(event.data.object.id).toBe(cus);
    }
    expect(JSON.parse(frames[1].event_payload).api_version).toBe(LATEST_API_VERSION);
    const eventId = JSON.parse(frames[0].event_payload).id;

    // Not acknowledged yet: a reconnect replays it.
    a.ws.close();
    const b = await listen(session.websocket_id);
    expect((await b.next(2)).map((f) => JSON.parse(f.event_payload).id)).toEqual([eventId, eventId]);
    b.ws.send(JSON.stringify({ type: 'event_ack', event_id: eventId, webhook_id: frames[0].webhook_id, webhook_conversation_id: frames[0].webhook_conversation_id }));
    b.ws.send(JSON.stringify({ type: 'webhook_response', webhook_id: frames[0].webhook_id, forward_url: 'http://127.0.0.1:4242/webhook', status: 200, body: 'ok', http_headers: {} }));
    let responses: { status: number; body: string; eventId: string; forwardUrl: string | null }[] = [];
    for (let i = 0; i < 100 && responses.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      responses = await t.runtime.prisma.stripecliResponse.findMany({ where: { sessionId: session.websocket_id } });
    }
    expect(responses).toEqual([expect.objectContaining({ eventId, status: 200, body: 'ok', forwardUrl: 'http://127.0.0.1:4242/webhook' })]);
    const row = await t.runtime.prisma.stripecliSession.findUniqueOrThrow({ where: { id: session.websocket_id } });
    const seq = (await t.runtime.prisma.event.findUniqueOrThrow({ where: { id: eventId } })).seq;
    expect(row.eventCursor).toBe(seq);
    b.ws.close();

    // Acknowledged: the next socket gets only what came after.
    const c = await listen(session.websocket_id);
    await customer(key);
    const later = await c.next(2);
    expect(later).toHaveLength(2);
    expect(JSON.parse(later[0].event_payload).id).not.toBe(eventId);
    c.ws.close();
    expect(t.logText()).not.toContain(session.secret);
  });

  test('another account\'s events never reach a session', async () => {
    const session = (await post(newTestKey(), LISTEN)).body;
    const a = await listen(session.websocket_id);
    await customer(newTestKey());
    await new Promise((r) => setTimeout(r, 600));
    expect(a.frames).toEqual([]);
    a.ws.close();
  });

  test.each([
    ['no Websocket-Id', {}],
    ['an unknown session', { 'Websocket-Id': 'cli_000000000000000000000000' }],
    ['a malformed id', { 'Websocket-Id': 'nope' }],
  ])('%s: refused with 401', async (_name, headers) => {
    const ws = new WebSocket(socketUrl(), { headers });
    ws.on('error', () => undefined); // the refusal's own, after the response
    const status = await new Promise<number>((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(401);
    ws.terminate();
  });

  test('malformed and unknown frames close the socket, and the server keeps serving', async () => {
    const session = (await post(newTestKey(), LISTEN)).body;
    const a = await listen(session.websocket_id);
    const code = closed(a.ws);
    a.ws.send('{not json');
    expect(await code).toBe(1007);
    const b = await listen(session.websocket_id);
    const code2 = closed(b.ws);
    b.ws.send(JSON.stringify({ type: 'telepathy' }));
    expect(await code2).toBe(1008);
    expect((await post(newTestKey(), LISTEN)).status).toBe(200);
  });
});
