import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createPaymentIntent } from '../../../helpers/fixtures';
import { expectError, requestsOf } from '../../../helpers/requests';

// What Stripe.js does with a PaymentIntent, with the platform's publishable key (pk_test_X is
// sk_test_X's platform in the open mode): retrieve and confirm with the client secret, nothing else.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, post } = requestsOf(() => t);
const BACK = 'http://127.0.0.1:9/back';

test('a publishable key retrieves and confirms an intent with its client secret', async () => {
  const key = newTestKey();
  const pk = key.replace(/^sk_/, 'pk_');
  const intent = await createPaymentIntent(t, key, { amount: 1500 });
  const got = await get(pk, `/v1/payment_intents/${intent.id}?client_secret=${intent.client_secret}`);
  expect(got.status).toBe(200);
  expect(got.body).toMatchObject({ id: intent.id, client_secret: intent.client_secret, status: 'requires_payment_method' });
  const pm = await post(pk, '/v1/payment_methods', { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } });
  expect(pm.status).toBe(200);
  const confirmed = await post(pk, `/v1/payment_intents/${intent.id}/confirm`, { client_secret: intent.client_secret, payment_method: pm.body.id, return_url: BACK });
  expect(confirmed.status).toBe(200);
  expect(confirmed.body).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 1500 });
});

test('a wrong or missing client secret reveals nothing, and other operations refuse the key', async () => {
  const key = newTestKey();
  const pk = key.replace(/^sk_/, 'pk_');
  const intent = await createPaymentIntent(t, key, { amount: 1500 });
  const other = await createPaymentIntent(t, key, { amount: 1500 });
  const wrong = await get(pk, `/v1/payment_intents/${intent.id}?client_secret=${other.client_secret}`);
  expectError(wrong, 400, { type: 'invalid_request_error', param: 'client_secret' });
  expect(JSON.stringify(wrong.body)).not.toContain(intent.client_secret);
  expectError(await get(pk, `/v1/payment_intents/${intent.id}`), 400, { code: 'parameter_missing', param: 'client_secret' });
  expectError(await post(pk, `/v1/payment_intents/${intent.id}/confirm`, { client_secret: other.client_secret, payment_method: 'pm_card_visa', return_url: BACK }), 400, { param: 'client_secret' });
  // Nothing moved: the intent still waits for a payment method.
  expect((await get(key, `/v1/payment_intents/${intent.id}`)).body.status).toBe('requires_payment_method');
  for (const res of [
    await post(pk, '/v1/payment_intents', { amount: 100, currency: 'usd' }),
    await post(pk, `/v1/payment_intents/${intent.id}/capture`, {}),
    await post(pk, `/v1/payment_intents/${intent.id}/cancel`, {}),
    await get(pk, '/v1/payment_intents'),
    await get(pk, '/v1/charges'),
  ]) {
    expectError(res, 401, { type: 'invalid_request_error', code: 'secret_key_required' });
  }
  // Another platform's publishable key doesn't find it at all.
  expectError(await get(newTestKey().replace(/^sk_/, 'pk_'), `/v1/payment_intents/${intent.id}?client_secret=${intent.client_secret}`), 404, { code: 'resource_missing' });
});
