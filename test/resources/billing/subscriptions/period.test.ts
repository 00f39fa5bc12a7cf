import { newTestKey } from '../../../helpers/app';
import { payingCustomer, recurringPrice } from '../../../helpers/billing';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { addInterval } from '../../../../src/resources/billing/invoices/amounts';

// Updating a subscription's trial (`trial_end`: a time in the future, or `now`) and billing cycle
// (`billing_cycle_anchor=now`). Subscriptions sit on test clocks, so every time and figure is
// exact: January 15 to February 15 is 31 days, so a 3100 price is worth 100 a day.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('subperiod');
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const START = Date.UTC(2027, 0, 15, 9) / 1000;
const DAY = 86400;
const PAST = 'Invalid timestamp: must be an integer Unix timestamp in the future.';

async function onClock(key: string, card = 'pm_card_visa', subParams: Record<string, unknown> = {}) {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body;
  const customer = (await post(key, '/v1/customers', { test_clock: clock.id, payment_method: card })).body;
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 3100, recurring: { interval: 'month' } })).body;
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }], ...subParams })).body;
  return { clock: clock.id as string, customer, price, sub };
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
}

const invoicesOf = async (key: string, sub: string) => (await get(key, `/v1/invoices?subscription=${sub}&limit=100`)).body.data.reverse();
const lastUpdate = async (key: string) => (await eventsOf(key, 'customer.subscription.updated'))[0];

test('a trial added to an active subscription (unused time credited), extended, then renewed at its new end after an advance', async () => {
  const key = newTestKey();
  const { clock, sub } = await onClock(key);
  await advance(key, clock, START + 10 * DAY);
  const trialEnd = START + 20 * DAY;
  const res = await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: trialEnd });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostSubscriptionsSubscriptionExposedId', 200, res.body);
  expectMatchesSdkTypes(res.body);
  expect(res.body).toMatchObject({ status: 'trialing', trial_start: START + 10 * DAY, trial_end: trialEnd, billing_cycle_anchor: trialEnd, latest_invoice: sub.latest_invoice });
  expect(res.body.items.data[0]).toMatchObject({ current_period_start: START + 10 * DAY, current_period_end: trialEnd });
  // 21 unused days of 31 credited, pending for the invoice at the trial's end.
  const pending = (await get(key, '/v1/invoiceitems?pending=true')).body.data;
  expect(pending.map((i: any) => [i.amount, i.proration])).toEqual([[-2100, true]]);
  const event = await lastUpdate(key);
  expect(event.data.object.status).toBe('trialing');
  expect(event.data.previous_attributes).toMatchObject({ status: 'active', trial_end: null, trial_start: null, billing_cycle_anchor: START });

  // Extending the running trial: no further credit, the trial's start kept.
  const longer = START + 25 * DAY;
  const extended = (await e.t.stripe(key).subscriptions.update(sub.id, { trial_end: longer })) as any;
  expect(extended).toMatchObject({ status: 'trialing', trial_start: START + 10 * DAY, trial_end: longer });
  expect(extended.items.data[0]).toMatchObject({ current_period_start: START + 10 * DAY, current_period_end: longer });
  expect((await get(key, '/v1/invoiceitems?pending=true')).body.data).toHaveLength(1);
  expect((await lastUpdate(key)).data.previous_attributes).toMatchObject({ trial_end: trialEnd });

  // Nothing happens at the first trial end; the renewal comes at the new one.
  await advance(key, clock, trialEnd + 60);
  expect((await invoicesOf(key, sub.id)).length).toBe(1);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('trialing');
  await advance(key, clock, longer + 60);
  const invoices = await invoicesOf(key, sub.id);
  expect(invoices.map((i: any) => i.billing_reason)).toEqual(['subscription_create', 'subscription_cycle']);
  // The invoice looks back on the trial that ended; its line bills the month ahead.
  expect(invoices[1]).toMatchObject({ status: 'paid', amount_paid: 3100 - 2100, created: longer, period_start: START + 10 * DAY, period_end: longer });
  expect(invoices[1].lines.data.find((l: any) => !l.parent.subscription_item_details.proration).period).toEqual({ start: longer, end: addInterval(longer, 'month', 1) });
  const renewed = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(renewed).toMatchObject({ status: 'active', latest_invoice: invoices[1].id });
  expect(renewed.items.data[0]).toMatchObject({ current_period_start: longer, current_period_end: addInterval(longer, 'month', 1) });
});

test('trial_end=now ends a running trial: a period starts now, its invoice paid at once, the subscription active', async () => {
  const key = newTestKey();
  const { sub } = await onClock(key, 'pm_card_visa', { trial_period_days: 14 });
  expect(sub.status).toBe('trialing');
  const ended = (await e.t.stripe(key).subscriptions.update(sub.id, { trial_end: 'now' })) as any;
  expectMatchesSdkTypes(ended);
  expect(ended).toMatchObject({ status: 'active', trial_start: START, trial_end: START, billing_cycle_anchor: START });
  expect(ended.items.data[0]).toMatchObject({ current_period_start: START, current_period_end: addInterval(START, 'month', 1) });
  const invoice = (await get(key, `/v1/invoices/${ended.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'paid', billing_reason: 'subscription_update', amount_paid: 3100, period_start: START, period_end: START, parent: { subscription_details: { subscription: sub.id } } });
  expect((await lastUpdate(key)).data.previous_attributes).toMatchObject({ status: 'trialing', trial_end: START + 14 * DAY, latest_invoice: sub.latest_invoice });
  const types = (await get(key, '/v1/events?limit=10')).body.data.map((ev: any) => ev.type);
  expect(types).toEqual(expect.arrayContaining(['invoice.paid', 'invoice.finalized', 'customer.subscription.updated']));
  // Not in a trial any more: `now` changes nothing.
  const again = await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: 'now' });
  expect(again.status).toBe(200);
  expect(again.body.latest_invoice).toBe(ended.latest_invoice);
  expect(await invoicesOf(key, sub.id)).toHaveLength(2);
});

test('trial_end=now with a declining card: past_due with allow_incomplete; a 402 and nothing changed with error_if_incomplete', async () => {
  const key = newTestKey();
  const { sub } = await onClock(key, 'pm_card_chargeCustomerFail', { trial_period_days: 14 });
  expect(sub.status).toBe('trialing');
  const refused = await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: 'now', payment_behavior: 'error_if_incomplete' });
  expectError(refused, 402, { type: 'card_error', code: 'card_declined' });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'trialing', trial_end: START + 14 * DAY, latest_invoice: sub.latest_invoice });
  expect(await invoicesOf(key, sub.id)).toHaveLength(1);

  const res = await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: 'now' });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'past_due', trial_end: START });
  const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'open', billing_reason: 'subscription_update', amount_remaining: 3100, attempt_count: 1 });
  expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(1);

  // default_incomplete: the invoice is left open for the customer to confirm, not attempted.
  const other = await onClock(key, 'pm_card_chargeCustomerFail', { trial_period_days: 14 });
  const deferred = await post(key, `/v1/subscriptions/${other.sub.id}`, { trial_end: 'now', payment_behavior: 'default_incomplete' });
  expect(deferred.body).toMatchObject({ status: 'past_due', trial_end: START });
  expect((await get(key, `/v1/invoices/${deferred.body.latest_invoice}`)).body).toMatchObject({ status: 'open', amount_remaining: 3100, attempt_count: 0 });
  expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(1);
});

test('billing_cycle_anchor=now: a period starts now, invoiced at once with the unused time credited', async () => {
  const key = newTestKey();
  const { clock, sub } = await onClock(key);
  await advance(key, clock, START + 10 * DAY);
  const now = START + 10 * DAY;
  const res = await post(key, `/v1/subscriptions/${sub.id}`, { billing_cycle_anchor: 'now' });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'active', billing_cycle_anchor: now });
  expect(res.body.items.data[0]).toMatchObject({ current_period_start: now, current_period_end: addInterval(now, 'month', 1) });
  const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
  // The new period (3100) less 21 unused days of the old one (2100).
  // Its own period looks back on the part of the old period that ran (START to now).
  expect(invoice).toMatchObject({ status: 'paid', billing_reason: 'subscription_update', amount_paid: 1000, period_start: START, period_end: now });
  expect(invoice.lines.data.map((l: any) => [l.amount, l.parent.subscription_item_details.proration])).toEqual(expect.arrayContaining([[3100, false], [-2100, true]]));
  expect((await get(key, '/v1/invoiceitems?pending=true')).body.data).toHaveLength(0);
  expect((await lastUpdate(key)).data.previous_attributes).toMatchObject({ billing_cycle_anchor: START, latest_invoice: sub.latest_invoice });
  // `unchanged` leaves it be; with `proration_behavior=none` nothing is credited.
  expect((await post(key, `/v1/subscriptions/${sub.id}`, { billing_cycle_anchor: 'unchanged' })).body.latest_invoice).toBe(invoice.id);
  const plain = (await post(key, `/v1/subscriptions/${sub.id}`, { billing_cycle_anchor: 'now', proration_behavior: 'none' })).body;
  expect((await get(key, `/v1/invoices/${plain.latest_invoice}`)).body).toMatchObject({ amount_paid: 3100, billing_reason: 'subscription_update' });
  // The renewal follows the new anchor.
  await advance(key, clock, addInterval(now, 'month', 1) + 60);
  const invoices = await invoicesOf(key, sub.id);
  expect(invoices.map((i: any) => [i.billing_reason, i.created])).toEqual([
    ['subscription_create', START],
    ['subscription_update', now],
    ['subscription_update', now],
    ['subscription_cycle', addInterval(now, 'month', 1)],
  ]);
});

test('a trial_end in the past (or now as a number) is refused in the public API words; a future one with billing_cycle_anchor=now too', async () => {
  const key = newTestKey();
  const { sub } = await onClock(key);
  expectError(await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: START - 1 }), 400, { type: 'invalid_request_error', param: 'trial_end', message: PAST });
  expectError(await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: START }), 400, { param: 'trial_end', message: PAST });
  expectError(await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: START + DAY, billing_cycle_anchor: 'now' }), 400, { param: 'billing_cycle_anchor' });
  expectError(await post(key, `/v1/subscriptions/${sub.id}`, { billing_cycle_anchor: 'later' }), 400, { param: 'billing_cycle_anchor' });
  await expect(e.t.stripe(key).subscriptions.update(sub.id, { trial_end: START - DAY })).rejects.toMatchObject({ type: 'StripeInvalidRequestError', param: 'trial_end', message: PAST });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body).toMatchObject({ status: 'active', trial_end: null });
  expect(await eventsOf(key, 'customer.subscription.updated')).toHaveLength(0);
});

test('on the real clock the worker is due at the new trial end (its trial_will_end first) and at the new period end', async () => {
  const key = newTestKey();
  const customer = await payingCustomer(e.t, key);
  const price = await recurringPrice(e.t, key, 1000);
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  const prisma = e.t.runtime.prisma;
  const nextAction = async () => (await prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } })).nextActionAt;
  const trialEnd = sub.items.data[0].current_period_end + 10 * DAY;
  await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: trialEnd, proration_behavior: 'none' });
  expect(await nextAction()).toBe(trialEnd - 3 * DAY);
  const reset = (await post(key, `/v1/subscriptions/${sub.id}`, { trial_end: 'now' })).body;
  expect(reset.status).toBe('active');
  const end = reset.items.data[0].current_period_end;
  expect(end - reset.items.data[0].current_period_start).toBeGreaterThanOrEqual(28 * DAY);
  // Its invoice.upcoming three days before the new period's end comes first.
  expect(await nextAction()).toBe(end - 3 * DAY);
});
