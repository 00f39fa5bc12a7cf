import { createHash, createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bearer, freePort, newTestKey } from '../../helpers/app';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { accountOfKey, createConnectedAccount } from '../../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { createPaymentMethod } from '../../helpers/fixtures';
import { startDestination, type Destination } from '../../helpers/forwarding';
import { until } from '../../helpers/queues';
import { expectError, requestsOf } from '../../helpers/requests';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { JobQueues } from '../../../src/lib/queue';
import { Encryption } from '../../../src/lib/encryption';
import { loadConfig } from '../../../src/config';
import { openRuntime } from '../../../src/runtime';
import { forwardingDestinations } from '../../../src/resources/forwarding/requests/destinations';
import { forwardingQueue } from '../../../src/resources/forwarding/requests/jobs';
import { ABANDONED_AFTER_SECONDS, failAbandoned, pruneForwardingRequests, reconcileForwards, runForward } from '../../../src/resources/forwarding/requests/pipeline';

// Forwarding requests end to end, through the real worker, against a destination on 127.0.0.1:
// insertion at the configured places in the blanks' JSON types, the credential check and its
// redaction, the request signature, masking both ways, a 4xx destination still a 200, the
// timeout, a redirect not followed, a loopback address refused without allowance, a refused
// connection, the CVC used up, idempotent replays without a second call, a worker that never takes
// the job (and the late one that then finds nothing to do), a Redis that lost the job, a worker
// that died mid-call, pruning, isolation, the SDK, and card data at rest (every table, pg_dump, logs).

const CREDENTIAL = 'Bearer vault_credential_7c1e';
const SIGNATURE_KEY = 'sandbank_signing_key_for_tests';
const PICKUP_MS = 3000;

let dest: Destination;
let closedPort: number;
let e: EventsTestApp;
beforeAll(async () => {
  dest = await startDestination();
  closedPort = await freePort();
  const destinations = [
    {
      url: `${dest.origin}/vault`,
      allow_private_network: true,
      credential_sha256: createHash('sha256').update(CREDENTIAL).digest('hex'),
      signature_key: SIGNATURE_KEY,
      signature_header: 'X-Signature',
      timeout_ms: 500,
    },
    {
      url: `${dest.origin}/custom`,
      allow_private_network: true,
      fields: { number: 'pan', exp_month: 'expiry.month', exp_year: 'expiry.year', name: 'holder', cvc: 'security.cvv' },
    },
    // No allowance: a loopback address is refused.
    `${dest.origin}/private`,
    { url: `http://127.0.0.1:${closedPort}/`, allow_private_network: true },
    // The smallest config, as written.
    { url: 'http://127.0.0.1:', allow_private_network: true },
  ];
  e = await startEventsTestApp('forwarding', {
    FORWARDING_DESTINATIONS: JSON.stringify(destinations),
    FORWARDING_PICKUP_TIMEOUT_MS: String(PICKUP_MS),
    FORWARDING_REQUEUE_MS: '500',
    RECONCILE_INTERVAL_MS: '600000',
  });
});
afterAll(async () => {
  await e.close();
  await dest.close();
});

const { get, post } = requestsOf(() => e.t);
const FR = '/v1/forwarding/requests';
const VAULT_BODY = { card: { number: '', exp_month: 0, exp_year: '', name: '', cvc: 0 }, amount: 1099 };

/** A saved card with a CVC and a holder name: the card data a forward can insert. */
async function cardWithCvc(key: string, number = '4242424242424242', cvc = '314'): Promise<string> {
  return (
    await createPaymentMethod(e.t, key, {
      card: { number, exp_month: 7, exp_year: 2031, cvc },
      billing_details: { name: 'Jenny Rosen' },
    })
  ).id;
}

function forward(key: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  return post(key, FR, { replacements: ['card_number'], ...params }, headers);
}

const credential = [{ name: 'Authorization', value: CREDENTIAL }];

describe('insertion, credentials, signature and masking', () => {
  test('fills the blanks in their JSON types, checks and redacts the credential, signs the body, and masks card data both ways', async () => {
    const key = newTestKey();
    const pm = await cardWithCvc(key);
    const before = dest.hits('/vault/pay').length;
    const res = await forward(key, {
      payment_method: pm,
      url: `${dest.origin}/vault/pay`,
      replacements: ['card_number', 'card_expiry', 'card_cvc', 'cardholder_name', 'request_signature'],
      request: { body: JSON.stringify(VAULT_BODY), headers: [...credential, { name: 'Idempotency-Key', value: 'dest-1' }] },
      metadata: { order: '42' },
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostForwardingRequests', 200, res.body);

    // What the destination got: the real data, in the blanks' types, with the standard headers.
    const got = dest.hits('/vault/pay');
    expect(got.length).toBe(before + 1);
    const sent = got[got.length - 1];
    expect(JSON.parse(sent.body)).toEqual({
      card: { number: '4242424242424242', exp_month: 7, exp_year: '2031', name: 'Jenny Rosen', cvc: 314 },
      amount: 1099,
    });
    expect(sent.headers).toMatchObject({
      authorization: CREDENTIAL,
      'idempotency-key': 'dest-1',
      'user-agent': 'Stripe',
      accept: '*/*',
      'content-type': 'application/json',
    });
    expect(sent.headers['x-signature']).toBe(createHmac('sha256', SIGNATURE_KEY).update(sent.body).digest('hex'));

    // What the record shows: number masked, CVC ***, credential and signature redacted.
    expect(res.body).toMatchObject({
      object: 'forwarding.request',
      livemode: false,
      payment_method: pm,
      replacements: ['card_number', 'card_expiry', 'card_cvc', 'cardholder_name', 'request_signature'],
      url: `${dest.origin}/vault/pay`,
      metadata: { order: '42' },
      request_context: { destination_ip_address: '127.0.0.1', destination_duration: expect.any(Number) },
    });
    expect(JSON.parse(res.body.request_details.body)).toEqual({
      card: { number: '424242******4242', exp_month: 7, exp_year: '2031', name: 'Jenny Rosen', cvc: '***' },
      amount: 1099,
    });
    expect(res.body.request_details).toMatchObject({
      http_method: 'POST',
      headers: [
        { name: 'Authorization', value: '[REDACTED]' },
        { name: 'Idempotency-Key', value: 'dest-1' },
        { name: 'X-Signature', value: '[REDACTED]' },
      ],
    });
    // The destination echoed the card data back, in its body and a header: masked too.
    expect(res.body.response_details.status).toBe(200);
    expect(JSON.parse(res.body.response_details.body).received.card).toMatchObject({ number: '424242******4242', cvc: '***' });
    expect(res.body.response_details.headers).toContainEqual({ name: 'x-card-number', value: '424242******4242' });
    expect(JSON.stringify(res.body)).not.toContain('4242424242424242');

    // The record is final: the sealed request it sent is gone.
    const row = await e.t.runtime.prisma.forwardingRequest.findUniqueOrThrow({ where: { id: res.body.id } });
    expect({ status: row.status, outbound: row.outbound }).toEqual({ status: 'succeeded', outbound: null });
  });

  test("a destination's own field places; fields absent from the body stay absent, and only the kinds asked for are filled", async () => {
    const key = newTestKey();
    const pm = await cardWithCvc(key, '5555555555554444');
    const body = { pan: 0, expiry: { month: '', year: 0 }, holder: '', note: 'keep me' };
    const res = await forward(key, { payment_method: pm, url: `${dest.origin}/custom/x`, replacements: ['card_number', 'card_expiry'], request: { body: JSON.stringify(body) } });
    expect(res.status).toBe(200);
    const sent = JSON.parse(dest.hits('/custom/x').at(-1)!.body);
    // `pan` was a number blank; the holder was not asked for; the CVC field is absent, so the CVC stays unused.
    expect(sent).toEqual({ pan: 5555555555554444, expiry: { month: '07', year: 2031 }, holder: '', note: 'keep me' });
    expect(JSON.parse(res.body.request_details.body)).toMatchObject({ pan: '555555******4444' });
    const row = await e.t.runtime.prisma.paymentMethod.findUniqueOrThrow({ where: { id: pm } });
    expect(row.cvc).not.toBeNull();
  });

  test('the credential header must match the destination\'s hash; bad bodies and headers are refused before anything is sent', async () => {
    const key = newTestKey();
    const before = dest.received.length;
    const url = `${dest.origin}/vault/pay`;
    const base = { payment_method: 'pm_card_visa', url, request: { body: JSON.stringify(VAULT_BODY), headers: credential } };
    expectError(await forward(key, { ...base, request: { ...base.request, headers: [{ name: 'Authorization', value: 'Bearer wrong' }] } }), 400, {
      code: 'forwarding_api_invalid_parameter',
      param: 'request[headers]',
    });
    expectError(await forward(key, { ...base, request: { body: base.request.body } }), 400, { code: 'forwarding_api_invalid_parameter' });
    expectError(await forward(key, { ...base, request: { ...base.request, body: 'not json' } }), 400, { code: 'forwarding_api_invalid_parameter', param: 'request[body]' });
    expectError(await forward(key, { ...base, request: { ...base.request, body: '{"card":{"number":"4000"}}' } }), 400, {
      code: 'forwarding_api_invalid_parameter',
      param: 'request[body]',
    });
    expectError(await forward(key, { ...base, request: { ...base.request, headers: [...credential, { name: 'Host', value: 'elsewhere' }] } }), 400, {
      code: 'forwarding_api_invalid_parameter',
      param: 'request[headers][1][name]',
    });
    // No signature key on this destination.
    expectError(await forward(key, { ...base, url: `${dest.origin}/custom/sig`, replacements: ['request_signature'] }), 400, {
      code: 'forwarding_api_invalid_parameter',
      param: 'replacements',
    });
    expectError(await forward(key, { ...base, request: undefined }), 400, { code: 'parameter_missing', param: 'request' });
    // The wrong credential is never repeated in the error.
    const wrong = await forward(key, { ...base, request: { ...base.request, headers: [{ name: 'Authorization', value: 'Bearer s3cr3t-wrong' }] } });
    expect(wrong.text).not.toContain('s3cr3t-wrong');
    expect(dest.received.length).toBe(before);
  });

  test('a URL on no destination is forwarding_api_inactive, and user info can\'t pass a prefix off', async () => {
    const key = newTestKey();
    for (const url of ['http://127.0.0.2/x', `http://127.0.0.1:${closedPort}@127.0.0.2/`, 'ftp://127.0.0.1:21/', 'not a url']) {
      expectError(await forward(key, { payment_method: 'pm_card_visa', url, request: { body: '{}' } }), 400, { code: 'forwarding_api_inactive', param: 'url' });
    }
  });
});

describe('what the destination answers, or not', () => {
  const base = (url: string) => ({ payment_method: 'pm_card_visa', url, request: { body: JSON.stringify({ card: { number: '' } }), headers: credential } });

  test('a 4xx or 5xx destination is still a 200, its status in response_details', async () => {
    const key = newTestKey();
    for (const status of [402, 500]) {
      const res = await forward(key, base(`${dest.origin}/vault/status/${status}`));
      expect(res.status).toBe(200);
      expect(res.body.response_details).toMatchObject({ status });
    }
  });

  test('a redirect is not followed: its 302 is the answer, and the target is never called', async () => {
    const key = newTestKey();
    const res = await forward(key, base(`${dest.origin}/vault/redirect`));
    expect(res.status).toBe(200);
    expect(res.body.response_details.status).toBe(302);
    expect(res.body.response_details.headers).toContainEqual({ name: 'location', value: '/landing' });
    expect(dest.hits('/landing')).toEqual([]);
  });

  test("past the destination's timeout: forwarding_api_upstream_connection_timeout, and the record says so", async () => {
    const key = newTestKey();
    const res = await forward(key, base(`${dest.origin}/vault/slow`));
    expectError(res, 504, { type: 'api_error', code: 'forwarding_api_upstream_connection_timeout' });
    const id = /fwdreq_\w+/.exec(res.body.error.message)![0];
    const row = await e.t.runtime.prisma.forwardingRequest.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: 'failed', errorCode: 'forwarding_api_upstream_connection_timeout', failure: 'Timed out after 500 ms', outbound: null });
    // The failed record is listed too, without a response.
    expect((await get(key, `${FR}/${id}`)).body).toMatchObject({ id, response_details: null, request_context: null });
  });

  test('a loopback address without allow_private_network is refused, and nothing is sent', async () => {
    const key = newTestKey();
    const before = dest.received.length;
    const res = await forward(key, { ...base(`${dest.origin}/private/x`), request: { body: '{"card":{"number":""}}' } });
    expectError(res, 502, { type: 'api_error', code: 'forwarding_api_upstream_connection_error' });
    expect(res.body.error.message).toContain('127.0.0.1 is a loopback address (private networks are not allowed here)');
    expect(dest.received.length).toBe(before);
  });

  test('a refused connection is forwarding_api_upstream_connection_error', async () => {
    const key = newTestKey();
    const res = await forward(key, { ...base(`http://127.0.0.1:${closedPort}/pay`), request: { body: '{"card":{"number":""}}' } });
    expectError(res, 502, { code: 'forwarding_api_upstream_connection_error' });
    expect(res.body.error.message).toContain('ECONNREFUSED');
  });
});

describe('the CVC and idempotency', () => {
  test('the CVC serves the first forward only; later ones that ask for it are refused, others still work', async () => {
    const key = newTestKey();
    const pm = await cardWithCvc(key, '4000056655665556', '271');
    const url = `${dest.origin}/any/cvc`;
    const body = JSON.stringify({ card: { number: '', cvc: '' } });
    const first = await forward(key, { payment_method: pm, url, replacements: ['card_number', 'card_cvc'], request: { body } });
    expect(first.status).toBe(200);
    expect(JSON.parse(dest.hits('/any/cvc').at(-1)!.body).card.cvc).toBe('271');
    const again = await forward(key, { payment_method: pm, url, replacements: ['card_number', 'card_cvc'], request: { body } });
    expectError(again, 400, { code: 'forwarding_api_invalid_parameter', param: 'replacements' });
    expect(dest.hits('/any/cvc').length).toBe(1);
    // "Previously consumed PaymentMethods may be forwarded": without the CVC it still works.
    expect((await forward(key, { payment_method: pm, url, request: { body } })).status).toBe(200);
  });

  test("the forwarding API's reference example: pm_card_visa (or a test token, or a number sent without one) carries a CVC for its first forward", async () => {
    const key = newTestKey();
    const url = `${dest.origin}/v1/tokens`;
    const body = JSON.stringify({ card: { number: '', exp_month: '', exp_year: '', cvc: '', name: '' } });
    const replacements = ['card_number', 'card_expiry', 'card_cvc', 'cardholder_name'];
    const res = await forward(key, { payment_method: 'pm_card_visa', url, replacements, request: { body } });
    expect(res.status).toBe(200);
    expect(JSON.parse(dest.hits('/v1/tokens').at(-1)!.body).card).toMatchObject({ number: '4242424242424242', cvc: '123' });
    expect(JSON.parse(res.body.request_details.body).card).toMatchObject({ number: '424242******4242', cvc: '***' });
    // The card it made keeps no CVC after its first forward.
    expectError(await forward(key, { payment_method: res.body.payment_method, url, replacements, request: { body } }), 400, { code: 'forwarding_api_invalid_parameter', param: 'replacements' });
    const amex = (await createPaymentMethod(e.t, key, { card: { token: 'tok_amex' } })).id;
    expect((await forward(key, { payment_method: amex, url, replacements, request: { body } })).status).toBe(200);
    expect(JSON.parse(dest.hits('/v1/tokens').at(-1)!.body).card.cvc).toBe('1234');
    const bare = (await createPaymentMethod(e.t, key, { card: { number: '5555555555554444', exp_month: 12, exp_year: 2040 } })).id;
    expect((await forward(key, { payment_method: bare, url, replacements, request: { body } })).status).toBe(200);
    expect(JSON.parse(dest.hits('/v1/tokens').at(-1)!.body).card).toMatchObject({ number: '5555555555554444', cvc: '123' });
    // A CVC nobody sent is never checked: the card shows none.
    expect((await get(key, `/v1/payment_methods/${bare}`)).body.card.checks.cvc_check).toBeNull();
  });

  test('an idempotent retry replays the result, errors included, without a second call', async () => {
    const key = newTestKey();
    const params = { payment_method: 'pm_card_mastercard', url: `${dest.origin}/any/idem`, request: { body: '{"card":{"number":""}}' } };
    const first = await forward(key, params, { 'Idempotency-Key': 'fwd-ok' });
    const second = await forward(key, params, { 'Idempotency-Key': 'fwd-ok' });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(dest.hits('/any/idem').length).toBe(1);

    const slow = { ...params, url: `${dest.origin}/vault/slow-idem`, request: { ...params.request, headers: credential } };
    const failed = await forward(key, slow, { 'Idempotency-Key': 'fwd-timeout' });
    expect(failed.status).toBe(504);
    const replayed = await forward(key, slow, { 'Idempotency-Key': 'fwd-timeout' });
    expect({ status: replayed.status, body: replayed.body, replayed: replayed.headers['idempotent-replayed'] }).toEqual({ status: 504, body: failed.body, replayed: 'true' });
    expect(dest.hits('/vault/slow-idem').length).toBe(1);
  });

  test('a retry whose key was freed meanwhile answers the same record again, never sending twice', async () => {
    const key = newTestKey();
    const params = { payment_method: 'pm_card_visa', url: `${dest.origin}/any/freed`, request: { body: '{"card":{"number":""}}' } };
    const first = await forward(key, params, { 'Idempotency-Key': 'fwd-freed' });
    // As if the API had died waiting: its claim on the key is gone, the record stays.
    await e.t.runtime.prisma.idempotencyRecord.deleteMany({ where: { key: 'fwd-freed' } });
    const again = await forward(key, params, { 'Idempotency-Key': 'fwd-freed' });
    expect(again.body.id).toBe(first.body.id);
    expect(dest.hits('/any/freed').length).toBe(1);
  });
});

describe('the worker, Redis and the record', () => {
  const params = (path: string) => ({ payment_method: 'pm_card_visa', url: `${dest.origin}${path}`, request: { body: '{"card":{"number":""}}' } });

  test('no worker takes the job: forwarding_api_retryable_upstream_error at the pickup deadline, and the late worker sends nothing', async () => {
    const key = newTestKey();
    await e.stopWorkers();
    try {
      const res = await forward(key, params('/any/nobody'));
      expectError(res, 402, { code: 'forwarding_api_retryable_upstream_error' });
      expect(res.headers['stripe-should-retry']).toBe('false');
      const id = /fwdreq_\w+/.exec(res.body.error.message)![0];
      expect(await e.t.runtime.prisma.forwardingRequest.findUniqueOrThrow({ where: { id } })).toMatchObject({
        status: 'failed',
        errorCode: 'forwarding_api_retryable_upstream_error',
        failure: expect.stringContaining('nothing was sent'),
        outbound: null,
      });
    } finally {
      await e.startWorkers();
    }
    // The job is still in Redis: the worker runs it and finds the record failed.
    const producer = new JobQueues(e.t.config, e.t.runtime.logger);
    await until(async () => {
      const counts = await producer.of(forwardingQueue).getJobCounts('wait', 'active', 'delayed');
      return counts.wait + counts.active + counts.delayed === 0;
    }, 10000, 'the late job ran');
    await producer.close();
    expect(dest.hits('/any/nobody')).toEqual([]);
  });

  test('a job Redis lost while the API waited is re-added by the reconciler, and sent once', async () => {
    const key = newTestKey();
    await e.stopWorkers();
    let waiting: Promise<Awaited<ReturnType<typeof forward>>>;
    try {
      // A supertest request starts once something awaits it.
      waiting = Promise.resolve(forward(key, params('/any/lost')));
      await until(async () => (await e.t.runtime.prisma.forwardingRequest.count({ where: { url: `${dest.origin}/any/lost` } })) === 1, 5000, 'the record');
      const producer = new JobQueues(e.t.config, e.t.runtime.logger);
      expect(await producer.of(forwardingQueue).getJobCounts('wait')).toEqual({ wait: 1 });
      await producer.of(forwardingQueue).obliterate({ force: true });
      await producer.close();
    } finally {
      // Workers start with a reconcile pass, as a worker process does.
      await e.startWorkers();
    }
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(dest.hits('/any/lost').length).toBe(1);
  });

  test('a job Redis lost while the workers run (a flush) is re-added by the waiting API, before any reconcile pass, and sent once', async () => {
    const key = newTestKey();
    const producer = new JobQueues(e.t.config, e.t.runtime.logger);
    const queue = producer.of(forwardingQueue);
    // Paused, no worker takes the job; then the job is lost (and the pause with it). The reconciler's next pass is minutes away.
    await queue.pause();
    try {
      const waiting = Promise.resolve(forward(key, params('/any/flushed')));
      await until(async () => (await e.t.runtime.prisma.forwardingRequest.count({ where: { url: `${dest.origin}/any/flushed` } })) === 1, 5000, 'the record');
      await until(async () => (await queue.count()) === 1, 5000, 'the job');
      await queue.obliterate({ force: true });
      const res = await waiting;
      expect(res.status).toBe(200);
      expect(dest.hits('/any/flushed').length).toBe(1);
    } finally {
      await queue.resume();
      await producer.close();
    }
  });

  /** A record made behind the API's back, for the key's account: pending unless `extra` says otherwise. */
  async function recordOf(key: string) {
    await get(key, '/v1/account');
    const account = await accountOfKey(e.t.runtime, key);
    const { prisma } = e.t.runtime;
    const sealed = await e.t.runtime.encryption.seal(JSON.stringify({ body: '{}', headers: [], mask: { number: '4242424242424242' } }));
    const row = (id: string, extra: Record<string, unknown>) =>
      prisma.forwardingRequest.create({
        data: {
          id,
          accountId: account,
          created: Math.floor(Date.now() / 1000),
          paymentMethod: 'pm_x',
          replacements: ['card_number'],
          url: `${dest.origin}/any/late`,
          status: 'pending',
          requestDetails: { body: '{}', headers: [], http_method: 'POST' },
          outbound: sealed,
          keyId: Encryption.keyIdOf(sealed),
          timeoutMs: 1000,
          allowPrivateNetwork: true,
          pickupDeadline: new Date(Date.now() + 60_000),
          ...extra,
        },
      });
    return { account, row };
  }

  test('the claim is conditional: a job past its pickup deadline, or repeated, sends nothing; a call whose run ended fails as "may have been sent"', async () => {
    const key = newTestKey();
    const { account, row } = await recordOf(key);
    const { prisma } = e.t.runtime;
    await row('fwdreq_late0000000000000000000', { pickupDeadline: new Date(Date.now() - 1000) });
    await runForward(e.t.runtime, 'fwdreq_late0000000000000000000');
    // Sent once; a repeat of the same job finds it final.
    await row('fwdreq_once0000000000000000000', { url: `${dest.origin}/any/once` });
    await runForward(e.t.runtime, 'fwdreq_once0000000000000000000');
    await runForward(e.t.runtime, 'fwdreq_once0000000000000000000');
    // Its job runs again: the run that claimed it ended (killed, say), so the call is abandoned now.
    await row('fwdreq_dead0000000000000000000', { status: 'sending', claimedAt: new Date(Date.now() - 2_000) });
    await runForward(e.t.runtime, 'fwdreq_dead0000000000000000000');
    // Sending long past its timeout and the worker's recording bound; and one still within it.
    await row('fwdreq_gone0000000000000000000', { status: 'sending', claimedAt: new Date(Date.now() - (ABANDONED_AFTER_SECONDS + 5) * 1000) });
    await row('fwdreq_slow0000000000000000000', { status: 'sending', claimedAt: new Date(Date.now() - 30_000) });
    expect(dest.hits('/any/late')).toEqual([]);
    expect(dest.hits('/any/once').length).toBe(1);

    const counts = await reconcileForwards(e.t.runtime, Date.now());
    expect(counts).toMatchObject({ forwardsMissed: 1, forwardsAbandoned: 1 });
    const states = await prisma.forwardingRequest.findMany({ where: { accountId: account }, orderBy: { id: 'asc' }, select: { id: true, status: true, errorCode: true, outbound: true } });
    const sealed = expect.stringMatching(/^sealed:/);
    expect(states).toEqual([
      { id: 'fwdreq_dead0000000000000000000', status: 'failed', errorCode: 'forwarding_api_upstream_error', outbound: null },
      { id: 'fwdreq_gone0000000000000000000', status: 'failed', errorCode: 'forwarding_api_upstream_error', outbound: null },
      { id: 'fwdreq_late0000000000000000000', status: 'failed', errorCode: 'forwarding_api_retryable_upstream_error', outbound: null },
      { id: 'fwdreq_once0000000000000000000', status: 'succeeded', errorCode: null, outbound: null },
      { id: 'fwdreq_slow0000000000000000000', status: 'sending', errorCode: null, outbound: sealed },
    ]);
  });

  /** The runtime with its `$executeRaw` refusing the first `refusals` statements that record an outcome, as a restarting database does; `meanwhile` runs before each refusal. */
  function outageWhileRecording(refusals: number, meanwhile: () => Promise<unknown> = async () => undefined) {
    const { prisma } = e.t.runtime;
    let refused = 0;
    const executeRaw = (strings: TemplateStringsArray, ...values: unknown[]) => {
      // The destinations here answer, so the outcome recorded is a success.
      const recording = strings.join('?').includes("SET status = 'succeeded'");
      if (recording && refused < refusals) {
        refused++;
        return meanwhile().then(() => Promise.reject(Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001' })));
      }
      return prisma.$executeRaw(strings, ...values);
    };
    const deps = { ...e.t.runtime, prisma: new Proxy(prisma, { get: (target, name) => (name === '$executeRaw' ? executeRaw : Reflect.get(target, name)) }) };
    return { deps, refused: () => refused };
  }

  test("a destination's answer is recorded through a database outage, never sent again", async () => {
    const key = newTestKey();
    const { row } = await recordOf(key);
    await row('fwdreq_outage000000000000000000', { url: `${dest.origin}/any/outage` });
    const outage = outageWhileRecording(3);
    await runForward(outage.deps, 'fwdreq_outage000000000000000000');
    expect(outage.refused()).toBe(3);
    expect(dest.hits('/any/outage').length).toBe(1);
    const record = await e.t.runtime.prisma.forwardingRequest.findUniqueOrThrow({ where: { id: 'fwdreq_outage000000000000000000' } });
    expect(record).toMatchObject({ status: 'succeeded', errorCode: null, outbound: null });
    expect(record.responseDetails).toMatchObject({ status: 200 });
  });

  test('the truth lands over "abandoned": a run that lost its job meanwhile (another run failed the call) still records the answer', async () => {
    const key = newTestKey();
    const { row } = await recordOf(key);
    const id = 'fwdreq_lostlock00000000000000000';
    await row(id, { url: `${dest.origin}/any/lostlock` });
    const outage = outageWhileRecording(1, () => failAbandoned(e.t.runtime.prisma, id));
    await runForward(outage.deps, id);
    expect(outage.refused()).toBe(1);
    expect(dest.hits('/any/lostlock').length).toBe(1);
    expect(await e.t.runtime.prisma.forwardingRequest.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'succeeded', errorCode: null, failure: null });
  });

  test('an API that cannot wait longer answers that the outcome is not known yet, keeps no answer for the key, and a retry answers the truth', async () => {
    const key = newTestKey();
    const { row } = await recordOf(key);
    const id = 'fwdreq_unknown0000000000000000';
    const params = { payment_method: 'pm_card_visa', url: `${dest.origin}/any/unknown`, request: { body: '{"card":{"number":""}}' } };
    // Claimed by a worker whose answer isn't recorded yet, past the call's timeout and the grace.
    await row(id, { status: 'sending', claimedAt: new Date(Date.now() - 10_000), idempotencyKey: 'fwd-unknown', url: params.url });
    const first = await forward(key, params, { 'Idempotency-Key': 'fwd-unknown' });
    expectError(first, 502, { type: 'api_error', code: 'forwarding_api_upstream_error' });
    expect(first.body.error.message).toContain('not known yet');
    expect(first.body.error.message).toContain(id);
    expect(first.headers['stripe-should-retry']).toBe('true');
    expect(await e.t.runtime.prisma.idempotencyRecord.count({ where: { key: 'fwd-unknown' } })).toBe(0);

    // The worker's answer lands: the same key now answers it, and nothing more was sent.
    await e.t.runtime.prisma.forwardingRequest.update({
      where: { id },
      data: { status: 'succeeded', responseDetails: { body: '{}', headers: [], status: 200 }, requestContext: { destination_duration: 5, destination_ip_address: '127.0.0.1' }, outbound: null, keyId: null },
    });
    const again = await forward(key, params, { 'Idempotency-Key': 'fwd-unknown' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, response_details: { status: 200 } });
    expect(dest.hits('/any/unknown')).toEqual([]);
    // Final now: kept for the key, and replayed.
    const replay = await forward(key, params, { 'Idempotency-Key': 'fwd-unknown' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(again.body);
  });

  test('records older than 30 days are pruned', async () => {
    const key = newTestKey();
    const made = await forward(key, params('/any/prune'));
    const now = Math.floor(Date.now() / 1000);
    expect(await pruneForwardingRequests(e.t.runtime.prisma, now + 29 * 86400)).toBe(0);
    expect(await pruneForwardingRequests(e.t.runtime.prisma, now + 31 * 86400)).toBeGreaterThanOrEqual(1);
    expect((await get(key, `${FR}/${made.body.id}`)).status).toBe(404);
  });
});

describe('list, retrieve, isolation and the SDK', () => {
  test('retrieve and list (created filter, pagination); another key and a connected account see only their own', async () => {
    const key = newTestKey();
    const p = (path: string) => ({ payment_method: 'pm_card_visa', url: `${dest.origin}${path}`, request: { body: '{"card":{"number":""}}' } });
    const a = (await forward(key, p('/any/l1'))).body;
    const b = (await forward(key, p('/any/l2'))).body;
    expect((await get(key, `${FR}/${a.id}`)).body).toEqual(a);
    const list = await get(key, `${FR}?limit=1`);
    expect(list.body).toMatchObject({ object: 'list', url: FR, has_more: true, data: [{ id: b.id }] });
    expect((await get(key, `${FR}?starting_after=${b.id}`)).body.data.map((r: any) => r.id)).toEqual([a.id]);
    expect((await get(key, `${FR}?created[gt]=${a.created + 3600}`)).body.data).toEqual([]);

    const other = newTestKey();
    expectError(await get(other, `${FR}/${a.id}`), 404, { code: 'resource_missing' });
    expect((await get(other, FR)).body.data).toEqual([]);

    const connected = await createConnectedAccount(e.t.runtime, await accountOfKey(e.t.runtime, key));
    const asConnected = { 'Stripe-Account': connected };
    const c = await post(key, FR, { replacements: ['card_number'], ...p('/any/l3') }, asConnected);
    expect(c.status).toBe(200);
    expectError(await get(key, `${FR}/${c.body.id}`), 404, { code: 'resource_missing' });
    expectError(await get(key, `${FR}/${a.id}`, asConnected), 404, { code: 'resource_missing' });
    expect((await get(key, FR, asConnected)).body.data.map((r: any) => r.id)).toEqual([c.body.id]);
    // A connected account forwards only its own payment methods.
    const platformPm = await cardWithCvc(key);
    expectError(await post(key, FR, { replacements: ['card_number'], ...p('/any/l4'), payment_method: platformPm }, asConnected), 400, {
      code: 'resource_missing',
      param: 'payment_method',
    });
  });

  test('through the official SDK', async () => {
    const key = newTestKey();
    const stripe = e.t.stripe(key);
    const created = await stripe.forwarding.requests.create({
      payment_method: 'pm_card_amex',
      url: `${dest.origin}/any/sdk`,
      replacements: ['card_number', 'card_expiry'],
      request: { body: JSON.stringify({ card: { number: '', exp_month: '', exp_year: '' } }), headers: [{ name: 'X-Trace', value: 't1' }] },
    });
    expect(created.request_details!.body).toContain('378282*****0005');
    expect((await stripe.forwarding.requests.retrieve(created.id)).id).toBe(created.id);
    expect((await stripe.forwarding.requests.list({ limit: 3 })).data.map((r) => r.id)).toEqual([created.id]);
    const err = await stripe.forwarding.requests
      .create({ payment_method: 'pm_card_visa', url: 'http://127.0.0.2/', replacements: ['card_number'], request: { body: '{}' } })
      .catch((x) => x);
    expect(err).toMatchObject({ type: 'StripeInvalidRequestError', code: 'forwarding_api_inactive' });
  });
});

test('the number and the CVC are in no table, no pg_dump and no log', async () => {
  const key = newTestKey();
  // A number and a CVC no other test of this file (and its own database) uses.
  const pm = await cardWithCvc(key, '6011111111111117', '917');
  const res = await forward(
    key,
    {
      payment_method: pm,
      url: `${dest.origin}/vault/rest`,
      replacements: ['card_number', 'card_cvc'],
      request: { body: JSON.stringify({ card: { number: '', cvc: '' } }), headers: credential },
    },
    { 'Idempotency-Key': 'at-rest' },
  );
  expect(res.status).toBe(200);
  expect(JSON.parse(dest.hits('/vault/rest')[0].body).card).toEqual({ number: '6011111111111117', cvc: '917' });
  await expectNowhereAtRest(e.t, '6011111111111117', ['forwarding_requests', res.body.id]);
  // The CVC as a value of its own (three digits turn up inside ids, times and base64 by chance).
  const token = /(^|[^0-9A-Za-z+/])917($|[^0-9A-Za-z+/=])/;
  const account = await accountOfKey(e.t.runtime, key);
  const rows = await e.t.runtime.prisma.$queryRaw<{ n: bigint }[]>`
    SELECT (SELECT count(*) FROM forwarding_requests r WHERE r.account_id = ${account} AND r::text ~ ${token.source})
         + (SELECT count(*) FROM payment_methods r WHERE r.account_id = ${account} AND (to_jsonb(r) - 'number' - 'cvc')::text ~ ${token.source})
         + (SELECT count(*) FROM idempotency_records r WHERE r.account_id = ${account} AND r::text ~ ${token.source})
         + (SELECT count(*) FROM events r WHERE r.account_id = ${account} AND r::text ~ ${token.source}) AS n`;
  expect(Number(rows[0].n)).toBe(0);
  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', '--data-only', '--table=forwarding_requests', `--dbname=${e.t.config.databaseUrl}`], {
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(stdout).toContain(res.body.id);
  expect(stdout).not.toMatch(token);
  expect(e.t.logText()).not.toMatch(/cvc[^\n]{0,40}917/);
  expect(e.t.logText()).not.toContain('6011111111111117');
});

test('FORWARDING_DESTINATIONS: the smallest config works as written; a bad one stops start-up naming the variable', () => {
  const config = loadConfig({ FORWARDING_DESTINATIONS: '[{"url": "http://127.0.0.1:", "allow_private_network": true}]' });
  expect(forwardingDestinations(config)).toEqual([
    expect.objectContaining({ url: 'http://127.0.0.1:', allowPrivateNetwork: true, credentialSha256: 'any', timeoutMs: 30000, signatureKey: null }),
  ]);
  expect(forwardingDestinations(loadConfig({}))).toEqual([]);
  for (const bad of ['[{"url": "127.0.0.1"}]', '[{"url": "http://x", "timeout_ms": 120000}]', '[{"url": "http://x", "bogus": 1}]', '{', '/no/such/file.json']) {
    // The config takes it as written; forwarding checks it as the process starts, before any client opens.
    expect(() => openRuntime(loadConfig({ FORWARDING_DESTINATIONS: bad }))).toThrow(/FORWARDING_DESTINATIONS/);
  }
});
