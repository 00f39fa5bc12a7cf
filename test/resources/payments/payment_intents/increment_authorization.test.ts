import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createPaymentIntent } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';

// POST /v1/payment_intents/{id}/increment_authorization: a manual capture in requires_capture,
// confirmed with request_incremental_authorization=if_available on a card that supports it.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, post, eventsOf } = requestsOf(() => t);
const PI = '/v1/payment_intents';
const incremental = { payment_method_options: { card: { request_incremental_authorization: 'if_available' } } };
const authorized = (key: string, pm = 'pm_card_visa', extra: Record<string, unknown> = incremental) =>
  createPaymentIntent(t, key, { capture_method: 'manual', payment_method: pm, confirm: true, ...extra });

test('raises the authorization: the intent and its charge show the new amount, which captures', async () => {
  const key = newTestKey();
  const intent = await authorized(key);
  expect(intent).toMatchObject({ status: 'requires_capture', amount_capturable: 2000, payment_method_options: { card: { request_incremental_authorization: 'if_available' } } });
  const charge = (await get(key, `/v1/charges/${intent.latest_charge}`)).body;
  expect(charge.payment_method_details.card.incremental_authorization).toEqual({ status: 'available' });

  const res = await post(key, `${PI}/${intent.id}/increment_authorization`, { amount: 3500, description: 'More', metadata: { bump: '1' } });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostPaymentIntentsIntentIncrementAuthorization', 200, res.body);
  expect(res.body).toMatchObject({ status: 'requires_capture', amount: 3500, amount_capturable: 3500, description: 'More', metadata: { bump: '1' } });
  expect(res.body.payment_method_options.card).not.toHaveProperty('incrementalAuthorizations');
  const after = (await get(key, `/v1/charges/${intent.latest_charge}`)).body;
  expect(after).toMatchObject({ amount: 3500, captured: false, payment_method_details: { card: { amount_authorized: 3500 } } });
  const [updated] = await eventsOf(key, 'charge.updated');
  expect(updated.data.previous_attributes).toMatchObject({ amount: 2000 });
  expect((await eventsOf(key, 'payment_intent.amount_capturable_updated')).map((e: any) => e.data.object.amount)).toEqual([3500, 2000]);

  const captured = await post(key, `${PI}/${intent.id}/capture`, {});
  expect(captured.body).toMatchObject({ status: 'succeeded', amount_received: 3500 });
  expect((await get(key, `/v1/charges/${intent.latest_charge}`)).body).toMatchObject({ amount_captured: 3500, amount_refunded: 0 });
  // Captured: no more increments.
  expectError(await post(key, `${PI}/${intent.id}/increment_authorization`, { amount: 4000 }), 400, { code: 'payment_intent_unexpected_state' });
});

test('not eligible: not requested, a card that does not support it, not requires_capture, a smaller amount, past 10 attempts', async () => {
  const key = newTestKey();
  const plain = await authorized(key, 'pm_card_visa', {});
  expect((await get(key, `/v1/charges/${plain.latest_charge}`)).body.payment_method_details.card).not.toHaveProperty('incremental_authorization');
  expectError(await post(key, `${PI}/${plain.id}/increment_authorization`, { amount: 3000 }), 400, {
    type: 'invalid_request_error',
    message: expect.stringContaining('request_incremental_authorization'),
  });
  const amex = await authorized(key, 'pm_card_amex');
  expect((await get(key, `/v1/charges/${amex.latest_charge}`)).body.payment_method_details.card.incremental_authorization).toEqual({ status: 'unavailable' });
  expectError(await post(key, `${PI}/${amex.id}/increment_authorization`, { amount: 3000 }), 400, { message: expect.stringContaining('not eligible') });
  const open = await createPaymentIntent(t, key, incremental);
  expectError(await post(key, `${PI}/${open.id}/increment_authorization`, { amount: 3000 }), 400, {
    code: 'payment_intent_unexpected_state',
    message: expect.stringContaining('requires_payment_method'),
  });
  const intent = await authorized(key);
  expectError(await post(key, `${PI}/${intent.id}/increment_authorization`, { amount: 2000 }), 400, { param: 'amount' });
  expectError(await post(key, `${PI}/${intent.id}/increment_authorization`, {}), 400, { code: 'parameter_missing', param: 'amount' });
  expectError(await post(key, `${PI}/${intent.id}/increment_authorization`, { amount: 'lots' }), 400, { param: 'amount' });
  expectError(await post(key, `${PI}/${intent.id}/increment_authorization`, { amount: 3000, statement_descriptor: 'X' }), 400, { param: 'statement_descriptor' });
  for (let i = 1; i <= 10; i++) expect((await post(key, `${PI}/${intent.id}/increment_authorization`, { amount: 2000 + i * 100 })).status).toBe(200);
  expectError(await post(key, `${PI}/${intent.id}/increment_authorization`, { amount: 9000 }), 400, { message: expect.stringContaining('maximum of 10') });
  expect((await get(key, `${PI}/${intent.id}`)).body.amount).toBe(3000);
  // Another account's intent is unknown.
  expectError(await post(newTestKey(), `${PI}/${intent.id}/increment_authorization`, { amount: 9000 }), 404, { code: 'resource_missing' });
  expectError(await post(key, `${PI}/pi_nope/increment_authorization`, { amount: 9000 }), 404, { code: 'resource_missing' });
});

test('stripe-node: paymentIntents.incrementAuthorization', async () => {
  const key = newTestKey();
  const stripe = t.stripe(key);
  const intent = await stripe.paymentIntents.create({
    amount: 1000,
    currency: 'usd',
    allowed_payment_method_types: ['card'],
    capture_method: 'manual',
    confirm: true,
    payment_method: 'pm_card_mastercard',
    payment_method_options: { card: { request_incremental_authorization: 'if_available' } },
  } as any);
  const raised = await stripe.paymentIntents.incrementAuthorization(intent.id, { amount: 1500 });
  expect(raised).toMatchObject({ amount: 1500, amount_capturable: 1500 });
  await expect(stripe.paymentIntents.incrementAuthorization(intent.id, { amount: 100 })).rejects.toMatchObject({ statusCode: 400, param: 'amount' });
});
