import Stripe from 'stripe';
import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCustomer, createPaymentIntent, createPrice } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectNowhereAtRest } from '../../../helpers/atRest';
import { expectError, requestsOf } from '../../../helpers/requests';
import { accountOfKey } from '../../../helpers/events';

// `payment_method_data` on PaymentIntents and SetupIntents (create, update, confirm): the card is
// made in the same request and becomes the intent's payment method; Stripe.js sends it on confirm
// with a publishable key and the client secret. A create stays one statement with it.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, post } = requestsOf(() => t);
const PI = '/v1/payment_intents';
const SETI = '/v1/setup_intents';
const BACK = 'http://127.0.0.1:9/back';
const cardOnly = { amount: 2000, currency: 'usd', allowed_payment_method_types: ['card'] };
const details = (number: string, extra: Record<string, unknown> = {}) => ({ type: 'card', card: { number, exp_month: 12, exp_year: 2040, cvc: '123' }, ...extra });
const UNAVAILABLE = /^The payment method type provided: sepa_debit is invalid\. Please ensure the provided type is activated in your dashboard/;

const sdk = (key: string) => t.stripe(key);

describe('PaymentIntents', () => {
  test('create and confirm with card details: the card is made with its billing details, metadata and allow_redisplay', async () => {
    const key = newTestKey();
    const res = await post(key, PI, {
      ...cardOnly,
      confirm: true,
      payment_method_data: details('4000056655665556', { billing_details: { name: 'Jenny Rosen', address: { postal_code: '94103' } }, metadata: { from: 'pmd' }, allow_redisplay: 'always' }),
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentIntents', 200, res.body);
    expect(res.body).toMatchObject({ status: 'succeeded', amount_received: 2000, payment_method: expect.stringMatching(/^pm_/) });
    const pm = (await get(key, `/v1/payment_methods/${res.body.payment_method}`)).body;
    expect(pm).toMatchObject({
      allow_redisplay: 'always',
      billing_details: { name: 'Jenny Rosen', address: { postal_code: '94103', line1: null } },
      metadata: { from: 'pmd' },
      card: { last4: '5556', exp_month: 12, exp_year: 2040, checks: { cvc_check: 'unchecked' } },
      customer: null,
    });
    const charge = (await get(key, `/v1/charges/${res.body.latest_charge}`)).body;
    expect(charge).toMatchObject({ payment_method: pm.id, payment_method_details: { card: { checks: { cvc_check: 'pass' } } } });
    // The number and the CVC are sealed, never at rest in the clear.
    await expectNowhereAtRest(t, '4000056655665556', [pm.id]);
  });

  test('a create with payment_method_data is one statement: the card, the intent, its charge and events together', async () => {
    const key = newTestKey();
    const texts: string[] = [];
    const query = t.runtime.sql.query.bind(t.runtime.sql);
    const spy = jest.spyOn(t.runtime.sql, 'query').mockImplementation((statement) => {
      if (statement.text.includes('INSERT INTO payment_intents')) texts.push(statement.text);
      return query(statement);
    });
    let res;
    try {
      res = await post(key, PI, { ...cardOnly, confirm: true, payment_method_data: { type: 'card', card: { token: 'tok_mastercard' } } });
    } finally {
      spy.mockRestore();
    }
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('succeeded');
    expect(texts).toHaveLength(1);
    for (const part of ['INSERT INTO payment_methods', 'INSERT INTO charges', 'INSERT INTO events']) expect(texts[0]).toContain(part);
    expect((await get(key, `/v1/payment_methods/${res.body.payment_method}`)).body.card).toMatchObject({ brand: 'mastercard', last4: '4444' });
  });

  test('a declined card leaves the intent in requires_payment_method with last_payment_error', async () => {
    const key = newTestKey();
    const res = await post(key, PI, { ...cardOnly, confirm: true, payment_method_data: details('4000000000000002') });
    expectError(res, 402, { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
    const intent = (await get(key, `${PI}/${res.body.error.payment_intent.id}`)).body;
    expect(intent).toMatchObject({ status: 'requires_payment_method', payment_method: null });
    expect(intent.last_payment_error).toMatchObject({ code: 'card_declined', decline_code: 'generic_decline', payment_method: { id: res.body.error.payment_method.id, card: { last4: '0002' } } });
  });

  test('a 3-D Secure card gives requires_action', async () => {
    const key = newTestKey();
    const res = await post(key, PI, { ...cardOnly, confirm: true, return_url: BACK, payment_method_data: details('4000002760003184') });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'requires_action', next_action: { type: 'redirect_to_url' } });
  });

  test('update sets the card; confirm with a publishable key and the client secret, as Stripe.js does', async () => {
    const key = newTestKey();
    const pk = key.replace(/^sk_/, 'pk_');
    const intent = await createPaymentIntent(t, key, { amount: 1500 });
    const updated = await post(key, `${PI}/${intent.id}`, { payment_method_data: { type: 'card', card: { token: 'tok_visa' } } });
    expect(updated.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentIntentsIntent', 200, updated.body);
    expect(updated.body).toMatchObject({ status: 'requires_confirmation', payment_method: expect.stringMatching(/^pm_/) });
    // Stripe.js: confirmCardPayment(clientSecret, {payment_method: {card, billing_details}}) sends payment_method_data.
    const confirmed = await post(pk, `${PI}/${intent.id}/confirm`, {
      client_secret: intent.client_secret,
      use_stripe_sdk: true,
      payment_method_data: { ...details('5555555555554444'), billing_details: { email: 'j@example.com' }, payment_user_agent: 'stripe.js/abc', time_on_page: 1234, guid: 'g', muid: 'm', sid: 's' },
    });
    expect(confirmed.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentIntentsIntentConfirm', 200, confirmed.body);
    expect(confirmed.body).toMatchObject({ status: 'succeeded', client_secret: intent.client_secret });
    expect(confirmed.body.payment_method).not.toBe(updated.body.payment_method);
    const pm = (await get(key, `/v1/payment_methods/${confirmed.body.payment_method}`)).body;
    expect(pm).toMatchObject({ billing_details: { email: 'j@example.com' }, card: { brand: 'mastercard' } });
  });

  test('a publishable key with a wrong client secret makes no card', async () => {
    const key = newTestKey();
    const pk = key.replace(/^sk_/, 'pk_');
    const intent = await createPaymentIntent(t, key);
    const other = await createPaymentIntent(t, key);
    // This key's cards only: other test files make cards in the same database meanwhile.
    const cards = async () => t.runtime.prisma.paymentMethod.count({ where: { accountId: await accountOfKey(t.runtime, key) } });
    const before = await cards();
    expectError(await post(pk, `${PI}/${intent.id}/confirm`, { client_secret: other.client_secret, payment_method_data: details('4242424242424242') }), 400, { param: 'client_secret' });
    expect(await cards()).toBe(before);
    expect((await get(key, `${PI}/${intent.id}`)).body.status).toBe('requires_payment_method');
  });

  test('bad input: another type, both payment_method and payment_method_data, a live or bad card, a missing type, unknown members', async () => {
    const key = newTestKey();
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { type: 'sepa_debit', sepa_debit: { iban: 'DE89370400440532013000' } } }), 400, {
      type: 'invalid_request_error',
      code: 'payment_intent_invalid_parameter',
      param: 'payment_method_data[type]',
      message: expect.stringMatching(UNAVAILABLE),
    });
    expectError(await post(key, PI, { ...cardOnly, payment_method: 'pm_card_visa', payment_method_data: { type: 'card', card: { token: 'tok_visa' } } }), 400, {
      code: 'parameters_exclusive',
    });
    expectError(await post(key, PI, { ...cardOnly, confirm: true, payment_method_data: details('4111111111111111') }), 402, { code: 'card_declined', decline_code: 'test_mode_live_card' });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: details('4242424242424241') }), 402, { code: 'incorrect_number', param: 'payment_method_data[card][number]' });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { type: 'card', card: { number: '4242424242424242', exp_month: 13, exp_year: 2040 } } }), 402, {
      code: 'invalid_expiry_month',
      param: 'payment_method_data[card][exp_month]',
    });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { type: 'card', card: { number: '4242424242424242', exp_year: 2040 } } }), 400, {
      code: 'parameter_missing',
      param: 'payment_method_data[card][exp_month]',
    });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { type: 'card' } }), 400, { code: 'parameter_missing', param: 'payment_method_data[card]' });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { type: 'card', card: { token: 'tok_nope' } } }), 400, { code: 'resource_missing', param: 'payment_method_data[card][token]' });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { card: { token: 'tok_visa' } } }), 400, { code: 'parameter_missing', param: 'payment_method_data[type]' });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { type: 'card', card: { token: 'tok_visa', cvv: '1' } } }), 400, { code: 'parameter_unknown' });
    expectError(await post(key, PI, { ...cardOnly, payment_method_data: { type: 'card', allow_redisplay: 'sometimes', card: { token: 'tok_visa' } } }), 400, { param: 'payment_method_data[allow_redisplay]' });
    // Nothing was made by the refused requests.
    expect((await get(key, '/v1/payment_intents')).body.data).toHaveLength(0);
  });

  test('an intent that succeeded takes no payment_method_data; another account cannot confirm this one', async () => {
    const key = newTestKey();
    const paid = (await post(key, PI, { ...cardOnly, confirm: true, payment_method: 'pm_card_visa' })).body;
    expectError(await post(key, `${PI}/${paid.id}`, { payment_method_data: { type: 'card', card: { token: 'tok_visa' } } }), 400, { code: 'payment_intent_unexpected_state' });
    const intent = await createPaymentIntent(t, key);
    expectError(await post(newTestKey(), `${PI}/${intent.id}/confirm`, { payment_method_data: { type: 'card', card: { token: 'tok_visa' } } }), 404, { code: 'resource_missing' });
  });

  test('stripe-node: paymentIntents.create/confirm with payment_method_data', async () => {
    const key = newTestKey();
    const stripe = sdk(key);
    const created = await stripe.paymentIntents.create({
      amount: 1000,
      currency: 'usd',
      allowed_payment_method_types: ['card'],
      payment_method_data: { type: 'card', card: { token: 'tok_amex' }, billing_details: { name: 'A' }, metadata: { a: '1' }, allow_redisplay: 'limited' },
    } as Stripe.PaymentIntentCreateParams);
    expect(created.status).toBe('requires_confirmation');
    const confirmed = await stripe.paymentIntents.confirm(created.id, { payment_method_data: { type: 'card', card: { token: 'tok_visa' } } as any, expand: ['payment_method'] });
    expect(confirmed.status).toBe('succeeded');
    expect((confirmed.payment_method as Stripe.PaymentMethod).card?.brand).toBe('visa');
    await expect(
      stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method_data: { type: 'ideal' } } as Stripe.PaymentIntentCreateParams),
    ).rejects.toMatchObject({ statusCode: 400, code: 'payment_intent_invalid_parameter', param: 'payment_method_data[type]' });
  });
});

describe('a subscription paid with a new card', () => {
  test('confirming its first invoice with payment_method_data attaches the card to the customer; the subscription then takes it as its default', async () => {
    const key = newTestKey();
    const pk = key.replace(/^sk_/, 'pk_');
    const stripe = t.stripe(key);
    const customer = await createCustomer(t, key, { email: 'jenny@example.test' });
    const price = await createPrice(t, key, { unit_amount: 1500, recurring: { interval: 'month' } });
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }], payment_behavior: 'default_incomplete', expand: ['latest_invoice.confirmation_secret'] });
    const secret = (sub.latest_invoice as Stripe.Invoice).confirmation_secret!.client_secret;
    const intentId = secret.split('_secret_')[0];
    expect((await stripe.paymentIntents.retrieve(intentId)).setup_future_usage).toBe('off_session');
    // What Stripe.js's confirmCardPayment sends for a card Element: the card's details, with the publishable key.
    const confirmed = await post(pk, `${PI}/${intentId}/confirm`, { client_secret: secret, use_stripe_sdk: true, payment_method_data: details('4242424242424242', { billing_details: { name: 'Jenny' } }) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.status).toBe('succeeded');
    const card = confirmed.body.payment_method;
    expect((await stripe.paymentMethods.retrieve(card)).customer).toBe(customer.id);
    const [attachedEvent] = await (await get(key, '/v1/events?type=payment_method.attached')).body.data;
    expect(attachedEvent.data.object).toMatchObject({ id: card, customer: customer.id });
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('active');
    const updated = await stripe.subscriptions.update(sub.id, { default_payment_method: card });
    expect(updated.default_payment_method).toBe(card);
    expect((await stripe.customers.listPaymentMethods(customer.id)).data.map((p) => p.id)).toEqual([card]);
  });
});

describe('SetupIntents', () => {
  const cardSetup = { allowed_payment_method_types: ['card'] };

  test('create with confirm: the card is made and attached to the customer', async () => {
    const key = newTestKey();
    const customer = await createCustomer(t, key);
    const res = await post(key, SETI, { ...cardSetup, customer: customer.id, confirm: true, payment_method_data: details('4242424242424242', { allow_redisplay: 'always' }) });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostSetupIntents', 200, res.body);
    expect(res.body).toMatchObject({ status: 'succeeded', payment_method: expect.stringMatching(/^pm_/) });
    expect((await get(key, `/v1/payment_methods/${res.body.payment_method}`)).body).toMatchObject({ customer: customer.id, allow_redisplay: 'always' });
  });

  test('update then confirm with a publishable key; a declining card fails the setup', async () => {
    const key = newTestKey();
    const pk = key.replace(/^sk_/, 'pk_');
    const seti = (await post(key, SETI, cardSetup)).body;
    const updated = await post(key, `${SETI}/${seti.id}`, { payment_method_data: { type: 'card', card: { token: 'tok_visa' } } });
    expect(updated.status).toBe(200);
    expect(updated.body.status).toBe('requires_confirmation');
    const declined = await post(pk, `${SETI}/${seti.id}/confirm`, { client_secret: seti.client_secret, payment_method_data: details('4000000000000002') });
    expectError(declined, 402, { type: 'card_error', code: 'card_declined' });
    const after = (await get(key, `${SETI}/${seti.id}`)).body;
    expect(after).toMatchObject({ status: 'requires_payment_method', last_setup_error: { code: 'card_declined' } });
    const confirmed = await post(pk, `${SETI}/${seti.id}/confirm`, { client_secret: seti.client_secret, payment_method_data: details('4000002760003184'), return_url: BACK });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.status).toBe('requires_action');
  });

  test('bad input: another type, both given', async () => {
    const key = newTestKey();
    expectError(await post(key, SETI, { payment_method_data: { type: 'sepa_debit' } }), 400, {
      code: 'setup_intent_invalid_parameter',
      param: 'payment_method_data[type]',
      message: expect.stringMatching(UNAVAILABLE),
    });
    const seti = (await post(key, SETI, cardSetup)).body;
    expectError(await post(key, `${SETI}/${seti.id}/confirm`, { payment_method: 'pm_card_visa', payment_method_data: { type: 'card', card: { token: 'tok_visa' } } }), 400, {
      code: 'parameters_exclusive',
    });
    expect((await get(key, `${SETI}/${seti.id}`)).body.status).toBe('requires_payment_method');
  });

  test('stripe-node: setupIntents.create with payment_method_data', async () => {
    const key = newTestKey();
    const seti = await sdk(key).setupIntents.create({ allowed_payment_method_types: ['card'], confirm: true, payment_method_data: { type: 'card', card: { token: 'tok_visa' } } } as any);
    expect(seti.status).toBe('succeeded');
  });
});
