import { requestLogUrlPattern } from '../helpers/requests';
import { request as httpRequest } from 'node:http';
import Stripe from 'stripe';
import { RateLimiter } from '../../src/kernel/rateLimit';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { accountOfKey, createConnectedAccount } from '../helpers/events';
import { createEvent, createWebhookEndpoint } from '../helpers/fixtures';
import { expectMatchesResponseSchema } from '../helpers/responseSchemas';
import { ENDPOINTS, expectError } from './util';

// Rate limits per platform account: API_RATE_LIMIT for every operation, and a route's own limit
// (the sandbox resend's RESEND_RATE_LIMIT) on top. The app runs on a clock the test moves, so
// buckets refill when the test says, not when the machine gets round to it.

const MESSAGE = 'Request rate limit exceeded. You can learn more about rate limits here https://stripe.com/docs/rate-limits.';
const API_LIMIT = 4;
const RESEND_LIMIT = 1;

let nowMs = Date.now();
const clock = { nowMs: () => nowMs };
/** Lets every bucket refill (each holds one second's worth). */
const nextSecond = () => (nowMs += 1000);

describe('RateLimiter', () => {
  test('allows a burst of one second’s worth per key, then refuses until the bucket refills', () => {
    let now = 0;
    const limiter = new RateLimiter(3, { nowMs: () => now });
    expect([1, 2, 3, 4].map(() => limiter.take('a'))).toEqual([true, true, true, false]);
    expect(limiter.take('b')).toBe(true); // keys don't share a bucket
    now += 340; // a third of a second: one request's worth
    expect([limiter.take('a'), limiter.take('a')]).toEqual([true, false]);
    now += 10_000; // refills up to the burst, not beyond
    expect([1, 2, 3, 4].map(() => limiter.take('a'))).toEqual([true, true, true, false]);
  });

  test('a refused request takes nothing, and a clock that goes back refills nothing', () => {
    let now = 1000;
    const limiter = new RateLimiter(1, { nowMs: () => now });
    expect(limiter.take('a')).toBe(true);
    for (let i = 0; i < 5; i++) expect(limiter.take('a')).toBe(false);
    now -= 500;
    expect(limiter.take('a')).toBe(false);
    now += 1500;
    expect(limiter.take('a')).toBe(true);
  });

  test('idle buckets are dropped, and no more than the bound are kept', () => {
    let now = 0;
    const limiter = new RateLimiter(5, { nowMs: () => now }, 100);
    for (let i = 0; i < 50; i++) limiter.take(`idle${i}`);
    expect(limiter.size).toBe(50);
    now += 1000; // every one of them has refilled: they are as good as new
    limiter.take('busy');
    expect(limiter.size).toBe(1);
    for (let i = 0; i < 500; i++) limiter.take(`burst${i}`);
    expect(limiter.size).toBe(100);
    // The most recently used bucket is the one kept: 'burst499' is still empty-ish, not forgotten.
    for (let i = 0; i < 4; i++) expect(limiter.take('burst499')).toBe(true);
    expect(limiter.take('burst499')).toBe(false);
  });
});

describe('over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ API_RATE_LIMIT: String(API_LIMIT), RESEND_RATE_LIMIT: String(RESEND_LIMIT) }, { clock });
  });
  afterAll(() => t.close());

  const list = (key: string, headers: Record<string, string> = {}) => t.http().get(ENDPOINTS).set(bearer(key)).set(headers);

  test('requests under the limit pass; the next is a 429 in the public shape, and the bucket refills', async () => {
    nextSecond();
    const key = newTestKey();
    for (let i = 0; i < API_LIMIT; i++) expect((await list(key)).status).toBe(200);
    const res = await list(key);
    const error = expectError(res, 429, { type: 'invalid_request_error', code: 'rate_limit', message: MESSAGE });
    expect(error.doc_url).toBe('https://stripe.com/docs/error-codes/rate-limit');
    expect(error.request_log_url).toContain(res.headers['request-id']);
    expect(Object.keys(error).sort()).toEqual(['code', 'doc_url', 'message', 'request_log_url', 'type']);
    expectMatchesResponseSchema('GetWebhookEndpoints', 429, res.body);
    expect(res.headers['request-id']).toMatch(/^req_/);
    expect(res.headers['stripe-rate-limited-reason']).toBe('global-rate');
    // As the public API: no Stripe-Should-Retry, so the SDKs leave backing off to the integration.
    expect(res.headers['stripe-should-retry']).toBeUndefined();

    // Another account has a bucket of its own.
    expect((await list(newTestKey())).status).toBe(200);
    nextSecond();
    expect((await list(key)).status).toBe(200);
  });

  test('the same 429 on a raw socket: status line, headers and body', async () => {
    nextSecond();
    const key = newTestKey();
    for (let i = 0; i < API_LIMIT; i++) await list(key);
    const raw = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: t.port, path: ENDPOINTS, headers: bearer(key) }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(raw.status).toBe(429);
    expect(raw.headers['content-type']).toMatch(/^application\/json/);
    expect(raw.headers['stripe-rate-limited-reason']).toBe('global-rate');
    expect(JSON.parse(raw.body)).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'rate_limit',
        message: MESSAGE,
        doc_url: 'https://stripe.com/docs/error-codes/rate-limit',
        request_log_url: expect.stringMatching(requestLogUrlPattern(t, String(raw.headers['request-id']))),
      },
    });
  });

  test('the SDK raises StripeRateLimitError, once: it does not retry a rate limit on its own', async () => {
    nextSecond();
    const key = newTestKey();
    const stripe = t.stripe(key, { maxNetworkRetries: 2 });
    // 'request' fires for every attempt, retries included; 'response' only for the answer kept.
    let attempts = 0;
    stripe.on('request', () => attempts++);
    for (let i = 0; i < API_LIMIT; i++) await stripe.webhookEndpoints.list();
    const failure = await stripe.webhookEndpoints.create({ url: 'https://example.com/h', enabled_events: ['*'] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    const err = failure as Stripe.errors.StripeRateLimitError;
    expect({ type: err.type, rawType: err.rawType, code: err.code, statusCode: err.statusCode, message: err.message }).toEqual({
      type: 'StripeRateLimitError',
      rawType: 'invalid_request_error',
      code: 'rate_limit',
      statusCode: 429,
      message: MESSAGE,
    });
    expect(err.headers?.['stripe-rate-limited-reason']).toBe('global-rate');
    expect(err.requestId).toMatch(/^req_/);
    expect(attempts).toBe(API_LIMIT + 1);

    nextSecond();
    expect((await stripe.webhookEndpoints.list()).object).toBe('list');
  });

  test('a rate-limited POST stores nothing for its idempotency key: the retry runs the request', async () => {
    nextSecond();
    const key = newTestKey();
    const account = (await t.http().get('/v1/account').set(bearer(key))).body.id as string;
    for (let i = 1; i < API_LIMIT; i++) await list(key);
    const create = () =>
      t.http().post(ENDPOINTS).set(bearer(key)).set('Idempotency-Key', 'limited-1').type('form').send('url=https://example.com/h&enabled_events[]=*');
    const limited = await create();
    expectError(limited, 429, { code: 'rate_limit' });
    expect(limited.headers['idempotency-key']).toBe('limited-1');
    expect(await t.runtime.prisma.idempotencyRecord.count({ where: { accountId: account } })).toBe(0);
    expect(await t.runtime.prisma.webhookEndpoint.count({ where: { accountId: account } })).toBe(0);

    nextSecond();
    const retried = await create();
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body.object).toBe('webhook_endpoint');
    const replayed = await create();
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.id).toBe(retried.body.id);
  });

  test("a platform's connected accounts share its budget, and a limited request looks nothing up", async () => {
    nextSecond();
    const key = newTestKey();
    expect((await list(key)).status).toBe(200);
    const connected = await createConnectedAccount(t.runtime, await accountOfKey(t.runtime, key));
    for (let i = 2; i < API_LIMIT; i++) expect((await list(key)).status).toBe(200);
    expect((await list(key, { 'Stripe-Account': connected })).status).toBe(200);
    expectError(await list(key, { 'Stripe-Account': connected }), 429, { code: 'rate_limit' });
    // Refused before the connected account is looked up: not the 403 an unknown account gets.
    expectError(await list(key, { 'Stripe-Account': 'acct_doesnotexist0000' }), 429, { code: 'rate_limit' });
  });

  test('requests refused before the key is known (401) count against nothing', async () => {
    nextSecond();
    for (let i = 0; i < API_LIMIT * 2; i++) expect((await t.http().get(ENDPOINTS)).status).toBe(401);
    expect((await t.http().get(ENDPOINTS).set(bearer('sk_live_123'))).status).toBe(401);
  });

  test('the resend has its own, stricter limit on top (endpoint-rate), leaving other operations alone', async () => {
    nextSecond();
    const key = newTestKey();
    const eventId = await createEvent(t, key);
    const endpoint = await createWebhookEndpoint(t, key);
    nextSecond();
    const resend = (k: string, id: string, endpointId: string) =>
      t.http().post(`/sandbox/v1/events/${id}/resend`).set(bearer(k)).type('form').send(`webhook_endpoint=${endpointId}`);

    const first = await resend(key, eventId, endpoint.id);
    expect(first.status).toBe(200);
    expect(first.body.object).toBe('webhook_delivery');
    const second = await resend(key, eventId, endpoint.id);
    expectError(second, 429, { type: 'invalid_request_error', code: 'rate_limit', message: MESSAGE });
    expect(second.headers['stripe-rate-limited-reason']).toBe('endpoint-rate');
    expectMatchesResponseSchema('PostSandboxEventsIdResend', 429, second.body);
    expect(await t.runtime.prisma.webhookDelivery.count({ where: { eventId } })).toBe(1);
    // Other operations still have the API-wide budget.
    expect((await list(key)).status).toBe(200);

    // Another account's resend is its own.
    const otherKey = newTestKey();
    const otherEvent = await createEvent(t, otherKey);
    const otherEndpoint = await createWebhookEndpoint(t, otherKey);
    nextSecond();
    expect((await resend(otherKey, otherEvent, otherEndpoint.id)).status).toBe(200);

    expect((await resend(key, eventId, endpoint.id)).status).toBe(200);
    expect(await t.runtime.prisma.webhookDelivery.count({ where: { eventId } })).toBe(2);
  });
});

describe('off by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, { clock });
  });
  afterAll(() => t.close());

  test('without API_RATE_LIMIT or RESEND_RATE_LIMIT nothing is limited', async () => {
    expect(t.kernel.rateLimiter).toBeUndefined();
    const key = newTestKey();
    const eventId = await createEvent(t, key);
    const endpoint = await createWebhookEndpoint(t, key);
    for (let i = 0; i < 30; i++) expect((await t.http().get(ENDPOINTS).set(bearer(key))).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await t.http().post(`/sandbox/v1/events/${eventId}/resend`).set(bearer(key)).type('form').send(`webhook_endpoint=${endpoint.id}`);
      expect(res.status).toBe(200);
    }
  });
});
