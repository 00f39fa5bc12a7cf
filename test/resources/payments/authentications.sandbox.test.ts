import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCustomer } from '../../helpers/fixtures';
import { expectError, requestsOf } from '../../helpers/requests';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';

// The sandbox's 3-D Secure operations: the caller's challenges listed (pending ones by `status`),
// and one answered as its hosted page's buttons answer it (the intent moves on, its events are
// written), once; another key's challenge is a 404.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);
const PA = '/sandbox/v1/payment_authentications';

async function challengedPayment(key: string, card = 'pm_card_authenticationRequired') {
  const res = await post(key, '/v1/payment_intents', { amount: 2000, currency: 'usd', payment_method: card, confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
  expect(res.body).toMatchObject({ status: 'requires_action' });
  return res.body as { id: string };
}

test('the list shows the caller’s challenges newest first, `status` filters, and never a token', async () => {
  const key = newTestKey();
  const a = await challengedPayment(key);
  const b = await challengedPayment(key, 'pm_card_threeDSecure2Required');
  const customer = (await createCustomer(t, key)).id;
  const setup = (await post(key, '/v1/setup_intents', { customer, payment_method: 'pm_card_authenticationRequired', confirm: true, return_url: 'http://127.0.0.1:0/back' })).body;
  expect(setup.status).toBe('requires_action');
  const res = await get(key, `${PA}?status=pending`);
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('GetSandboxPaymentAuthentications', 200, res.body);
  expect(res.body.data.map((x: any) => x.payment_intent ?? x.setup_intent)).toEqual([setup.id, b.id, a.id]);
  expect(res.body.data[1]).toEqual({
    id: expect.stringMatching(/^payatt_/),
    object: 'sandbox.payment_authentication',
    answered_at: null,
    created: expect.any(Number),
    expires_at: res.body.data[1].created + 3600,
    livemode: false,
    payment_intent: b.id,
    setup_intent: null,
    status: 'pending',
  });
  expect(JSON.stringify(res.body)).not.toMatch(/three_d_secure\//);
  expect((await get(key, `${PA}?status=succeeded`)).body.data).toEqual([]);
  expect((await get(key, `${PA}?limit=1`)).body).toMatchObject({ has_more: true, data: [{ setup_intent: setup.id }] });
  expectError(await get(key, `${PA}?status=bogus`), 400, { type: 'invalid_request_error', param: 'status' });
  expect((await get(newTestKey(), PA)).body.data).toEqual([]);
});

test('complete: the PaymentIntent succeeds (with its events); answering again is refused', async () => {
  const key = newTestKey();
  const intent = await challengedPayment(key);
  const [pending] = (await get(key, `${PA}?status=pending`)).body.data;
  const res = await post(key, `${PA}/${pending.id}/complete`);
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostSandboxPaymentAuthenticationsPaymentAuthenticationComplete', 200, res.body);
  expect(res.body).toMatchObject({ id: pending.id, status: 'succeeded', answered_at: expect.any(Number), payment_intent: intent.id });
  expect((await get(key, `/v1/payment_intents/${intent.id}`)).body).toMatchObject({ status: 'succeeded', next_action: null });
  const events = (await get(key, '/v1/events?type=payment_intent.succeeded')).body.data;
  expect(events.map((e: any) => e.data.object.id)).toEqual([intent.id]);
  expect((await get(key, `${PA}?status=pending`)).body.data).toEqual([]);
  expectError(await post(key, `${PA}/${pending.id}/complete`), 400, { type: 'invalid_request_error', message: expect.stringContaining('already been answered (succeeded)') });
  expectError(await post(key, `${PA}/${pending.id}/fail`), 400, { type: 'invalid_request_error' });
});

test('fail: the PaymentIntent goes back to requires_payment_method with its authentication error', async () => {
  const key = newTestKey();
  const intent = await challengedPayment(key);
  const [pending] = (await get(key, `${PA}?status=pending`)).body.data;
  const res = await post(key, `${PA}/${pending.id}/fail`);
  expectMatchesResponseSchema('PostSandboxPaymentAuthenticationsPaymentAuthenticationFail', 200, res.body);
  expect(res.body).toMatchObject({ status: 'failed', payment_intent: intent.id });
  expect((await get(key, `/v1/payment_intents/${intent.id}`)).body).toMatchObject({
    status: 'requires_payment_method',
    last_payment_error: { code: 'payment_intent_authentication_failure' },
  });
});

test('a challenge replaced by a new confirmation can’t be answered', async () => {
  const key = newTestKey();
  const intent = await challengedPayment(key);
  const [first] = (await get(key, `${PA}?status=pending`)).body.data;
  await post(key, `/v1/payment_intents/${intent.id}/cancel`);
  expectError(await post(key, `${PA}/${first.id}/complete`), 400, { message: expect.stringContaining('replaced or canceled') });
});

test('another key’s challenge, or an id that is none, is a 404; under Stripe-Account only the connected account’s own', async () => {
  const key = newTestKey();
  const other = newTestKey();
  await challengedPayment(other);
  const [theirs] = (await get(other, `${PA}?status=pending`)).body.data;
  for (const id of [theirs.id, 'payatt_nope', 'pi_123']) {
    expectError(await post(key, `${PA}/${id}/complete`), 404, { type: 'invalid_request_error', code: 'resource_missing' });
  }
  expect((await get(other, `${PA}?status=pending`)).body.data).toEqual([expect.objectContaining({ id: theirs.id, status: 'pending' })]);
  const connected = (await createAccount(t, key, { type: 'express' })).id;
  const platformIntent = await challengedPayment(key);
  const [platforms] = (await get(key, `${PA}?status=pending`)).body.data;
  expect(platforms.payment_intent).toBe(platformIntent.id);
  expect((await get(key, PA, { 'Stripe-Account': connected })).body.data).toEqual([]);
  expectError(await post(key, `${PA}/${platforms.id}/complete`, {}, { 'Stripe-Account': connected }), 404, { code: 'resource_missing' });
});
