import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCustomer } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';

// Charges: made by PaymentIntent confirmations only (no POST /v1/charges), then retrieved,
// listed (customer, payment_intent, created, paged) and updated with charge.updated and its
// previous attributes; another account's charges are never seen.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);

const CH = '/v1/charges';
const pay = async (key: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
  const res = await post(key, '/v1/payment_intents', { amount: 2500, currency: 'usd', allowed_payment_method_types: ['card'], payment_method: 'pm_card_visa', confirm: true, ...extra }, headers);
  return res.status === 200 ? res.body : res.body.error.payment_intent;
};

test('there is no POST /v1/charges: charges come from PaymentIntents', async () => {
  const res = await post(newTestKey(), CH, { amount: 100, currency: 'usd', source: 'tok_visa' });
  expect(res.status).toBe(404);
});

test('retrieve: the charge of a payment, 404 for unknown ids and for other accounts', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const intent = await pay(key, { customer, description: 'Order 7', receipt_email: 'r@example.com', metadata: { order: '7' } });
  const res = await get(key, `${CH}/${intent.latest_charge}`);
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('GetChargesCharge', 200, res.body);
  expect(res.body).toMatchObject({
    object: 'charge',
    amount: 2500,
    currency: 'usd',
    customer,
    payment_intent: intent.id,
    description: 'Order 7',
    receipt_email: 'r@example.com',
    metadata: { order: '7' },
    refunded: false,
    disputed: false,
    livemode: false,
  });
  expectError(await get(key, `${CH}/ch_nope`), 404, { code: 'resource_missing', message: "No such charge: 'ch_nope'" });
  expectError(await get(newTestKey(), `${CH}/${intent.latest_charge}`), 404, { code: 'resource_missing' });
  const expanded = await get(key, `${CH}/${intent.latest_charge}?expand[]=customer&expand[]=payment_intent`);
  expectMatchesResponseSchema('GetChargesCharge', 200, expanded.body);
  expect(expanded.body.customer).toMatchObject({ object: 'customer', id: customer });
  expect(expanded.body.payment_intent).toMatchObject({ object: 'payment_intent', id: intent.id, status: 'succeeded' });
});

test('update: description, metadata, receipt_email, shipping and fraud_details, with charge.updated', async () => {
  const key = newTestKey();
  const intent = await pay(key, { metadata: { a: '1' } });
  const res = await post(key, `${CH}/${intent.latest_charge}`, {
    description: 'changed',
    metadata: { b: '2' },
    receipt_email: 'x@example.com',
    shipping: { name: 'Jenny', address: { line1: '1 Main', country: 'US' } },
    fraud_details: { user_report: 'safe' },
  });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostChargesCharge', 200, res.body);
  expect(res.body).toMatchObject({
    description: 'changed',
    metadata: { a: '1', b: '2' },
    receipt_email: 'x@example.com',
    shipping: { name: 'Jenny', address: { line1: '1 Main', country: 'US', city: null }, carrier: null, phone: null, tracking_number: null },
    fraud_details: { user_report: 'safe' },
  });
  const [event] = await eventsOf(key, 'charge.updated');
  expect(event.data.object.id).toBe(intent.latest_charge);
  expect(event.data.previous_attributes).toEqual({ description: null, metadata: { b: null }, receipt_email: null, shipping: null, fraud_details: { user_report: null } });
  // Nothing changed: no event.
  await post(key, `${CH}/${intent.latest_charge}`, { description: 'changed' });
  expect(await eventsOf(key, 'charge.updated')).toHaveLength(1);
  expect((await post(key, `${CH}/${intent.latest_charge}`, { fraud_details: { user_report: '' } })).body.fraud_details).toEqual({});
  expectError(await post(key, `${CH}/${intent.latest_charge}`, { fraud_details: { user_report: 'maybe' } }), 400, { param: 'fraud_details[user_report]' });
  expectError(await post(key, `${CH}/ch_nope`, { description: 'x' }), 404, { code: 'resource_missing' });
});

test('list: newest first, by customer, payment_intent and created, paged', async () => {
  const key = newTestKey();
  const customer = (await createCustomer(t, key)).id;
  const declined = await pay(key, { customer, payment_method: 'pm_card_chargeDeclined' });
  const retried = (await post(key, `/v1/payment_intents/${declined.id}/confirm`, { payment_method: 'pm_card_visa' })).body;
  const other = await pay(key);
  const all = await get(key, CH);
  expectMatchesResponseSchema('GetCharges', 200, all.body);
  expect(all.body.data.map((c: any) => c.id)).toEqual([other.latest_charge, retried.latest_charge, declined.latest_charge]);
  expect((await get(key, `${CH}?customer=${customer}`)).body.data.map((c: any) => c.status)).toEqual(['succeeded', 'failed']);
  expect((await get(key, `${CH}?payment_intent=${other.id}`)).body.data.map((c: any) => c.id)).toEqual([other.latest_charge]);
  const page = await get(key, `${CH}?limit=2`);
  expect(page.body.has_more).toBe(true);
  expect((await get(key, `${CH}?limit=2&starting_after=${page.body.data[1].id}`)).body.data.map((c: any) => c.id)).toEqual([declined.latest_charge]);
  expect((await get(key, `${CH}?created[lt]=${all.body.data[2].created}`)).body.data).toEqual([]);
  expectError(await get(key, `${CH}?starting_after=ch_nope`), 400, { code: 'resource_missing', param: 'starting_after' });
  expect((await get(newTestKey(), CH)).body.data).toEqual([]);
});

test('a connected account\'s charges are its own', async () => {
  const key = newTestKey();
  const connected = (await createAccount(t, key, { type: 'express' })).id;
  const as = { 'Stripe-Account': connected };
  const intent = await pay(key, {}, as);
  expect((await get(key, CH, as)).body.data.map((c: any) => c.id)).toEqual([intent.latest_charge]);
  expect((await get(key, CH)).body.data).toEqual([]);
});

test('the official SDK: retrieve, update and list', async () => {
  const key = newTestKey();
  const stripe = t.stripe(key);
  const intent = await stripe.paymentIntents.create({ amount: 900, currency: 'usd', payment_method: 'pm_card_mastercard', confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
  const charge = await stripe.charges.retrieve(intent.latest_charge as string);
  expect(charge).toMatchObject({ amount: 900, paid: true, payment_method_details: { card: { brand: 'mastercard' } } });
  expect((await stripe.charges.update(charge.id, { metadata: { k: 'v' } })).metadata).toEqual({ k: 'v' });
  expect((await stripe.charges.list({ payment_intent: intent.id })).data.map((c) => c.id)).toEqual([charge.id]);
  const missing = await stripe.charges.retrieve('ch_nope').catch((e) => e);
  expect(missing).toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_missing', statusCode: 404 });
});
