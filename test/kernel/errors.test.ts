import { requestLogUrlPattern } from '../helpers/requests';
import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { ApiError, echo, ECHO_LIMIT, internalError, invalidRequest, MESSAGE_LIMIT, parametersExclusive, resourceMissing, unrecognizedUrl } from '../../src/kernel/errors';
import { ENDPOINTS, expectError, mustCreate } from './util';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());
afterEach(() => jest.restoreAllMocks());

const UNRECOGNIZED = (method: string, path: string) =>
  `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`;

describe('unknown paths and methods', () => {
  test('an unknown path is a 404 in the error shape', async () => {
    const res = await t.http().get('/v1/foo').set(bearer(newTestKey()));
    const error = expectError(res, 404, { message: UNRECOGNIZED('GET', '/v1/foo') });
    expect(error.code).toBeUndefined();
    expect(error.doc_url).toBeUndefined();
    expect(res.headers['request-id']).toMatch(/^req_/);
  });

  test('the query string is not part of the message', async () => {
    const res = await t.http().get('/v1/foo?limit=3').set(bearer(newTestKey()));
    expectError(res, 404, { message: UNRECOGNIZED('GET', '/v1/foo') });
  });

  test('an unknown path answers 404 even without a key', async () => {
    expectError(await t.http().post('/v1/nothing_here'), 404, { message: UNRECOGNIZED('POST', '/v1/nothing_here') });
  });

  test.each([
    ['put', ENDPOINTS],
    ['patch', `${ENDPOINTS}/we_123`],
    ['delete', ENDPOINTS],
  ] as const)('an unknown method (%s %s) is a 404', async (method, path) => {
    const res = await t.http()[method](path).set(bearer(newTestKey()));
    expectError(res, 404, { message: UNRECOGNIZED(method.toUpperCase(), path) });
  });

  test('through the SDK an unknown path is an invalid request error', async () => {
    const stripe = t.stripe(newTestKey());
    const err = await stripe.rawRequest('GET', '/v1/foo').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(404);
  });

  test('a path that cannot be decoded is a 400 in the error shape', async () => {
    const res = await t.http().get(`${ENDPOINTS}/%E0%A4%A`).set(bearer(newTestKey()));
    expectError(res, 400, { message: 'The request could not be read.' });
  });
});

describe('unexpected failures', () => {
  test('become a 500 api_error without internals, and the log has the cause with the request id', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    jest.spyOn(t.runtime.sql, 'query').mockRejectedValue(new Error('boom secret detail'));
    const res = await t.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(key));
    const error = expectError(res, 500, {
      type: 'api_error',
      message: 'An unknown error occurred while processing your request. Please try again later.',
    });
    expect(error.code).toBeUndefined();
    expect(res.text).not.toContain('boom');
    expect(res.text).not.toMatch(/at .*\.ts:\d+/);
    expect(res.headers['stripe-should-retry']).toBe('true');

    const requestId = res.headers['request-id'];
    expect(requestId).toMatch(/^req_[A-Za-z0-9]{14,}$/);
    const logged = t.logs.find((l) => l.msg === 'unexpected error' && l.request_id === requestId);
    expect(logged).toBeDefined();
    expect(logged!.level).toBe(50);
    expect((logged!.err as any).message).toBe('boom secret detail');
    expect((logged!.err as any).stack).toContain('boom secret detail');
  });

  test('a thrown non-Error value is handled the same way', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    jest.spyOn(t.runtime.sql, 'query').mockRejectedValue({ status: 'weird', detail: 'internal' });
    const res = await t.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(key));
    expectError(res, 500, { type: 'api_error' });
    expect(res.text).not.toContain('internal');
  });

  test('an object with an HTTP-like status from deep inside is still a 500, not its status', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    jest.spyOn(t.runtime.sql, 'query').mockRejectedValue(Object.assign(new Error('upstream said 404'), { status: 404 }));
    const res = await t.http().get(`${ENDPOINTS}/${created.id}`).set(bearer(key));
    expectError(res, 500, { type: 'api_error' });
    expect(res.text).not.toContain('upstream');
  });

  test('through the SDK a 500 is an API error', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    jest.spyOn(t.runtime.sql, 'query').mockRejectedValue(new Error('boom'));
    const err = await t.stripe(key).webhookEndpoints.retrieve(created.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(500);
  });
});

describe('coded errors', () => {
  test('a missing object: 404 resource_missing with param id and doc_url', async () => {
    const res = await t.http().get(`${ENDPOINTS}/we_123`).set(bearer(newTestKey()));
    const error = expectError(res, 404, { code: 'resource_missing', param: 'id', message: "No such webhook endpoint: 'we_123'" });
    expect(error.doc_url).toBe('https://stripe.com/docs/error-codes/resource-missing');
    expect(error.request_log_url).toMatch(requestLogUrlPattern(t, res.headers['request-id']));
  });

  test('toBody: doc_url only with a code, underscores become hyphens', () => {
    expect(invalidRequest('x', 'parameter_invalid_integer', 'limit').toBody().error).toEqual({
      type: 'invalid_request_error',
      message: 'x',
      code: 'parameter_invalid_integer',
      doc_url: 'https://stripe.com/docs/error-codes/parameter-invalid-integer',
      param: 'limit',
    });
    expect(invalidRequest('plain').toBody('http://127.0.0.1:8420/test/logs/req_abc?t=1795000000').error).toEqual({
      type: 'invalid_request_error',
      message: 'plain',
      request_log_url: 'http://127.0.0.1:8420/test/logs/req_abc?t=1795000000',
    });
    // Codes the public API doesn't document (its own, or the sandbox's) get no doc_url.
    expect(invalidRequest('x', 'parameter_invalid', 'limit').toBody().error.doc_url).toBeUndefined();
    expect(invalidRequest('x', 'verification_session_redacted').toBody().error.doc_url).toBeUndefined();
    expect(invalidRequest('x', 'url_invalid', 'url').toBody().error.doc_url).toBe('https://stripe.com/docs/error-codes/url-invalid');
  });

  test('extra members are added to the body', () => {
    const err = new ApiError({ status: 402, type: 'card_error', code: 'card_declined', message: 'declined', extra: { decline_code: 'insufficient_funds' } });
    expect(err.toBody().error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' });
  });

  test('the type follows the status unless given', () => {
    expect(new ApiError({ status: 400, message: 'x' }).type).toBe('invalid_request_error');
    expect(new ApiError({ status: 503, message: 'x' }).type).toBe('api_error');
    expect(internalError().status).toBe(500);
    expect(internalError().type).toBe('api_error');
  });

  test('helpers build the compat.md messages', () => {
    expect(resourceMissing('webhook endpoint', 'we_1').toBody().error).toMatchObject({ code: 'resource_missing', param: 'id', message: "No such webhook endpoint: 'we_1'" });
    expect(resourceMissing('webhook endpoint', 'we_1', 'starting_after', 400).status).toBe(400);
    expect(parametersExclusive('a', 'b').message).toContain('a, b');
    expect(unrecognizedUrl('GET', '/v1/x').message).toBe(UNRECOGNIZED('GET', '/v1/x'));
  });
});

describe('what a client sent is repeated at most ECHO_LIMIT characters', () => {
  const long = 'x'.repeat(255 * 1024);
  const cut = `${'x'.repeat(ECHO_LIMIT)}…`;

  test('a 255 KB unknown parameter name gives a short error body', async () => {
    const res = await t.http().post(ENDPOINTS).set(bearer(newTestKey())).type('form').send(`${long}=1`);
    expectError(res, 400, { code: 'parameter_unknown', param: cut, message: `Received unknown parameter: ${cut}` });
    expect(res.text.length).toBeLessThan(1_000);
  });

  test('in a query string, a metadata key, a missing id and an unknown URL too', async () => {
    const key = newTestKey();
    const responses = [
      await t.http().get(`${ENDPOINTS}?${'q'.repeat(12_000)}=1`).set(bearer(key)),
      await t.http().post('/v1/customers').set(bearer(key)).type('form').send(`metadata[${'k'.repeat(100_000)}]=${'v'.repeat(100_000)}`),
      await t.http().post('/v1/customers').set(bearer(key)).type('form').send(`metadata[a]=${long}`),
      await t.http().get(`/v1/customers/cus_${'y'.repeat(12_000)}`).set(bearer(key)),
      await t.http().get(`/v1/${'z'.repeat(12_000)}`).set(bearer(key)),
      await t.http().get(`/v1/customers?expand[]=${'e'.repeat(12_000)}`).set(bearer(key)),
      await t.http().get('/v1/customers').set(bearer(`sk_test_${'k'.repeat(12_000)}-abcd`)),
    ];
    expect(responses.map((r) => r.status)).toEqual([400, 400, 400, 404, 404, 400, 401]);
    for (const res of responses) {
      expect(res.text.length).toBeLessThan(1_500);
      expect(String(res.body.error.param ?? '').length).toBeLessThanOrEqual(ECHO_LIMIT + 1);
    }
    expect(responses[3].body.error.message).toBe(`No such customer: '${`cus_${'y'.repeat(12_000)}`.slice(0, ECHO_LIMIT)}…'`);
    // A malformed key shows masked, its end kept.
    expect(responses[6].body.error.message).toMatch(/^Invalid API Key provided: sk_test_\*+abcd$/);
  });

  test('echo cuts long text, never inside a character', () => {
    expect(echo('short')).toBe('short');
    expect(echo('x'.repeat(ECHO_LIMIT))).toBe('x'.repeat(ECHO_LIMIT));
    expect(echo('x'.repeat(ECHO_LIMIT + 1))).toBe(cut);
    const emoji = `${'x'.repeat(ECHO_LIMIT - 1)}😀😀`;
    expect(echo(emoji)).toBe(`${'x'.repeat(ECHO_LIMIT - 1)}…`);
  });

  test('any error, whoever made it, keeps its message and param within bounds', () => {
    const error = new ApiError({ status: 400, message: `Invalid thing: ${long}`, param: long });
    expect(error.message.length).toBe(MESSAGE_LIMIT + 1);
    expect(error.param).toBe(cut);
    expect(resourceMissing('customer', long).message.length).toBeLessThan(ECHO_LIMIT + 30);
    expect(unrecognizedUrl('GET', long).message.length).toBeLessThan(ECHO_LIMIT + 150);
    expect(parametersExclusive(long, long).message.length).toBeLessThan(2 * ECHO_LIMIT + 60);
  });
});
