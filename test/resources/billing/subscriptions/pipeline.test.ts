import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { deleteQueueKeys } from '../../../helpers/isolation';
import { until } from '../../../helpers/queues';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { addInterval } from '../../../../src/resources/billing/invoices/amounts';

// Renewals through the real worker: test clocks advanced across monthly renewals (every invoice
// made, finalized and charged), a renewal whose card declines, a trial's end, cancel at period
// end, the advance limit, a Redis that lost the advance's job, and a real-clock renewal that the
// reconciler finds due.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('billing', { RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const START = Date.UTC(2027, 0, 15, 9) / 1000;

async function onClock(key: string, card = 'pm_card_visa') {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START, name: 'Billing' })).body;
  const customer = (await post(key, '/v1/customers', { test_clock: clock.id, payment_method: card, email: 'jenny@example.test' })).body;
  expect(customer.test_clock).toBe(clock.id);
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body;
  return { clock, customer, price };
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  const res = await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'advancing', status_details: { advancing: { target_frozen_time: to } } });
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
  expect((await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.frozen_time).toBe(to);
}

const invoicesOf = async (key: string, sub: string) => (await get(key, `/v1/invoices?subscription=${sub}&limit=100`)).body.data.reverse();

test('a year of monthly renewals on a test clock, two months per advance: 12 renewal invoices, all paid', async () => {
  const key = newTestKey();
  const { clock, customer, price } = await onClock(key);
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  expect(sub).toMatchObject({ status: 'active', test_clock: clock.id, start_date: START });
  expect(sub.items.data[0]).toMatchObject({ current_period_start: START, current_period_end: addInterval(START, 'month', 1) });
  // At most two intervals of the shortest subscription at once.
  expectError(await post(key, `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: addInterval(START, 'month', 2) + 1 }), 400, { param: 'frozen_time' });
  expectError(await post(key, `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: START }), 400, { param: 'frozen_time' });
  for (let months = 2; months <= 12; months += 2) await advance(key, clock.id, addInterval(START, 'month', 2, months / 2));

  const invoices = await invoicesOf(key, sub.id);
  expect(invoices).toHaveLength(13);
  expect(invoices.map((i: any) => i.billing_reason)).toEqual(['subscription_create', ...Array(12).fill('subscription_cycle')]);
  expect(invoices.every((i: any) => i.status === 'paid' && i.amount_paid === 1000)).toBe(true);
  expect(invoices.map((i: any) => i.created)).toEqual(Array.from({ length: 13 }, (_, n) => addInterval(START, 'month', 1, n)));
  expect(invoices.map((i: any) => i.number)).toEqual(Array.from({ length: 13 }, (_, n) => `${customer.id.slice(4, 12).toUpperCase()}-${String(n + 1).padStart(4, '0')}`));
  const after = (await get(key, `/v1/subscriptions/${sub.id}?expand[]=test_clock`)).body;
  expectMatchesSdkTypes(after);
  expect(after).toMatchObject({ status: 'active', latest_invoice: invoices[12].id, test_clock: { id: clock.id, status: 'ready' } });
  expect(after.items.data[0]).toMatchObject({ current_period_start: addInterval(START, 'month', 12), current_period_end: addInterval(START, 'month', 13) });
  expect((await eventsOf(key, 'test_helpers.test_clock.ready')).length).toBe(6);
  expect((await get(key, '/v1/events?type=invoice.paid&limit=100')).body.data).toHaveLength(13);
  // invoice.upcoming three days before each renewal: the coming invoice, without an id as the public API sends it.
  const upcoming = (await get(key, '/v1/events?type=invoice.upcoming&limit=100')).body.data.reverse();
  expect(upcoming).toHaveLength(12);
  expect(upcoming[0].data.object).not.toHaveProperty('id');
  expect(upcoming[0].data.object).toMatchObject({ object: 'invoice', billing_reason: 'upcoming', status: 'draft', amount_due: 1000, period_start: START, period_end: addInterval(START, 'month', 1) });
  expect(upcoming[0].data.object.created).toBe(addInterval(START, 'month', 1) - 3 * 86400);
  // Everything else the worker emitted is what the SDK's types describe.
  for (const event of (await get(key, '/v1/events?limit=100')).body.data) if (event.type !== 'invoice.upcoming') expectMatchesSdkTypes(event, event.type);
});

test('a renewal whose card declines: past_due, the invoice open with the decline; paying it with another card makes it active', async () => {
  const key = newTestKey();
  const { clock, customer, price } = await onClock(key);
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  const declining = (await post(key, '/v1/payment_methods/pm_card_chargeCustomerFail/attach', { customer: customer.id })).body.id;
  await post(key, `/v1/subscriptions/${sub.id}`, { default_payment_method: declining });
  await advance(key, clock.id, addInterval(START, 'month', 1) + 60);
  const renewed = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(renewed.status).toBe('past_due');
  const invoice = (await get(key, `/v1/invoices/${renewed.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'open', billing_reason: 'subscription_cycle', attempt_count: 1 });
  expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(1);
  expect((await post(key, `/v1/invoices/${invoice.id}/pay`, { payment_method: 'pm_card_visa' })).body.status).toBe('paid');
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
});

test('a renewal whose card asks for 3-D Secure: past_due, its PaymentIntent requires_action; the hosted page`s answer pays it and the subscription is active', async () => {
  const key = newTestKey();
  const { clock, customer, price } = await onClock(key);
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  const asking = (await post(key, '/v1/payment_methods/pm_card_authenticationRequired/attach', { customer: customer.id })).body.id;
  await post(key, `/v1/subscriptions/${sub.id}`, { default_payment_method: asking });
  await advance(key, clock.id, addInterval(START, 'month', 1) + 60);
  const renewed = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(renewed.status).toBe('past_due');
  expect((await get(key, `/v1/invoices/${renewed.latest_invoice}`)).body).toMatchObject({ status: 'open', billing_reason: 'subscription_cycle' });
  expect((await eventsOf(key, 'invoice.payment_action_required')).map((e: any) => e.data.object.id)).toEqual([renewed.latest_invoice]);
  const [payment] = (await get(key, `/v1/invoice_payments?invoice=${renewed.latest_invoice}`)).body.data;
  const intent = (await get(key, `/v1/payment_intents/${payment.payment.payment_intent}`)).body;
  expect(intent).toMatchObject({ status: 'requires_action', amount: 1000, description: 'Subscription cycle', payment_method: asking });
  // The worker started the challenge: its page answers.
  const page = new URL(intent.next_action.use_stripe_sdk.stripe_js).pathname;
  expect((await e.t.http().post(page).type('form').send('outcome=complete')).status).toBe(200);
  expect((await get(key, `/v1/invoices/${renewed.latest_invoice}`)).body).toMatchObject({ status: 'paid', amount_paid: 1000 });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
});

test("a trial ends (trial_will_end three days before), then cancel_at_period_end takes effect at the period end (prorations made meanwhile stay pending)", async () => {
  const key = newTestKey();
  const { clock, customer, price } = await onClock(key);
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }], trial_period_days: 7 })).body;
  expect(sub.status).toBe('trialing');
  await advance(key, clock.id, START + 5 * 86400);
  expect((await eventsOf(key, 'customer.subscription.trial_will_end')).length).toBe(1);
  await advance(key, clock.id, START + 8 * 86400);
  const active = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(active.status).toBe('active');
  expect(active.items.data[0].current_period_start).toBe(START + 7 * 86400);
  const trialEndInvoice = (await get(key, `/v1/invoices/${active.latest_invoice}`)).body;
  expect(trialEndInvoice).toMatchObject({ status: 'paid', amount_paid: 1000, billing_reason: 'subscription_cycle' });

  // A quantity change makes prorations that the next renewal bills, and the subscription ends there.
  await post(key, `/v1/subscription_items/${active.items.data[0].id}`, { quantity: 2 });
  await post(key, `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
  await advance(key, clock.id, active.items.data[0].current_period_end + 60);
  const ended = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(ended).toMatchObject({ status: 'canceled', ended_at: active.items.data[0].current_period_end });
  expect((await eventsOf(key, 'customer.subscription.deleted')).length).toBe(1);
  // The prorations stay pending (no renewal invoice when a subscription ends at its period's end).
  expect((await get(key, '/v1/invoiceitems?pending=true')).body.data).toHaveLength(2);
});

test('an unpaid first invoice: after 23 hours the subscription is incomplete_expired and the invoice void', async () => {
  const key = newTestKey();
  const { clock, customer, price } = await onClock(key, 'pm_card_chargeCustomerFail');
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  expect(sub.status).toBe('incomplete');
  await advance(key, clock.id, START + 86400);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'incomplete_expired', ended_at: START + 23 * 3600 });
  // Never retried: the default schedule's first retry, a day after the decline, comes after the expiry.
  expect((await get(key, `/v1/invoices/${sub.latest_invoice}`)).body).toMatchObject({
    status: 'void',
    amount_remaining: 0,
    attempt_count: 1,
    next_payment_attempt: null,
    status_transitions: { voided_at: START + 23 * 3600 },
  });
  expect((await eventsOf(key, 'invoice.voided')).length).toBe(1);
  expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(1);
  // Its PaymentIntent can no longer pay it: canceled, and its invoice payment with it.
  const [intent] = (await get(key, `/v1/payment_intents?customer=${customer.id}`)).body.data;
  expect(intent).toMatchObject({ status: 'canceled', cancellation_reason: 'void_invoice', canceled_at: START + 23 * 3600 });
  expect((await get(key, `/v1/invoice_payments?invoice=${sub.latest_invoice}`)).body.data).toEqual([
    expect.objectContaining({ status: 'canceled', amount_paid: null, payment: { type: 'payment_intent', payment_intent: intent.id }, status_transitions: { canceled_at: START + 23 * 3600, paid_at: null } }),
  ]);
});

test('an advance survives a Redis that lost its job: the reconciler adds it again and the clock gets ready', async () => {
  const key = newTestKey();
  const { clock, customer, price } = await onClock(key);
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  await e.stopWorkers();
  const target = addInterval(START, 'month', 2);
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: target })).body.status).toBe('advancing');
  // Every queue key goes, the advance's job with them.
  await deleteQueueKeys(e.t.config.redisUrl, e.t.config.queuePrefix);
  await e.startWorkers();
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock.id}`)).body.status === 'ready', 30000, 'ready after the loss');
  const invoices = await invoicesOf(key, sub.id);
  expect(invoices.map((i: any) => [i.billing_reason, i.status])).toEqual([
    ['subscription_create', 'paid'],
    ['subscription_cycle', 'paid'],
    ['subscription_cycle', 'paid'],
  ]);
});

test('on the real clock, a subscription whose period ended is renewed by the worker (the reconciler finds it due)', async () => {
  const key = newTestKey();
  const customer = (await post(key, '/v1/customers', { payment_method: 'pm_card_visa' })).body;
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Daily' }, currency: 'usd', unit_amount: 100, recurring: { interval: 'day' } })).body;
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  // As if a day had passed: the period (and the anchor) a day earlier.
  const prisma = e.t.runtime.prisma;
  const day = 86400;
  await prisma.subscription.update({
    where: { id: sub.id },
    data: { billingCycleAnchor: { decrement: day }, periodStart: { decrement: day }, periodEnd: { decrement: day }, nextActionAt: { decrement: day } },
  });
  await until(async () => (await invoicesOf(key, sub.id)).length === 2, 30000, 'the renewal');
  const [, renewal] = await invoicesOf(key, sub.id);
  expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', amount_paid: 100 });
  const renewed = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(renewed.items.data[0].current_period_start).toBe(sub.items.data[0].current_period_end - day);
  expect((await prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } })).nextActionAt).toBe(renewed.items.data[0].current_period_end);
});

test("a renewal takes the customer's pending items that name no subscription (in its currency), as the next scheduled invoice", async () => {
  const key = newTestKey();
  const { clock, customer, price } = await onClock(key);
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  // Made after the subscription: its first invoice is gone, so the renewal is the next one.
  const loose = (await post(key, '/v1/invoiceitems', { customer: customer.id, amount: 250, currency: 'usd', description: 'Setup' })).body;
  const euros = (await post(key, '/v1/invoiceitems', { customer: customer.id, amount: 300, currency: 'eur' })).body;
  await advance(key, clock.id, addInterval(START, 'month', 1));
  const [, renewal] = await invoicesOf(key, sub.id);
  // 1000 for the new month + 250 pending = 1250.
  expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', amount_paid: 1250 });
  expect((await get(key, `/v1/invoiceitems/${loose.id}`)).body.invoice).toBe(renewal.id);
  expect((await get(key, `/v1/invoiceitems/${euros.id}`)).body.invoice).toBeNull();
});
