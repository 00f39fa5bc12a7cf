import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCustomer, createPaymentMethod } from '../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { TEST_CARD_NAMES } from '../../../src/resources/payments/payment_methods/testCards';
import { authenticationTarget } from '../../../src/resources/payments/authentications/service';

// PaymentIntents end to end: the status machine, every test card's outcome (declines with their
// failed charges, Radar blocks, 3-D Secure), manual and partial captures, cancel, update, list,
// setup_future_usage and off-session payments, the return_url rule, statement descriptors,
// Connect's fields and accounts, concurrency of confirmations, and the official SDK.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);

const PI = '/v1/payment_intents';
/** A card PaymentIntent that never redirects, confirmed at once unless told otherwise. */
const card = (extra: Record<string, unknown> = {}) => ({ amount: 2000, currency: 'usd', payment_method_types: ['card'], ...extra });
const pay = (key: string, pm: string, extra: Record<string, unknown> = {}) => post(key, PI, card({ payment_method: pm, confirm: true, ...extra }));

/** Answers a pending 3-D Secure challenge the way the hosted page does (its target, in a transaction). */
async function answerChallenge(intentId: string, accountId: string, result: 'succeeded' | 'failed' | 'expired') {
  const { deps } = t.runtime as any;
  return t.runtime.prisma.$transaction(async (tx) => {
    await tx.paymentAuthentication.updateMany({ where: { intentId, status: 'pending' }, data: { status: result === 'succeeded' ? 'succeeded' : 'failed' } });
    return authenticationTarget('payment_intent').finish(tx, deps ?? (t.runtime as any), accountId, intentId, result);
  });
}

describe('create and confirm', () => {
  test('a PaymentIntent without a payment method waits for one; its client secret is shown to the secret key', async () => {
    const key = newTestKey();
    const res = await post(key, PI, card({ description: 'Order 1', metadata: { order: '1' } }));
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentIntents', 200, res.body);
    expect(res.body).toMatchObject({
      object: 'payment_intent',
      amount: 2000,
      currency: 'usd',
      status: 'requires_payment_method',
      capture_method: 'automatic_async',
      payment_method_types: ['card'],
      automatic_payment_methods: null,
      latest_charge: null,
      amount_received: 0,
      metadata: { order: '1' },
    });
    expect(res.body.client_secret).toMatch(new RegExp(`^${res.body.id}_secret_[A-Za-z0-9]+$`));
    const [event] = await eventsOf(key, 'payment_intent.created');
    expect(event.data.object).toMatchObject({ id: res.body.id, client_secret: null });
  });

  test('confirm=true with a succeeding card: succeeded, a captured charge, events', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_visa', { capture_method: 'automatic' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', amount_received: 2000, amount_capturable: 0, last_payment_error: null });
    expect(res.body.latest_charge).toMatch(/^ch_/);
    const charge = (await get(key, `/v1/charges/${res.body.latest_charge}`)).body;
    expectMatchesResponseSchema('GetChargesCharge', 200, charge);
    expect(charge).toMatchObject({
      status: 'succeeded',
      paid: true,
      captured: true,
      amount_captured: 2000,
      payment_intent: res.body.id,
      payment_method: res.body.payment_method,
      outcome: { network_status: 'approved_by_network', type: 'authorized', seller_message: 'Payment complete.', risk_level: 'normal' },
      payment_method_details: { type: 'card', card: { brand: 'visa', last4: '4242', checks: { cvc_check: null, address_line1_check: null } } },
    });
    expect(charge.balance_transaction).toMatch(/^txn_/);
    expect((await eventsOf(key, 'charge.succeeded'))[0].data.object.id).toBe(charge.id);
    expect((await eventsOf(key, 'payment_intent.succeeded'))[0].data.object.id).toBe(res.body.id);
  });
});
