import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createAccount, createCustomer, createPaymentMethod } from '../../helpers/fixtures';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { TEST_CARD_NAMES } from '../../../src/resources/payments/payment_methods/testCards';
import { authenticationTarget } from '../../../src/resources/payments/authentications/service';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import { countPostgres } from '../../helpers/postgresCounts';

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
const card = (extra: Record<string, unknown> = {}) => ({ amount: 2000, currency: 'usd', allowed_payment_method_types: ['card'], ...extra });
const pay = (key: string, pm: string, extra: Record<string, unknown> = {}) => post(key, PI, card({ payment_method: pm, confirm: true, ...extra }));

/** Answers a pending 3-D Secure challenge as the hosted page does: the challenge ends and the intent's target moves it on. */
async function answerChallenge(intentId: string, result: 'succeeded' | 'failed' | 'expired') {
  const { accountId } = await t.runtime.prisma.paymentIntent.findUniqueOrThrow({ where: { id: intentId } });
  const answered = await t.runtime.prisma.$transaction(async (tx) => {
    const closed = await tx.paymentAuthentication.updateMany({ where: { intentId, status: 'pending' }, data: { status: result, answeredAt: 1 } });
    expect(closed.count).toBe(1);
    return authenticationTarget('payment_intent').finish(tx, t.runtime, accountId, intentId, result);
  });
  return answered;
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
      allowed_payment_method_types: ['card'],
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

describe('declines: 402 card_error, a failed charge with its outcome, the intent back to requires_payment_method', () => {
  const DECLINES: [string, string, string, string, string][] = [
    // [test card name, code, decline_code, message, outcome type]
    ['chargeDeclined', 'card_declined', 'generic_decline', 'Your card was declined.', 'issuer_declined'],
    ['chargeDeclinedInsufficientFunds', 'card_declined', 'insufficient_funds', 'Your card has insufficient funds.', 'issuer_declined'],
    ['chargeDeclinedLostCard', 'card_declined', 'lost_card', 'Your card was declined.', 'issuer_declined'],
    ['chargeDeclinedStolenCard', 'card_declined', 'stolen_card', 'Your card was declined.', 'issuer_declined'],
    ['chargeDeclinedExpiredCard', 'expired_card', 'expired_card', 'Your card has expired.', 'issuer_declined'],
    ['chargeDeclinedIncorrectCvc', 'incorrect_cvc', 'incorrect_cvc', "Your card's security code is incorrect.", 'issuer_declined'],
    ['chargeDeclinedProcessingError', 'processing_error', 'processing_error', 'An error occurred while processing your card. Try again in a little bit.', 'issuer_declined'],
    ['chargeDeclinedVelocityLimitExceeded', 'card_declined', 'card_velocity_exceeded', 'Your card was declined.', 'issuer_declined'],
    ['chargeCustomerFail', 'card_declined', 'generic_decline', 'Your card was declined.', 'issuer_declined'],
    ['chargeDeclinedFraudulent', 'card_declined', 'fraudulent', 'Your card was declined.', 'blocked'],
    ['riskLevelHighest', 'card_declined', 'fraudulent', 'Your card was declined.', 'blocked'],
  ];
  test.each(DECLINES)('pm_card_%s: %s / %s', async (name, code, declineCode, message, type) => {
    const key = newTestKey();
    const res = await pay(key, `pm_card_${name}`);
    expectError(res, 402, { type: 'card_error', code, decline_code: declineCode, message });
    const { charge, payment_intent: intent, payment_method: pm } = res.body.error;
    expect(charge).toMatch(/^ch_/);
    expect(pm).toMatchObject({ object: 'payment_method', card: { last4: TEST_CARD_NAMES[name].slice(-4) } });
    expectMatchesResponseSchema('PostPaymentIntents', 200, intent);
    expect(intent).toMatchObject({ status: 'requires_payment_method', payment_method: null, latest_charge: charge, amount_received: 0 });
    expect(intent.last_payment_error).toMatchObject({ type: 'card_error', code, decline_code: declineCode, message, charge, payment_method: { id: pm.id } });
    const failed = (await get(key, `/v1/charges/${charge}`)).body;
    expectMatchesResponseSchema('GetChargesCharge', 200, failed);
    expect(failed).toMatchObject({ status: 'failed', paid: false, captured: false, amount_captured: 0, failure_code: code, failure_message: message, balance_transaction: null });
    if (type === 'blocked') {
      expect(failed.outcome).toMatchObject({ type: 'blocked', network_status: 'not_sent_to_network', reason: 'highest_risk_level', risk_level: 'highest' });
    } else {
      expect(failed.outcome).toMatchObject({ type: 'issuer_declined', network_status: 'declined_by_network', reason: declineCode, risk_level: 'normal' });
    }
    // The decline was recorded: the retrieve agrees, and both events were written.
    expect((await get(key, `${PI}/${intent.id}`)).body).toMatchObject({ status: 'requires_payment_method', latest_charge: charge });
    expect((await eventsOf(key, 'charge.failed'))[0].data.object.id).toBe(charge);
    expect((await eventsOf(key, 'payment_intent.payment_failed'))[0].data.object.last_payment_error.code).toBe(code);
  });

  test('after a decline, another card succeeds on the same intent', async () => {
    const key = newTestKey();
    const declined = await pay(key, 'pm_card_chargeDeclined', { capture_method: 'automatic' });
    const id = declined.body.error.payment_intent.id;
    const retried = await post(key, `${PI}/${id}/confirm`, { payment_method: 'pm_card_visa' });
    expect(retried.body).toMatchObject({ status: 'succeeded', last_payment_error: null, amount_received: 2000 });
    expect(retried.body.latest_charge).not.toBe(declined.body.error.charge);
    expect((await get(key, `/v1/charges?payment_intent=${id}`)).body.data.map((c: any) => c.status)).toEqual(['succeeded', 'failed']);
  });

  test('elevated risk succeeds with risk_level elevated', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_riskLevelElevated');
    expect(res.body.status).toBe('succeeded');
    const charge = (await get(key, `/v1/charges/${res.body.latest_charge}`)).body;
    expect(charge.outcome).toMatchObject({ type: 'authorized', network_status: 'approved_by_network', risk_level: 'elevated', seller_message: 'Payment complete.' });
  });

  test.each([
    ['4242424242424242', { cvc: '123' }, { line1: '1 Main', postal_code: '94103' }, { cvc_check: 'pass', address_line1_check: 'pass', address_postal_code_check: 'pass' }],
    ['4242424242424242', {}, null, { cvc_check: null, address_line1_check: null, address_postal_code_check: null }],
    ['4000000000000010', {}, { line1: '1 Main', postal_code: '94103' }, { address_line1_check: 'fail', address_postal_code_check: 'fail' }],
    ['4000000000000028', {}, { line1: '1 Main', postal_code: '94103' }, { address_line1_check: 'fail', address_postal_code_check: 'pass' }],
    ['4000000000000036', {}, { line1: '1 Main', postal_code: '94103' }, { address_line1_check: 'pass', address_postal_code_check: 'fail' }],
    ['4000000000000044', {}, { line1: '1 Main', postal_code: '94103' }, { address_line1_check: 'unavailable', address_postal_code_check: 'unavailable' }],
  ])('card %s: the checks on its charge', async (number, cvc, address, checks) => {
    const key = newTestKey();
    const pm = await createPaymentMethod(t, key, { card: { number, exp_month: 12, exp_year: 2040, ...cvc }, ...(address ? { billing_details: { address } } : {}) });
    const res = await pay(key, pm.id);
    expect(res.body.status).toBe('succeeded');
    expect((await get(key, `/v1/charges/${res.body.latest_charge}`)).body.payment_method_details.card.checks).toMatchObject(checks);
  });

  test('the CVC check fails for 4000000000000101 given a CVC, and the payment declines', async () => {
    const key = newTestKey();
    const pm = await createPaymentMethod(t, key, { card: { number: '4000000000000101', exp_month: 12, exp_year: 2040, cvc: '123' } });
    const res = await pay(key, pm.id);
    expectError(res, 402, { code: 'incorrect_cvc' });
    expect((await get(key, `/v1/charges/${res.body.error.charge}`)).body.payment_method_details.card.checks.cvc_check).toBe('fail');
  });

  test('a declined confirmation retried with its idempotency key replays the 402, and nothing is charged twice', async () => {
    const key = newTestKey();
    const created = (await post(key, PI, card({ payment_method: 'pm_card_chargeDeclinedInsufficientFunds' }))).body;
    const headers = { 'Idempotency-Key': `confirm-${created.id}` };
    const first = await post(key, `${PI}/${created.id}/confirm`, {}, headers);
    const again = await post(key, `${PI}/${created.id}/confirm`, {}, headers);
    expect(first.status).toBe(402);
    expect(again.status).toBe(402);
    expect(again.body.error.charge).toBe(first.body.error.charge);
    expect((await get(key, `/v1/charges?payment_intent=${created.id}`)).body.data).toHaveLength(1);
  });
});

describe('3-D Secure', () => {
  test('a card that always asks: requires_action with a redirect to the hosted page; completed, it succeeds', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_authenticationRequired', { return_url: 'http://127.0.0.1:9/return', capture_method: 'automatic' });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentIntents', 200, res.body);
    expect(res.body).toMatchObject({ status: 'requires_action', latest_charge: null, next_action: { type: 'redirect_to_url', redirect_to_url: { return_url: 'http://127.0.0.1:9/return' } } });
    expect(res.body.next_action.redirect_to_url.url).toMatch(/\/three_d_secure\/[A-Za-z0-9]{48}$/);
    // Shown again on retrieve, never in the event (stored in the clear).
    expect((await get(key, `${PI}/${res.body.id}`)).body.next_action).toEqual(res.body.next_action);
    const [event] = await eventsOf(key, 'payment_intent.requires_action');
    expect(event.data.object).toMatchObject({ id: res.body.id, status: 'requires_action', next_action: null, client_secret: null });

    const { redirectParams, eventIds } = await answerChallenge(res.body.id, 'succeeded');
    expect(redirectParams).toEqual({ payment_intent: res.body.id, payment_intent_client_secret: res.body.client_secret, redirect_status: 'succeeded' });
    expect(eventIds).toHaveLength(2);
    const after = (await get(key, `${PI}/${res.body.id}`)).body;
    expect(after).toMatchObject({ status: 'succeeded', next_action: null, amount_received: 2000 });
    const charge = (await get(key, `/v1/charges/${after.latest_charge}`)).body;
    expect(charge.payment_method_details.card.three_d_secure).toMatchObject({ result: 'authenticated', authentication_flow: 'challenge' });
  });

  test('without a return URL the next action is use_stripe_sdk; a 3DS2 card with manual capture waits in requires_capture', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_threeDSecure2Required', { capture_method: 'manual' });
    expect(res.body.next_action).toMatchObject({ type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect' } });
    await answerChallenge(res.body.id, 'succeeded');
    expect((await get(key, `${PI}/${res.body.id}`)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 2000 });
  });

  test('a failed or expired challenge: requires_payment_method with payment_intent_authentication_failure', async () => {
    const key = newTestKey();
    for (const result of ['failed', 'expired'] as const) {
      const res = await pay(key, 'pm_card_authenticationRequired');
      const { redirectParams } = await answerChallenge(res.body.id, result);
      expect(redirectParams.redirect_status).toBe('failed');
      const after = (await get(key, `${PI}/${res.body.id}`)).body;
      expect(after).toMatchObject({ status: 'requires_payment_method', payment_method: null, latest_charge: null, next_action: null });
      expect(after.last_payment_error).toMatchObject({
        code: 'payment_intent_authentication_failure',
        message: 'We are unable to authenticate your payment method. Please choose a different payment method and try again.',
        payment_method: { object: 'payment_method' },
      });
    }
    expect(await eventsOf(key, 'payment_intent.payment_failed')).toHaveLength(2);
  });

  test('4000008260003178 declines for insufficient funds once authenticated', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_authenticationRequiredChargeDeclinedInsufficientFunds');
    expect(res.body.status).toBe('requires_action');
    const { redirectParams } = await answerChallenge(res.body.id, 'succeeded');
    expect(redirectParams.redirect_status).toBe('failed');
    const after = (await get(key, `${PI}/${res.body.id}`)).body;
    expect(after).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' } });
    expect((await get(key, `/v1/charges/${after.latest_charge}`)).body).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
  });

  test('off-session or error_on_requires_action: 402 authentication_required and a failed charge', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    for (const extra of [{ off_session: true, customer }, { error_on_requires_action: true }]) {
      const res = await pay(key, 'pm_card_authenticationRequired', extra);
      expectError(res, 402, { type: 'card_error', code: 'authentication_required', decline_code: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' });
      expect(res.body.error.payment_intent).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'authentication_required', decline_code: 'authentication_required' } });
      expect((await get(key, `/v1/charges/${res.body.error.charge}`)).body.status).toBe('failed');
    }
  });

  test('4000002500003155: authenticated once with setup_future_usage=off_session, it then pays off-session without asking', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const pm = (await createPaymentMethod(t, key, { card: { token: 'tok_authenticationRequiredOnSetup' } })).id;
    // Off-session before it was set up: refused.
    expectError(await pay(key, pm, { customer, off_session: true }), 402, { code: 'authentication_required' });
    const first = await pay(key, pm, { customer, setup_future_usage: 'off_session' });
    expect(first.body.status).toBe('requires_action');
    await answerChallenge(first.body.id, 'succeeded');
    expect((await get(key, `${PI}/${first.body.id}`)).body.status).toBe('succeeded');
    expect((await get(key, `/v1/payment_methods/${pm}`)).body.customer).toBe(customer);
    expect((await eventsOf(key, 'payment_method.attached'))[0].data.object).toMatchObject({ id: pm, customer });
    expect((await t.runtime.prisma.paymentMethod.findUniqueOrThrow({ where: { id: pm } })).offSessionReady).toBe(true);

    const offSession = await pay(key, pm, { customer, off_session: true });
    expect(offSession.body.status).toBe('succeeded');
    // On-session payments still ask.
    expect((await pay(key, pm, { customer })).body.status).toBe('requires_action');
  });

  test('confirmation_method=manual: after the challenge it waits for the server to confirm, which charges without asking again', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_authenticationRequired', { confirmation_method: 'manual' });
    await answerChallenge(res.body.id, 'succeeded');
    expect((await get(key, `${PI}/${res.body.id}`)).body.status).toBe('requires_confirmation');
    const confirmed = await post(key, `${PI}/${res.body.id}/confirm`, {});
    expect(confirmed.body.status).toBe('succeeded');
  });

  test('a new confirmation or a cancel ends the open challenge', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_authenticationRequired');
    await post(key, `${PI}/${res.body.id}/cancel`, {});
    expect(await t.runtime.prisma.paymentAuthentication.count({ where: { intentId: res.body.id, status: 'pending' } })).toBe(0);
    expect((await get(key, `${PI}/${res.body.id}`)).body).toMatchObject({ status: 'canceled', next_action: null });
  });
});

describe('capture and cancel', () => {
  test('manual capture: requires_capture, then a partial capture releases the rest', async () => {
    const key = newTestKey();
    const res = await pay(key, 'pm_card_visa', { capture_method: 'manual' });
    expect(res.body).toMatchObject({ status: 'requires_capture', amount_capturable: 2000, amount_received: 0 });
    const authorized = (await get(key, `/v1/charges/${res.body.latest_charge}`)).body;
    expect(authorized).toMatchObject({ status: 'succeeded', paid: true, captured: false, amount_captured: 0 });
    expect((await eventsOf(key, 'payment_intent.amount_capturable_updated'))[0].data.object.amount_capturable).toBe(2000);
    expectError(await post(key, `${PI}/${res.body.id}/capture`, { amount_to_capture: 2001 }), 400, { code: 'amount_too_large', param: 'amount_to_capture' });

    const captured = await post(key, `${PI}/${res.body.id}/capture`, { amount_to_capture: 1500 });
    expect(captured.status).toBe(200);
    expectMatchesResponseSchema('PostPaymentIntentsIntentCapture', 200, captured.body);
    expect(captured.body).toMatchObject({ status: 'succeeded', amount_received: 1500, amount_capturable: 0 });
    const charge = (await get(key, `/v1/charges/${res.body.latest_charge}`)).body;
    expect(charge).toMatchObject({ captured: true, amount_captured: 1500, amount_refunded: 500, refunded: false });
    expect((await eventsOf(key, 'charge.captured'))[0].data.object.id).toBe(charge.id);
    expectError(await post(key, `${PI}/${res.body.id}/capture`, {}), 400, {
      code: 'payment_intent_unexpected_state',
      message: 'This PaymentIntent could not be captured because it has a status of succeeded. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.',
    });
  });

  test('cancel: reasons, the statuses that allow it, and an uncaptured charge released', async () => {
    const key = newTestKey();
    const open = (await post(key, PI, card())).body;
    const canceled = await post(key, `${PI}/${open.id}/cancel`, { cancellation_reason: 'requested_by_customer' });
    expectMatchesResponseSchema('PostPaymentIntentsIntentCancel', 200, canceled.body);
    expect(canceled.body).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer' });
    expect(canceled.body.canceled_at).toEqual(expect.any(Number));
    expect((await eventsOf(key, 'payment_intent.canceled'))[0].data.object.id).toBe(open.id);
    expectError(await post(key, `${PI}/${open.id}/confirm`, { payment_method: 'pm_card_visa' }), 400, {
      code: 'payment_intent_unexpected_state',
      message: 'You cannot confirm this PaymentIntent because it has a status of canceled. Only a PaymentIntent with one of the following statuses may be confirmed: requires_confirmation, requires_payment_method, requires_action.',
    });

    const held = (await pay(key, 'pm_card_visa', { capture_method: 'manual' })).body;
    await post(key, `${PI}/${held.id}/cancel`, {});
    expect((await get(key, `/v1/charges/${held.latest_charge}`)).body).toMatchObject({ captured: false, amount_refunded: 2000, refunded: true });

    const paid = (await pay(key, 'pm_card_visa')).body;
    const refused = await post(key, `${PI}/${paid.id}/cancel`, {});
    expectError(refused, 400, {
      code: 'payment_intent_unexpected_state',
      message: 'You cannot cancel this PaymentIntent because it has a status of succeeded. Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, requires_confirmation, requires_action, processing.',
    });
    expect(refused.body.error.payment_intent).toMatchObject({ id: paid.id, status: 'succeeded' });
    expectError(await post(key, `${PI}/${paid.id}/cancel`, { cancellation_reason: 'bored' }), 400, { param: 'cancellation_reason' });
  });
});

describe('confirmation rules', () => {
  test('confirming a succeeded intent, or one without a payment method, is refused with the intent in the error', async () => {
    const key = newTestKey();
    const paid = (await pay(key, 'pm_card_visa')).body;
    const again = await post(key, `${PI}/${paid.id}/confirm`, {});
    expectError(again, 400, { code: 'payment_intent_unexpected_state', message: 'You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.' });
    expect(again.body.error.payment_intent.id).toBe(paid.id);
    const open = (await post(key, PI, card())).body;
    expectError(await post(key, `${PI}/${open.id}/confirm`, {}), 400, { code: 'payment_intent_unexpected_state' });
  });

  test('automatic payment methods that may redirect need a return_url to confirm', async () => {
    const key = newTestKey();
    const base = { amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true };
    const refused = await post(key, PI, base);
    expectError(refused, 400, { type: 'invalid_request_error' });
    expect(refused.body.error.message).toMatch(/^A `return_url` must be specified because this Payment Intent is configured to automatically accept the payment methods enabled in the Dashboard/);
    expect((await post(key, PI, { ...base, return_url: 'http://127.0.0.1:9/done' })).body).toMatchObject({ status: 'succeeded', automatic_payment_methods: { enabled: true, allow_redirects: 'always' } });
    expect((await post(key, PI, { ...base, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } })).body.status).toBe('succeeded');
    // Before 2023-08-16, no payment method types meant cards, which never redirect (another account: the first version sent is pinned).
    const old = await post(newTestKey(), PI, base, { 'Stripe-Version': '2022-11-15' });
    expect(old.body).toMatchObject({ status: 'succeeded', automatic_payment_methods: null, payment_method_types: ['card'] });
    expectError(await post(key, PI, { ...base, allowed_payment_method_types: ['card'], automatic_payment_methods: { enabled: true } }), 400, { code: 'parameters_exclusive' });
    // Allowed types are filtered to the available ones; none available is refused.
    expect((await post(key, PI, { ...base, allowed_payment_method_types: ['ideal', 'card'] })).body).toMatchObject({ status: 'succeeded', payment_method_types: ['card'], allowed_payment_method_types: ['ideal', 'card'] });
    expectError(await post(key, PI, { ...base, allowed_payment_method_types: ['ideal'] }), 400, { param: 'allowed_payment_method_types' });
    expectError(await post(key, PI, { ...base, excluded_payment_method_types: ['card'] }), 400, { param: 'excluded_payment_method_types' });
    const excluding = await post(key, PI, { ...base, excluded_payment_method_types: ['ideal'], return_url: 'http://127.0.0.1:9/done' });
    expect(excluding.body).toMatchObject({ status: 'succeeded', excluded_payment_method_types: ['ideal'], automatic_payment_methods: { enabled: true } });
  });

  test('payment_method_types: refused today; before 2026-09-30.endive it is the explicit list, every type checked', async () => {
    const key = newTestKey();
    const base = { amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true };
    const today = { 'Stripe-Version': LATEST_API_VERSION };
    expectError(await post(key, PI, { ...base, payment_method_types: ['card'] }, today), 400, { code: 'payment_method_types_no_longer_supported', param: 'payment_method_types' });
    const at = { 'Stripe-Version': '2026-08-26.dahlia' };
    const open = (await post(key, PI, { amount: 1000, currency: 'usd' })).body;
    expectError(await post(key, `${PI}/${open.id}`, { payment_method_types: ['card'] }, today), 400, { code: 'payment_method_types_no_longer_supported' });
    expect((await post(key, PI, { ...base, payment_method_types: ['card'] }, at)).body).toMatchObject({ status: 'succeeded', payment_method_types: ['card'], automatic_payment_methods: null });
    expectError(await post(key, PI, { ...base, payment_method_types: ['card', 'ideal'] }, at), 400, { code: 'payment_intent_invalid_parameter', param: 'payment_method_types' });
    expectError(await post(key, PI, { ...base, payment_method_types: ['card'], allowed_payment_method_types: ['card'] }, at), 400, { code: 'parameters_exclusive' });
    const updated = await post(key, `${PI}/${open.id}`, { payment_method_types: ['card'] }, at);
    expect(updated.body).toMatchObject({ payment_method_types: ['card'], automatic_payment_methods: null });
  });

  test('payment_method_types of the wrong shape at an older version is a 400 that says not to retry, never a 500', async () => {
    const key = newTestKey();
    const open = (await post(key, PI, { amount: 1000, currency: 'usd' })).body;
    for (const path of [PI, `${PI}/${open.id}`]) {
      const res = await post(key, path, 'amount=1000&currency=usd&payment_method_types[0][a]=1', { 'Stripe-Version': '2024-04-10' });
      expectError(res, 400, { code: 'parameter_unknown', param: 'payment_method_types[0][a]' });
      expect(res.headers['stripe-should-retry']).not.toBe('true');
      expectError(await post(key, path, 'payment_method_types=card', { 'Stripe-Version': '2024-04-10' }), 400, { param: 'payment_method_types' });
    }
  });

  test('statement descriptors: none for cards; a suffix of at most 22 characters with a letter and no <>\\\'"', async () => {
    const key = newTestKey();
    expectError(await post(key, PI, card({ statement_descriptor: 'ACME' })), 400, { param: 'statement_descriptor' });
    expectError(await post(key, PI, card({ statement_descriptor_suffix: 'x'.repeat(23) })), 400, { param: 'statement_descriptor_suffix' });
    expectError(await post(key, PI, card({ statement_descriptor_suffix: '12345' })), 400, { param: 'statement_descriptor_suffix' });
    expectError(await post(key, PI, card({ statement_descriptor_suffix: 'A<B' })), 400, { param: 'statement_descriptor_suffix' });
    const ok = await pay(key, 'pm_card_visa', { statement_descriptor_suffix: 'Order 42' });
    expect(ok.body.statement_descriptor_suffix).toBe('Order 42');
    const charge = (await get(key, `/v1/charges/${ok.body.latest_charge}`)).body;
    expect(charge).toMatchObject({ statement_descriptor_suffix: 'Order 42', calculated_statement_descriptor: 'SANDBANK* ORDER 42' });
  });

  test('amounts and parameters that need confirm=true', async () => {
    const key = newTestKey();
    expectError(await post(key, PI, card({ amount: 49 })), 400, { code: 'amount_too_small', param: 'amount' });
    expectError(await post(key, PI, card({ return_url: 'http://127.0.0.1:9/' })), 400, { param: 'return_url' });
    expectError(await post(key, PI, card({ customer: 'cus_nope' })), 400, { code: 'resource_missing', param: 'customer' });
    expectError(await post(key, PI, card({ payment_method: 'pm_nope' })), 400, { code: 'resource_missing', param: 'payment_method' });
  });

  test('two concurrent confirmations: one wins, the other meets the succeeded intent', async () => {
    const key = newTestKey();
    const created = (await post(key, PI, card({ payment_method: 'pm_card_visa' }))).body;
    const answers = await Promise.all([0, 1, 2].map(() => post(key, `${PI}/${created.id}/confirm`, {})));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
    for (const a of answers.filter((x) => x.status === 400)) {
      expectError(a, 400, { code: 'payment_intent_unexpected_state', message: 'You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.' });
    }
    expect((await get(key, `/v1/charges?payment_intent=${created.id}`)).body.data).toHaveLength(1);
  });
});

describe('setup_future_usage', () => {
  test('a successful payment saves the card to the customer, with payment_method.attached', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const res = await pay(key, 'pm_card_visa', { customer, setup_future_usage: 'on_session' });
    expect(res.body).toMatchObject({ status: 'succeeded', setup_future_usage: 'on_session', customer });
    expect((await get(key, `/v1/payment_methods/${res.body.payment_method}`)).body.customer).toBe(customer);
    expect((await eventsOf(key, 'payment_method.attached'))[0].data.object.id).toBe(res.body.payment_method);
    // A card saved to another customer can't pay for this one.
    const other = (await createCustomer(t, key)).id;
    expectError(await pay(key, res.body.payment_method, { customer: other }), 400, { param: 'payment_method' });
  });
});

describe('update, retrieve and list', () => {
  test('update before payment: amount, metadata, card; after it, only description and metadata', async () => {
    const key = newTestKey();
    const open = (await post(key, PI, card({ metadata: { a: '1' } }))).body;
    const updated = await post(key, `${PI}/${open.id}`, { amount: 3000, metadata: { b: '2' }, description: 'd', payment_method: 'pm_card_mastercard' });
    expectMatchesResponseSchema('PostPaymentIntentsIntent', 200, updated.body);
    expect(updated.body).toMatchObject({ amount: 3000, metadata: { a: '1', b: '2' }, description: 'd', status: 'requires_confirmation' });
    const paid = (await post(key, `${PI}/${open.id}/confirm`, {})).body;
    expect(paid).toMatchObject({ status: 'succeeded', amount_received: 3000 });
    expect((await post(key, `${PI}/${open.id}`, { metadata: { c: '3' } })).body.metadata).toEqual({ a: '1', b: '2', c: '3' });
    expectError(await post(key, `${PI}/${open.id}`, { amount: 10 }), 400, {
      code: 'payment_intent_unexpected_state',
      message: 'You cannot update this PaymentIntent because it has a status of succeeded. Updates are only allowed when the PaymentIntent has one of the following statuses: requires_payment_method, requires_confirmation, requires_action.',
    });
  });

  test('retrieve: 404 for unknown ids and other accounts; expand latest_charge, customer and payment_method', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const paid = (await pay(key, 'pm_card_visa', { customer })).body;
    expectError(await get(key, `${PI}/pi_nope`), 404, { code: 'resource_missing', message: "No such payment_intent: 'pi_nope'" });
    expectError(await get(newTestKey(), `${PI}/${paid.id}`), 404, { code: 'resource_missing' });
    const expanded = await get(key, `${PI}/${paid.id}?expand[]=latest_charge&expand[]=customer&expand[]=payment_method`);
    expectMatchesResponseSchema('GetPaymentIntentsIntent', 200, expanded.body);
    expect(expanded.body.latest_charge).toMatchObject({ object: 'charge', id: paid.latest_charge });
    expect(expanded.body.customer).toMatchObject({ object: 'customer', id: customer });
    expect(expanded.body.payment_method).toMatchObject({ object: 'payment_method', id: paid.payment_method });
    const charge = await get(key, `/v1/charges/${paid.latest_charge}?expand[]=payment_intent`);
    expect(charge.body.payment_intent).toMatchObject({ object: 'payment_intent', id: paid.id });
  });

  test('list: newest first, by customer and created, paged', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push((await post(key, PI, card({ customer }))).body.id);
    await post(key, PI, card());
    const all = await get(key, PI);
    expectMatchesResponseSchema('GetPaymentIntents', 200, all.body);
    expect(all.body.data).toHaveLength(4);
    expect((await get(key, `${PI}?customer=${customer}`)).body.data.map((p: any) => p.id)).toEqual([...mine].reverse());
    const page = await get(key, `${PI}?customer=${customer}&limit=2`);
    expect(page.body.has_more).toBe(true);
    const rest = await get(key, `${PI}?customer=${customer}&limit=2&starting_after=${page.body.data[1].id}`);
    expect(rest.body.data.map((p: any) => p.id)).toEqual([mine[0]]);
    expect((await get(key, `${PI}?created[gt]=${all.body.data[0].created + 1}`)).body.data).toEqual([]);
    expect(page.body.data[0].client_secret).toMatch(/_secret_/);
  });
});

describe('Connect', () => {
  test('transfer_data, on_behalf_of and application_fee_amount are checked against the platform\'s connected accounts and kept on the charge', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key, { type: 'express' })).id;
    const foreign = (await createAccount(t, newTestKey(), { type: 'express' })).id;
    const res = await pay(key, 'pm_card_visa', { transfer_data: { destination: connected, amount: 1500 }, on_behalf_of: connected, application_fee_amount: 100, transfer_group: 'g1' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ transfer_data: { destination: connected, amount: 1500 }, on_behalf_of: connected, application_fee_amount: 100, transfer_group: 'g1' });
    const charge = (await get(key, `/v1/charges/${res.body.latest_charge}`)).body;
    expect(charge).toMatchObject({ transfer_data: { destination: connected, amount: 1500 }, on_behalf_of: connected, application_fee_amount: 100, transfer_group: 'g1' });
    expect((await get(key, '/v1/charges?transfer_group=g1')).body.data.map((c: any) => c.id)).toEqual([charge.id]);

    expectError(await pay(key, 'pm_card_visa', { transfer_data: { destination: foreign } }), 400, { code: 'resource_missing', param: 'transfer_data[destination]' });
    expectError(await pay(key, 'pm_card_visa', { on_behalf_of: foreign }), 400, { code: 'resource_missing', param: 'on_behalf_of' });
    expectError(await pay(key, 'pm_card_visa', { application_fee_amount: 100 }), 400, { param: 'application_fee_amount' });
    expectError(await pay(key, 'pm_card_visa', { transfer_data: { destination: connected, amount: 2001 } }), 400, { param: 'transfer_data[amount]' });
  });

  test('Stripe-Account: a direct charge belongs to the connected account; neither its platform without the header nor another platform sees it', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key, { type: 'express' })).id;
    const as = { 'Stripe-Account': connected };
    const res = await post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true, application_fee_amount: 200 }), as);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', application_fee_amount: 200 });
    expect((await get(key, `${PI}/${res.body.id}`, as)).body.id).toBe(res.body.id);
    expect((await get(key, `/v1/charges/${res.body.latest_charge}`, as)).body.application_fee_amount).toBe(200);
    expectError(await get(key, `${PI}/${res.body.id}`), 404, { code: 'resource_missing' });
    expectError(await get(key, `/v1/charges/${res.body.latest_charge}`), 404, { code: 'resource_missing' });
    expect((await get(key, PI)).body.data).toEqual([]);
    const other = newTestKey();
    expect((await get(other, PI)).body.data).toEqual([]);
    expect((await get(other, `${PI}/${res.body.id}`, as)).status).toBeGreaterThanOrEqual(400);
  });
});

describe('the official SDK', () => {
  test('create, confirm, capture, retrieve, list and cancel', async () => {
    const stripe = t.stripe(newTestKey());
    const customer = await stripe.customers.create({ email: 'sdk@example.com' });
    const intent = await stripe.paymentIntents.create({ amount: 1999, currency: 'eur', customer: customer.id, allowed_payment_method_types: ['card'], capture_method: 'manual' });
    expect(intent.status).toBe('requires_payment_method');
    const confirmed = await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
    expect(confirmed.status).toBe('requires_capture');
    const captured = await stripe.paymentIntents.capture(intent.id, { amount_to_capture: 1000 }, { idempotencyKey: `cap-${intent.id}` });
    expect(captured.amount_received).toBe(1000);
    const replayed = await stripe.paymentIntents.capture(intent.id, { amount_to_capture: 1000 }, { idempotencyKey: `cap-${intent.id}` });
    expect(replayed.lastResponse.headers['idempotent-replayed']).toBe('true');
    const retrieved = await stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] });
    expect((retrieved.latest_charge as any).amount_captured).toBe(1000);
    expect((await stripe.paymentIntents.list({ customer: customer.id })).data.map((p) => p.id)).toEqual([intent.id]);
    const other = await stripe.paymentIntents.create({ amount: 500, currency: 'usd', automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    expect((await stripe.paymentIntents.cancel(other.id, { cancellation_reason: 'abandoned' })).status).toBe('canceled');
    const declined = await stripe.paymentIntents
      .create({ amount: 500, currency: 'usd', allowed_payment_method_types: ['card'], payment_method: 'pm_card_chargeDeclined', confirm: true })
      .catch((e) => e);
    expect(declined).toMatchObject({ type: 'StripeCardError', code: 'card_declined', decline_code: 'generic_decline' });
    expect(declined.payment_intent.status).toBe('requires_payment_method');
  });
});

describe('secrets at rest', () => {
  test('client secrets and challenge tokens are sealed: in rows, kept answers, events, errors and logs', async () => {
    const key = newTestKey();
    const created = await post(key, PI, card({ payment_method: 'pm_card_chargeDeclined' }), { 'Idempotency-Key': 'secret-create' });
    const secret: string = created.body.client_secret;
    expect(secret).toMatch(/_secret_/);
    const declined = await post(key, `${PI}/${created.body.id}/confirm`, {}, { 'Idempotency-Key': 'secret-confirm' });
    expect(declined.status).toBe(402);
    expect(declined.body.error.payment_intent.client_secret).toBeNull();
    const waiting = await pay(key, 'pm_card_authenticationRequired', { return_url: 'http://127.0.0.1:9/back' });
    const token = waiting.body.next_action.redirect_to_url.url.split('/').pop();
    const row = await t.runtime.prisma.paymentIntent.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(await t.runtime.encryption.open(row.clientSecret)).toBe(secret);
    await expectNowhereAtRest(t, secret, ['payment_intents', created.body.id]);
    await expectNowhereAtRest(t, waiting.body.client_secret);
    await expectNowhereAtRest(t, token);
    expect(t.logText()).not.toContain(secret);
    // The replay opens the sealed copy.
    expect((await post(key, PI, card({ payment_method: 'pm_card_chargeDeclined' }), { 'Idempotency-Key': 'secret-create' })).body.client_secret).toBe(secret);
  });
});

describe('a create is one statement unless it must read back its writes', () => {
  /** The statements sent on the pool (outside any transaction) while `run` runs that write a PaymentIntent. */
  async function statementsOf<T>(run: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
    const texts: string[] = [];
    const query = t.runtime.sql.query.bind(t.runtime.sql);
    const spy = jest.spyOn(t.runtime.sql, 'query').mockImplementation((statement) => {
      if (statement.text.includes('INSERT INTO payment_intents')) texts.push(statement.text);
      return query(statement);
    });
    try {
      return { result: await run(), texts };
    } finally {
      spy.mockRestore();
    }
  }
  const rowsOf = (intentId: string) => ({
    intents: t.runtime.prisma.paymentIntent.count({ where: { id: intentId } }),
    charges: t.runtime.prisma.charge.count({ where: { paymentIntentId: intentId } }),
  });

  test('a confirmed create with a test card: the card, the intent, its charge, its events and the key, in one statement', async () => {
    const key = newTestKey();
    const { result: res, texts } = await statementsOf(() => pay(key, 'pm_card_visa', {}) as Promise<any>);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', amount_received: 2000 });
    expect(texts).toHaveLength(1);
    for (const part of ['INSERT INTO payment_methods', 'INSERT INTO charges', 'INSERT INTO events']) expect(texts[0]).toContain(part);
    const rows = rowsOf(res.body.id);
    expect([await rows.intents, await rows.charges]).toEqual([1, 1]);
    expect((await eventsOf(key, 'payment_intent.succeeded')).map((e: any) => e.data.object.id)).toEqual([res.body.id]);
  });

  test('a card made by the request and saved for later is written the ordinary way, once', async () => {
    const key = newTestKey();
    const customer = await createCustomer(t, key);
    const { result: res, texts } = await statementsOf(() => pay(key, 'pm_card_visa', { customer: customer.id, setup_future_usage: 'off_session' }) as Promise<any>);
    expect(res.status).toBe(200);
    // The one-statement attempt was given up before anything was sent.
    expect(texts).toHaveLength(0);
    const pm = await t.runtime.prisma.paymentMethod.findUniqueOrThrow({ where: { id: res.body.payment_method } });
    expect(pm).toMatchObject({ customerId: customer.id, offSessionReady: true });
    const rows = rowsOf(res.body.id);
    expect([await rows.intents, await rows.charges]).toEqual([1, 1]);
    expect(await eventsOf(key, 'payment_method.attached')).toHaveLength(1);
    expect(await eventsOf(key, 'payment_intent.created')).toHaveLength(1);
  });

  test('at a version that shows the charges, the intent is answered with the charge it just made, in one statement too', async () => {
    const key = newTestKey();
    await pay(key, 'pm_card_visa', {});
    // The platform pinned to that version by a first versioned request (as an old SDK's is), so its events show the charges too.
    expect((await get(key, `${PI}?limit=1`, { 'Stripe-Version': '2020-08-27' })).status).toBe(200);
    const counted = await countPostgres(() => statementsOf(() => post(key, PI, card({ payment_method: 'pm_card_visa', confirm: true }), { 'Stripe-Version': '2020-08-27', 'Idempotency-Key': `old-${key}` }) as Promise<any>));
    const { result: res, texts } = counted.result;
    expect(res.status).toBe(200);
    expect(res.body.charges).toMatchObject({ object: 'list', total_count: 1, data: [{ id: expect.stringMatching(/^ch_/), status: 'succeeded', refunds: { total_count: 0, data: [] } }] });
    // Built from the writes it held: one round trip, one commit, as at the newest version.
    expect(texts).toHaveLength(1);
    expect({ roundTrips: counted.roundTrips, commits: counted.commits }).toEqual({ roundTrips: 1, commits: 1 });
    const rows = rowsOf(res.body.id);
    expect([await rows.intents, await rows.charges]).toEqual([1, 1]);
    // Read back, the same list; the event (at the platform's version) shows it too.
    expect((await get(key, `${PI}/${res.body.id}`, { 'Stripe-Version': '2020-08-27' })).body.charges).toEqual(res.body.charges);
    const [succeeded] = await eventsOf(key, 'payment_intent.succeeded');
    expect(succeeded.data.object.charges).toEqual(res.body.charges);
  });

  test('at that version, an intent confirmed again after a decline lists both charges, newest first', async () => {
    const key = newTestKey();
    const declined = await post(key, PI, card({ payment_method: 'pm_card_chargeDeclined', confirm: true }), { 'Stripe-Version': '2020-08-27' });
    expect(declined.status).toBe(402);
    const id = declined.body.error.payment_intent.id;
    const again = await post(key, `${PI}/${id}/confirm`, { payment_method: 'pm_card_visa' }, { 'Stripe-Version': '2020-08-27' });
    expect(again.status).toBe(200);
    expect(again.body.charges.total_count).toBe(2);
    expect(again.body.charges.data.map((c: any) => c.status)).toEqual(['succeeded', 'failed']);
    expect((await get(key, `${PI}/${id}`, { 'Stripe-Version': '2020-08-27' })).body.charges).toEqual(again.body.charges);
  });

  test('a card that asks for authentication: next_action from the challenge started, in the same statement', async () => {
    const key = newTestKey();
    const { result: res, texts } = await statementsOf(() => pay(key, 'pm_card_authenticationRequired', { return_url: 'http://127.0.0.1:9/back' }) as Promise<any>);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('requires_action');
    expect(res.body.next_action.redirect_to_url.url).toMatch(/\/three_d_secure\/[A-Za-z0-9]{48}$/);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain('INSERT INTO payment_authentications');
    // Read back, the same next_action.
    expect((await get(key, `${PI}/${res.body.id}`)).body.next_action).toEqual(res.body.next_action);
  });
});

describe('an update is one commit in 4 round trips (BEGIN, the locked read, one statement, COMMIT)', () => {
  test('before payment: amount, metadata and description; the answer is what a retrieve reads', async () => {
    const key = newTestKey();
    const open = (await post(key, PI, card({ metadata: { a: '1' } }))).body;
    const counted = await countPostgres(() => post(key, `${PI}/${open.id}`, { amount: 3000, metadata: { a: '', b: '2' }, description: 'd' }, { 'Idempotency-Key': `pi-update-${open.id}` }));
    expect(counted.result.status).toBe(200);
    expect(counted.result.body).toMatchObject({ amount: 3000, metadata: { b: '2' }, description: 'd', status: 'requires_payment_method' });
    expect({ roundTrips: counted.roundTrips, commits: counted.commits, rollbacks: counted.rollbacks }).toEqual({ roundTrips: 4, commits: 1, rollbacks: 0 });
    expect((await get(key, `${PI}/${open.id}`)).body).toEqual(counted.result.body);
    // The idempotent copy answers the same, and the update wrote no event (Stripe has no payment_intent.updated).
    expect((await post(key, `${PI}/${open.id}`, { amount: 3000, metadata: { a: '', b: '2' }, description: 'd' }, { 'Idempotency-Key': `pi-update-${open.id}` })).body).toEqual(counted.result.body);
    expect((await get(key, `/v1/events?limit=100`)).body.data.map((e: any) => e.type)).toEqual(['payment_intent.created']);
    expectError(await post(newTestKey(), `${PI}/${open.id}`, { description: 'x' }), 404, { code: 'resource_missing' });
  });

  test('after payment, at a version that shows the charges: the list is read, the update still one commit in 4 round trips', async () => {
    const key = newTestKey();
    await pay(key, 'pm_card_visa', {});
    expect((await get(key, `${PI}?limit=1`, { 'Stripe-Version': '2020-08-27' })).status).toBe(200);
    const paid = (await pay(key, 'pm_card_visa', {})).body;
    const counted = await countPostgres(() => post(key, `${PI}/${paid.id}`, { metadata: { c: '3' } }, { 'Stripe-Version': '2020-08-27', 'Idempotency-Key': `pi-update-old-${paid.id}` }));
    expect(counted.result.status).toBe(200);
    expect(counted.result.body.charges).toMatchObject({ object: 'list', total_count: 1, data: [{ id: paid.charges.data[0].id }] });
    expect(counted.result.body.metadata).toEqual({ c: '3' });
    expect(counted.commits).toBe(1);
    expect((await get(key, `${PI}/${paid.id}`, { 'Stripe-Version': '2020-08-27' })).body).toEqual(counted.result.body);
  });
});
