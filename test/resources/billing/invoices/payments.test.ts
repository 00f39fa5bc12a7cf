import type Stripe from 'stripe';
import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { payingCustomer, recurringPrice } from '../../../helpers/billing';
import { createCustomer } from '../../../helpers/fixtures';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';

// Invoices paid through PaymentIntents: collecting an invoice makes a PaymentIntent for its
// amount due (`invoice` set) and confirms it off-session, which records the charge; a decline
// leaves the invoice open with the intent's error; a card that asks for 3-D Secure leaves the
// intent in requires_action, and its customer's answer (the hosted page, or a confirmation with
// the publishable key and client secret) pays the invoice and moves the subscription on.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);
const SUB = '/v1/subscriptions';
/** A version before 2025-03-31.basil, where PaymentIntents and charges name their invoice. */
const ACACIA = { 'Stripe-Version': '2024-06-20' };

const intentsOf = async (key: string, customer: string) => (await get(key, `/v1/payment_intents?customer=${customer}`)).body.data;
const chargesOf = async (key: string, intent: string) => (await get(key, `/v1/charges?payment_intent=${intent}`)).body.data;
const hostedPath = (url: string) => new URL(url).pathname;

test('a first invoice is paid by a PaymentIntent for its amount due, whose charge is recorded; each names the other', async () => {
  const key = newTestKey();
  const customer = await payingCustomer(t, key);
  const price = await recurringPrice(t, key, 1500);
  const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id, quantity: 2 }] })).body;
  expect(sub.status).toBe('active');
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'paid', amount_due: 3000, amount_paid: 3000, attempt_count: 1 });

  const [intent] = await intentsOf(key, customer.id);
  expectMatchesSdkTypes(intent);
  // 2 × 15.00 = 30.00, charged once, off-session with the customer's default card.
  expect(intent).toMatchObject({
    amount: 3000,
    amount_received: 3000,
    currency: 'usd',
    status: 'succeeded',
    customer: customer.id,
    payment_method: customer.pm,
    capture_method: 'automatic',
    description: 'Subscription creation',
  });
  const charges = await chargesOf(key, intent.id);
  expect(charges).toHaveLength(1);
  expect(charges[0]).toMatchObject({ id: intent.latest_charge, amount: 3000, captured: true, paid: true, status: 'succeeded', payment_intent: intent.id, customer: customer.id });
  // Versions before 2025-03-31.basil name the invoice on both.
  expect((await get(key, `/v1/payment_intents/${intent.id}`, ACACIA)).body.invoice).toBe(invoice.id);
  expect((await get(key, `/v1/charges/${intent.latest_charge}`, ACACIA)).body.invoice).toBe(invoice.id);
  // The intent's and charge's events come before the invoice's payment.
  const types = (await get(key, '/v1/events?limit=20')).body.data.map((e: any) => e.type).reverse();
  expect(types.slice(types.indexOf('invoice.finalized'))).toEqual(['invoice.finalized', 'payment_intent.created', 'charge.succeeded', 'payment_intent.succeeded', 'invoice.paid', 'invoice.payment_succeeded']);
});

test('a zero invoice (a trial) needs no PaymentIntent', async () => {
  const key = newTestKey();
  const customer = await payingCustomer(t, key);
  const price = await recurringPrice(t, key, 1000);
  const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], trial_period_days: 7 })).body;
  expect((await get(key, `/v1/invoices/${sub.latest_invoice}`)).body).toMatchObject({ status: 'paid', amount_due: 0 });
  expect(await intentsOf(key, customer.id)).toEqual([]);
});

test('a decline leaves the invoice open with the intent`s error; paying again confirms the same intent, a second charge', async () => {
  const key = newTestKey();
  const customer = await payingCustomer(t, key, 'pm_card_chargeCustomerFail');
  const price = await recurringPrice(t, key, 1000);
  const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] })).body;
  expect(sub.status).toBe('incomplete');
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  const [intent] = await intentsOf(key, customer.id);
  expect(intent).toMatchObject({ amount: 1000, status: 'requires_payment_method', payment_method: null, last_payment_error: { code: 'card_declined', decline_code: 'generic_decline' } });
  const [failed] = await chargesOf(key, intent.id);
  expect(failed).toMatchObject({ status: 'failed', amount: 1000, failure_code: 'card_declined', payment_intent: intent.id });
  expect(intent.last_payment_error.charge).toBe(failed.id);
  expect(invoice).toMatchObject({ status: 'open', attempt_count: 1, amount_paid: 0 });
  // The decline is the intent's: the public invoice has no `last_payment_error` at any version.
  expect(invoice).not.toHaveProperty('last_payment_error');
  expectMatchesResponseSchema('GetInvoicesInvoice', 200, invoice);
  expectMatchesSdkTypes(invoice);
  expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(1);

  // Paying with the same card declines again: 402 with the decline, counted, still one intent.
  const again = await post(key, `/v1/invoices/${invoice.id}/pay`, {});
  expectError(again, 402, { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'open', attempt_count: 2 });

  const paid = await post(key, `/v1/invoices/${invoice.id}/pay`, { payment_method: 'pm_card_visa' });
  expect(paid.status).toBe(200);
  expect(paid.body).toMatchObject({ status: 'paid', amount_paid: 1000, attempt_count: 3 });
  const intents = await intentsOf(key, customer.id);
  expect(intents).toHaveLength(1);
  expect(intents[0]).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 1000 });
  const charges = await chargesOf(key, intent.id);
  expect(charges.map((c: any) => c.status)).toEqual(['succeeded', 'failed', 'failed']);
  expect((await get(key, `${SUB}/${sub.id}`)).body.status).toBe('active');

  // One invoice payment, through that intent, paid.
  const payments = (await get(key, `/v1/invoice_payments?invoice=${invoice.id}`)).body;
  expect(payments.data).toHaveLength(1);
  const [payment] = payments.data;
  expectMatchesSdkTypes(payment);
  expect(payment).toMatchObject({
    object: 'invoice_payment',
    amount_requested: 1000,
    amount_paid: 1000,
    currency: 'usd',
    invoice: invoice.id,
    is_default: true,
    status: 'paid',
    payment: { type: 'payment_intent', payment_intent: intent.id },
    status_transitions: { canceled_at: null },
  });
  expect(payment.id).toMatch(/^inpay_/);
  expect(payment.status_transitions.paid_at).toBe(paid.body.status_transitions.paid_at);
  expect((await get(key, `/v1/invoice_payments/${payment.id}`)).body).toEqual(payment);
  expectMatchesResponseSchema('GetInvoicePaymentsInvoicePayment', 200, payment);
  expect((await get(key, `/v1/invoice_payments/${payment.id}?expand[]=payment.payment_intent&expand[]=invoice`)).body).toMatchObject({
    payment: { payment_intent: { id: intent.id, object: 'payment_intent' } },
    invoice: { id: invoice.id, object: 'invoice' },
  });
  const ids = async (query: string) => (await get(key, `/v1/invoice_payments?${query}`)).body.data.map((p: any) => p.id);
  expect(await ids(`payment[type]=payment_intent&payment[payment_intent]=${intent.id}`)).toEqual([payment.id]);
  expect(await ids('payment[type]=payment_record')).toEqual([]);
  expect(await ids('status=paid')).toEqual([payment.id]);
  expect(await ids('status=open')).toEqual([]);
  expectError(await get(key, '/v1/invoice_payments/inpay_nope'), 404, { code: 'resource_missing' });
  expectError(await get(key, '/v1/invoice_payments?status=later'), 400, { param: 'status' });
  // Another account sees none of it.
  expectError(await get(newTestKey(), `/v1/invoice_payments/${payment.id}`), 404, { code: 'resource_missing' });

  // The invoice lists it when `payments` is expanded; older versions name the intent and its latest charge.
  const expanded = (await get(key, `/v1/invoices/${invoice.id}?expand[]=payments`)).body;
  expect(expanded.payments).toMatchObject({ object: 'list', data: [{ id: payment.id }], has_more: false });
  expectMatchesResponseSchema('GetInvoicesInvoice', 200, expanded);
  expectMatchesSdkTypes(expanded);
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body.payments).toBeUndefined();
  const old = (await get(key, `/v1/invoices/${invoice.id}`, ACACIA)).body;
  expect(old).toMatchObject({ paid: true, payment_intent: intent.id, charge: intents[0].latest_charge });
});

test('an open invoice`s confirmation_secret is its intent`s client secret; a paid one has none', async () => {
  const key = newTestKey();
  const customer = await payingCustomer(t, key, 'pm_card_chargeCustomerFail');
  const price = await recurringPrice(t, key, 1000);
  const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] })).body;
  const [intent] = await intentsOf(key, customer.id);
  const open = (await get(key, `/v1/invoices/${sub.latest_invoice}?expand[]=confirmation_secret`)).body;
  expect(open.confirmation_secret).toEqual({ client_secret: intent.client_secret, type: 'payment_intent' });
  expectMatchesResponseSchema('GetInvoicesInvoice', 200, open);
  expect((await get(key, `/v1/invoices/${sub.latest_invoice}`)).body.confirmation_secret).toBeUndefined();
  // Before 2025-03-31.basil: the intent, the failed charge, not paid.
  expect((await get(key, `/v1/invoices/${sub.latest_invoice}`, ACACIA)).body).toMatchObject({ paid: false, payment_intent: intent.id, charge: intent.latest_charge });
  const [payment] = (await get(key, `/v1/invoice_payments?invoice=${sub.latest_invoice}`)).body.data;
  expect(payment).toMatchObject({ status: 'open', amount_requested: 1000, amount_paid: null, status_transitions: { paid_at: null, canceled_at: null } });
  // The open invoice's intent isn't canceled directly (voiding the invoice does it).
  const cancel = await post(key, `/v1/payment_intents/${intent.id}/cancel`, {});
  expectError(cancel, 400, { code: 'payment_intent_unexpected_state' });
  expect(cancel.body.error.message).toContain('void the invoice');
  await post(key, `/v1/invoices/${sub.latest_invoice}/pay`, { payment_method: 'pm_card_visa' });
  // The account is pinned to 2024-06-20 now (its first request naming a version), where confirmation_secret doesn't exist.
  const newest = { 'Stripe-Version': '2025-03-31.basil' };
  expect((await get(key, `/v1/invoices/${sub.latest_invoice}?expand[]=confirmation_secret`, newest)).body.confirmation_secret).toBeNull();
  expectError(await get(key, `/v1/invoices/${sub.latest_invoice}?expand[]=confirmation_secret`), 400, { message: 'This property cannot be expanded (confirmation_secret).' });
});

test('the customer confirms a declined invoice`s intent with the publishable key and client secret: the invoice is paid', async () => {
  const key = newTestKey();
  const pk = key.replace(/^sk_/, 'pk_');
  const customer = await payingCustomer(t, key, 'pm_card_chargeCustomerFail');
  const price = await recurringPrice(t, key, 1200);
  const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] })).body;
  const [intent] = await intentsOf(key, customer.id);
  const confirmed = await post(pk, `/v1/payment_intents/${intent.id}/confirm`, { client_secret: intent.client_secret, payment_method: 'pm_card_visa' });
  expect(confirmed.status).toBe(200);
  expect(confirmed.body).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 1200 });
  expect((await get(key, `/v1/invoices/${sub.latest_invoice}`)).body).toMatchObject({ status: 'paid', amount_paid: 1200 });
  expect((await get(key, `${SUB}/${sub.id}`)).body.status).toBe('active');
  const [paidEvent] = await eventsOf(key, 'invoice.paid');
  expect(paidEvent.data.object).toMatchObject({ id: sub.latest_invoice, status: 'paid' });
  expect((await eventsOf(key, 'invoice.payment_succeeded')).length).toBe(1);
  // A second confirmation of a succeeded intent is refused and pays nothing twice; the invoice's intent isn't edited or canceled directly.
  expectError(await post(key, `/v1/payment_intents/${intent.id}`, { amount: 5000 }), 400, { param: 'amount' });
  expect((await post(key, `/v1/payment_intents/${intent.id}`, { metadata: { note: 'kept' } })).body).toMatchObject({ amount: 1200, metadata: { note: 'kept' } });
  expectError(await post(pk, `/v1/payment_intents/${intent.id}/confirm`, { client_secret: intent.client_secret }), 400, { code: 'payment_intent_unexpected_state' });
  expect((await eventsOf(key, 'invoice.paid')).length).toBe(1);
});

describe('3-D Secure', () => {
  for (const [card, label] of [
    ['pm_card_authenticationRequired', '4000002760003184'],
    ['pm_card_authenticationRequiredOnSetup', '4000002500003155 without setup'],
  ] as const) {
    test(`${label}: the invoice waits with invoice.payment_action_required; the hosted page's answer pays it`, async () => {
      const key = newTestKey();
      const customer = await payingCustomer(t, key, card);
      const price = await recurringPrice(t, key, 2500);
      const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] })).body;
      expect(sub.status).toBe('incomplete');
      const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
      expect(invoice).toMatchObject({ status: 'open', attempt_count: 1 });
      expectMatchesResponseSchema('GetInvoicesInvoice', 200, invoice);
      const [action] = await eventsOf(key, 'invoice.payment_action_required');
      expect(action.data.object.id).toBe(invoice.id);
      const [intent] = await intentsOf(key, customer.id);
      expect(intent).toMatchObject({ amount: 2500, status: 'requires_action', latest_charge: null, next_action: { type: 'use_stripe_sdk' } });

      const page = hostedPath(intent.next_action.use_stripe_sdk.stripe_js);
      expect((await t.http().post(page).type('form').send('outcome=complete')).status).toBe(200);
      expect((await get(key, `/v1/payment_intents/${intent.id}`)).body).toMatchObject({ status: 'succeeded', amount_received: 2500 });
      expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 2500 });
      expect((await eventsOf(key, 'invoice.paid')).map((e: any) => e.data.object.id)).toEqual([invoice.id]);
      expect((await eventsOf(key, 'invoice.payment_succeeded')).length).toBe(1);
      expect((await get(key, `${SUB}/${sub.id}`)).body.status).toBe('active');
    });
  }

  test('confirming the intent with the publishable key asks again; a failed challenge records invoice.payment_failed', async () => {
    const key = newTestKey();
    const pk = key.replace(/^sk_/, 'pk_');
    const customer = await payingCustomer(t, key, 'pm_card_authenticationRequired');
    const price = await recurringPrice(t, key, 900);
    const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] })).body;
    const [intent] = await intentsOf(key, customer.id);
    const failedPage = hostedPath(intent.next_action.use_stripe_sdk.stripe_js);
    expect((await t.http().post(failedPage).type('form').send('outcome=fail')).status).toBe(200);
    expect((await get(key, `/v1/payment_intents/${intent.id}`)).body).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'payment_intent_authentication_failure' } });
    expect((await get(key, `/v1/invoices/${sub.latest_invoice}`)).body).toMatchObject({ status: 'open' });
    expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(1);

    // Stripe.js confirms with the card again: a new challenge, answered this time.
    const confirmed = await post(pk, `/v1/payment_intents/${intent.id}/confirm`, { client_secret: intent.client_secret, payment_method: customer.pm });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'requires_action', next_action: { type: 'use_stripe_sdk' } });
    expect((await get(key, `/v1/invoices/${sub.latest_invoice}`)).body.status).toBe('open');
    expect((await t.http().post(hostedPath(confirmed.body.next_action.use_stripe_sdk.stripe_js)).type('form').send('outcome=complete')).status).toBe(200);
    expect((await get(key, `/v1/invoices/${sub.latest_invoice}`)).body).toMatchObject({ status: 'paid', amount_paid: 900 });
    expect((await get(key, `${SUB}/${sub.id}`)).body.status).toBe('active');
  });
});

test('default_incomplete through the official SDK: the secret key subscribes, the publishable key confirms the intent, the subscription is active', async () => {
  const key = newTestKey();
  const stripe = t.stripe(key);
  const browser = t.stripe(key.replace(/^sk_/, 'pk_'));
  const customer = await createCustomer(t, key, { email: 'jenny@example.test' });
  const price = await recurringPrice(t, key, 2000);
  // The public subscription guide: default_incomplete, the card saved on the subscription, the invoice's confirmation secret expanded.
  const sub = await stripe.subscriptions.create({
    customer: customer.id,
    items: [{ price: price.id }],
    payment_behavior: 'default_incomplete',
    payment_settings: { save_default_payment_method: 'on_subscription', payment_method_types: ['card'], payment_method_options: { card: { request_three_d_secure: 'automatic' } } },
    expand: ['latest_invoice.confirmation_secret'],
  });
  expect(sub.status).toBe('incomplete');
  const settings = { save_default_payment_method: 'on_subscription', payment_method_types: ['card'], payment_method_options: { card: { request_three_d_secure: 'automatic' } } };
  expect(sub.payment_settings).toEqual(settings);
  expect(sub.default_payment_method).toBeNull();
  const invoice = sub.latest_invoice as Stripe.Invoice;
  expect(invoice).toMatchObject({ status: 'open', amount_due: 2000, attempt_count: 0 });
  const secret = invoice.confirmation_secret!;
  expect(secret.type).toBe('payment_intent');
  const intentId = secret.client_secret.split('_secret_')[0];
  // No card yet: the intent waits for the one the customer gives.
  expect(await stripe.paymentIntents.retrieve(intentId)).toMatchObject({ status: 'requires_payment_method', amount: 2000, latest_charge: null, customer: customer.id });

  const confirmed = await browser.paymentIntents.confirm(intentId, { client_secret: secret.client_secret, payment_method: 'pm_card_visa' } as Stripe.PaymentIntentConfirmParams);
  expect(confirmed).toMatchObject({ id: intentId, status: 'succeeded', amount_received: 2000 });
  const paid = await stripe.invoices.retrieve(invoice.id!, { expand: ['payments'] });
  expect(paid).toMatchObject({ status: 'paid', amount_paid: 2000 });
  expect(paid.payments!.data).toEqual([expect.objectContaining({ status: 'paid', amount_paid: 2000, payment: { type: 'payment_intent', payment_intent: intentId } })]);
  // The card that paid is saved to the customer and is the subscription's default now.
  const after = await stripe.subscriptions.retrieve(sub.id);
  expect(after).toMatchObject({ status: 'active', default_payment_method: confirmed.payment_method, payment_settings: settings });
  expect((await stripe.paymentMethods.retrieve(confirmed.payment_method as string)).customer).toBe(customer.id);
  const listed = await stripe.invoicePayments.list({ invoice: invoice.id!, payment: { type: 'payment_intent', payment_intent: intentId } });
  expect(listed.data.map((p) => p.id)).toEqual([paid.payments!.data[0].id]);
});

test('payment_settings: only card payments; without save_default_payment_method the subscription keeps no card, the customer does', async () => {
  const key = newTestKey();
  const customer = await createCustomer(t, key);
  const price = await recurringPrice(t, key, 700);
  expectError(
    await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], payment_behavior: 'default_incomplete', payment_settings: { payment_method_types: ['sepa_debit'] } }),
    400,
    { param: 'payment_settings[payment_method_types]' },
  );
  expectError(await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], payment_settings: { save_default_payment_method: 'always' } }), 400, {
    param: 'payment_settings[save_default_payment_method]',
  });
  const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], payment_behavior: 'default_incomplete' })).body;
  expect(sub.payment_settings).toEqual({ payment_method_options: null, payment_method_types: null, save_default_payment_method: 'off' });
  const [intent] = await intentsOf(key, customer.id);
  // As the public API's: set up for the renewals, so the card that pays is attached to the customer.
  expect(intent).toMatchObject({ status: 'requires_payment_method', setup_future_usage: 'off_session' });
  const pk = key.replace(/^sk_/, 'pk_');
  const confirmed = (await post(pk, `/v1/payment_intents/${intent.id}/confirm`, { client_secret: intent.client_secret, payment_method: 'pm_card_visa' })).body;
  expect(confirmed.status).toBe('succeeded');
  expect((await get(key, `${SUB}/${sub.id}`)).body).toMatchObject({ status: 'active', default_payment_method: null });
  expect((await get(key, `/v1/payment_methods/${confirmed.payment_method}`)).body.customer).toBe(customer.id);
});
