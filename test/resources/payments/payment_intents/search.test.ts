import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createAccount, createCustomer, createPaymentIntent } from '../../../helpers/fixtures';
import { expectError, requestsOf } from '../../../helpers/requests';

// GET /v1/payment_intents/search and GET /v1/charges/search end to end: each public query field
// against stored intents and charges, metadata through its index's containment, negation, the
// unknown-field and operator errors, the scope of a key and of Stripe-Account, and the SDK.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get } = requestsOf(() => t);
const BACK = 'http://127.0.0.1:9/back';

const ids = async (key: string, resource: 'payment_intents' | 'charges', query: string, headers?: Record<string, string>): Promise<string[]> => {
  const res = await get(key, `/v1/${resource}/search?query=${encodeURIComponent(query)}&limit=100`, headers);
  expect(res.status).toBe(200);
  return res.body.data.map((o: { id: string }) => o.id);
};

describe('PaymentIntents and their charges, searched', () => {
  const key = newTestKey();
  let customer: string;
  let paid: Record<string, any>;
  let declined: Record<string, any>;
  let open: Record<string, any>;
  let euro: Record<string, any>;
  beforeAll(async () => {
    customer = (await createCustomer(t, key)).id;
    paid = await createPaymentIntent(t, key, { amount: 2000, customer, payment_method: 'pm_card_visa', confirm: true, return_url: BACK, metadata: { order: '6735' } });
    const res = await t.http().post('/v1/payment_intents').set('Authorization', `Bearer ${key}`).type('form')
      .send({ amount: 500, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: 'true', return_url: BACK, 'metadata[order]': '42' });
    expect(res.status).toBe(402);
    declined = res.body.error.payment_intent;
    open = await createPaymentIntent(t, key, { amount: 700 });
    euro = await createPaymentIntent(t, key, { amount: 2000, currency: 'eur', payment_method: 'pm_card_mastercard', confirm: true, return_url: BACK });
  });

  test('PaymentIntents by status, amount, currency, customer and metadata, newest first', async () => {
    expect(await ids(key, 'payment_intents', 'status:"succeeded"')).toEqual([euro.id, paid.id]);
    expect(await ids(key, 'payment_intents', 'status:"requires_payment_method"')).toEqual([open.id, declined.id]);
    expect(await ids(key, 'payment_intents', 'amount>=2000 AND currency:"usd"')).toEqual([paid.id]);
    expect(await ids(key, 'payment_intents', 'amount<1000')).toEqual([open.id, declined.id]);
    expect(await ids(key, 'payment_intents', `customer:"${customer}"`)).toEqual([paid.id]);
    expect(await ids(key, 'payment_intents', "metadata['order']:'6735' OR metadata['order']:'42'")).toEqual([declined.id, paid.id]);
    expect(await ids(key, 'payment_intents', "-metadata['order']:'6735' AND amount>600")).toEqual([euro.id, open.id]);
    expect(await ids(key, 'payment_intents', "metadata['order']:null")).toEqual([euro.id, open.id]);
  });

  test('charges by status, card, refunded, disputed and the intent’s metadata', async () => {
    const [declinedCharge] = await ids(key, 'charges', 'status:"failed"');
    expect(declinedCharge).toBe(declined.latest_charge);
    expect(await ids(key, 'charges', 'payment_method_details.card.last4:"4242" AND status:"succeeded"')).toEqual([paid.latest_charge]);
    expect(await ids(key, 'charges', 'payment_method_details.card.brand:"mastercard"')).toEqual([euro.latest_charge]);
    expect(await ids(key, 'charges', 'payment_method_details.card.exp_year>2000')).toHaveLength(3);
    expect(await ids(key, 'charges', 'refunded:"false" AND disputed:"false" AND amount>=2000')).toEqual([euro.latest_charge, paid.latest_charge]);
    expect(await ids(key, 'charges', 'refunded:"true"')).toEqual([]);
    expect(await ids(key, 'charges', "metadata['order']:'6735'")).toEqual([paid.latest_charge]);
    expect(await ids(key, 'charges', `customer:"${customer}"`)).toEqual([paid.latest_charge]);
  });

  test('fields the resource does not have, and operators a field does not take, are the public 400', async () => {
    expectError(await get(key, `/v1/payment_intents/search?query=${encodeURIComponent('email:"a"')}`), 400, { type: 'invalid_request_error', param: 'query' });
    expectError(await get(key, `/v1/payment_intents/search?query=${encodeURIComponent('status~"succ"')}`), 400, { type: 'invalid_request_error', param: 'query' });
    expectError(await get(key, `/v1/charges/search?query=${encodeURIComponent('name:"a"')}`), 400, { type: 'invalid_request_error', param: 'query' });
    expectError(await get(key, `/v1/charges/search?query=${encodeURIComponent('amount>"lots"')}`), 400, { type: 'invalid_request_error', param: 'query' });
  });

  test('another key, and a connected account, see only their own', async () => {
    expect(await ids(newTestKey(), 'payment_intents', 'amount>0')).toEqual([]);
    expect(await ids(newTestKey(), 'charges', 'amount>0')).toEqual([]);
    const connected = (await createAccount(t, key, { type: 'express' })).id;
    const headers = { 'Stripe-Account': connected };
    expect(await ids(key, 'payment_intents', 'amount>0', headers)).toEqual([]);
    const own = await createPaymentIntent(t, key, { amount: 900, payment_method: 'pm_card_visa', confirm: true, return_url: BACK }, headers);
    expect(await ids(key, 'payment_intents', 'amount>0', headers)).toEqual([own.id]);
    expect(await ids(key, 'charges', 'amount>0', headers)).toEqual([own.latest_charge]);
    expect(await ids(key, 'payment_intents', 'amount:900')).toEqual([]);
  });

  test('the official SDK pages through a search', async () => {
    const stripe = t.stripe(key);
    const found: string[] = [];
    for await (const intent of stripe.paymentIntents.search({ query: 'amount>0', limit: 2 })) found.push(intent.id);
    expect(found).toEqual([euro.id, open.id, declined.id, paid.id]);
    const charges = await stripe.charges.search({ query: 'status:"succeeded"', expand: ['total_count'] });
    expect(charges.total_count).toBe(2);
  });
});
