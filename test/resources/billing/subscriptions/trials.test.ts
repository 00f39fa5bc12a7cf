import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { addInterval } from '../../../../src/resources/billing/invoices/amounts';

// Trials that end without a payment method (`trial_settings[end_behavior][missing_payment_method]`:
// `cancel`, `pause`, `create_invoice`), resuming a paused subscription (`POST …/resume`), and
// `trial_will_end`, on test clocks and on the real clock. A 3100 price over January 22 to
// February 22 (31 days) is worth 100 a day.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('subtrials', { RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const START = Date.UTC(2027, 0, 15, 9) / 1000;
const DAY = 86400;
const TRIAL_END = START + 7 * DAY;

/** A customer on a new clock, with no payment method unless `card`, and a 31.00 monthly price. */
async function onClock(key: string, card?: string) {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body.id as string;
  const customer = (await post(key, '/v1/customers', { test_clock: clock, ...(card ? { payment_method: card } : {}) })).body;
  if (card) {
    const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
    await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  }
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 3100, recurring: { interval: 'month' } })).body;
  return { clock, customer, price };
}

/** A 7-day trial whose end finds the customer without a payment method, with `behavior`. */
async function trialing(key: string, behavior?: string, card?: string) {
  const setup = await onClock(key, card);
  const params = { customer: setup.customer.id, items: [{ price: setup.price.id }], trial_period_days: 7, ...(behavior ? { trial_settings: { end_behavior: { missing_payment_method: behavior } } } : {}) };
  const res = await post(key, '/v1/subscriptions', params);
  expect(res.status).toBe(200);
  return { ...setup, sub: res.body };
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
}

const invoicesOf = async (key: string, sub: string) => (await get(key, `/v1/invoices?subscription=${sub}&limit=100`)).body.data.reverse();

/** Gives the customer a default card (what a paused subscription waits for). */
async function addCard(key: string, customer: string, card = 'pm_card_visa'): Promise<string> {
  const pm = (await post(key, `/v1/payment_methods/${card}/attach`, { customer })).body.id;
  await post(key, `/v1/customers/${customer}`, { invoice_settings: { default_payment_method: pm } });
  return pm;
}

/** A subscription paused at its trial's end (January 22). */
async function paused(key: string) {
  const setup = await trialing(key, 'pause');
  await advance(key, setup.clock, TRIAL_END + 60);
  expect((await get(key, `/v1/subscriptions/${setup.sub.id}`)).body.status).toBe('paused');
  return setup;
}

test('`cancel`: the trial ends without a payment method, the subscription is canceled at its end with no invoice', async () => {
  const key = newTestKey();
  const { clock, sub } = await trialing(key, 'cancel');
  expectMatchesResponseSchema('PostSubscriptions', 200, sub);
  expectMatchesSdkTypes(sub);
  expect(sub).toMatchObject({ status: 'trialing', trial_end: TRIAL_END, trial_settings: { end_behavior: { missing_payment_method: 'cancel' } } });
  // trial_will_end three days before the end, on the clock's time.
  await advance(key, clock, TRIAL_END - 3 * DAY - 60);
  expect(await eventsOf(key, 'customer.subscription.trial_will_end')).toHaveLength(0);
  await advance(key, clock, TRIAL_END - 3 * DAY + 60);
  const willEnd = await eventsOf(key, 'customer.subscription.trial_will_end');
  expect(willEnd).toHaveLength(1);
  expect(willEnd[0].data.object).toMatchObject({ id: sub.id, status: 'trialing', trial_end: TRIAL_END });

  await advance(key, clock, TRIAL_END + 60);
  const ended = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(ended).toMatchObject({ status: 'canceled', canceled_at: TRIAL_END, ended_at: TRIAL_END, latest_invoice: sub.latest_invoice });
  const deleted = await eventsOf(key, 'customer.subscription.deleted');
  expect(deleted).toHaveLength(1);
  expect(deleted[0].data.object).toMatchObject({ id: sub.id, status: 'canceled' });
  expectMatchesSdkTypes(deleted[0], 'customer.subscription.deleted');
  expect((await invoicesOf(key, sub.id)).map((i: any) => i.billing_reason)).toEqual(['subscription_create']);
  expect(await eventsOf(key, 'customer.subscription.paused')).toHaveLength(0);
});

test('`pause`: the subscription is paused at the trial end (customer.subscription.paused, no invoice) and stays so while time passes', async () => {
  const key = newTestKey();
  const { clock, sub } = await trialing(key, 'pause');
  await advance(key, clock, TRIAL_END + 60);
  const pausedSub = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expectMatchesResponseSchema('GetSubscriptionsSubscriptionExposedId', 200, pausedSub);
  expect(pausedSub).toMatchObject({ status: 'paused', pause_collection: null, latest_invoice: sub.latest_invoice, trial_settings: { end_behavior: { missing_payment_method: 'pause' } } });
  const pausedEvents = await eventsOf(key, 'customer.subscription.paused');
  expect(pausedEvents).toHaveLength(1);
  expect(pausedEvents[0].data.object).toMatchObject({ id: sub.id, status: 'paused' });
  expectMatchesSdkTypes(pausedEvents[0], 'customer.subscription.paused');
  const updated = (await eventsOf(key, 'customer.subscription.updated'))[0];
  expect(updated.data.previous_attributes).toMatchObject({ status: 'trialing' });
  // Nothing is billed while paused, however long.
  await advance(key, clock, addInterval(TRIAL_END, 'month', 2));
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('paused');
  expect((await invoicesOf(key, sub.id)).map((i: any) => i.billing_reason)).toEqual(['subscription_create']);
  expect(await e.t.runtime.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id }, select: { nextActionAt: true } })).toEqual({ nextActionAt: null });
  expect(await eventsOf(key, 'customer.subscription.deleted')).toHaveLength(0);
});

test('`create_invoice` (the default) and end behaviors with a payment method: the trial ends with its invoice as before', async () => {
  const key = newTestKey();
  // No payment method, the default behavior: the invoice is made and its charge fails.
  const plain = await trialing(key);
  expect(plain.sub.trial_settings).toEqual({ end_behavior: { billing_cycle_anchor: null, missing_payment_method: 'create_invoice' } });
  await advance(key, plain.clock, TRIAL_END + 60);
  const renewed = (await get(key, `/v1/subscriptions/${plain.sub.id}`)).body;
  expect(renewed.status).toBe('past_due');
  expect((await invoicesOf(key, plain.sub.id)).map((i: any) => [i.billing_reason, i.status])).toEqual([
    ['subscription_create', 'paid'],
    ['subscription_cycle', 'open'],
  ]);

  // `pause` with a customer who has a card: the trial's end bills it.
  const carded = await trialing(key, 'pause', 'pm_card_visa');
  await advance(key, carded.clock, TRIAL_END + 60);
  expect((await get(key, `/v1/subscriptions/${carded.sub.id}`)).body.status).toBe('active');
  expect((await invoicesOf(key, carded.sub.id)).map((i: any) => [i.billing_reason, i.status, i.amount_paid])).toEqual([
    ['subscription_create', 'paid', 0],
    ['subscription_cycle', 'paid', 3100],
  ]);

  // Set on update (and shown there), with the SDK; a card on the subscription itself counts too.
  const later = await trialing(key);
  const stripe = e.t.stripe(key);
  const changed = await stripe.subscriptions.update(later.sub.id, { trial_settings: { end_behavior: { missing_payment_method: 'cancel' } } });
  expect(changed.trial_settings).toEqual({ end_behavior: { billing_cycle_anchor: null, missing_payment_method: 'cancel' } });
  const event = (await eventsOf(key, 'customer.subscription.updated'))[0];
  expect(event.data.previous_attributes).toEqual({ trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } } });
  const pm = (await post(key, '/v1/payment_methods/pm_card_visa/attach', { customer: later.customer.id })).body.id;
  await stripe.subscriptions.update(later.sub.id, { default_payment_method: pm });
  await advance(key, later.clock, TRIAL_END + 60);
  expect((await get(key, `/v1/subscriptions/${later.sub.id}`)).body.status).toBe('active');
  expectError(await post(key, '/v1/subscriptions', { customer: later.customer.id, items: [{ price: later.price.id }], trial_settings: { end_behavior: { missing_payment_method: 'later' } } }), 400, {
    param: 'trial_settings[end_behavior][missing_payment_method]',
  });
});

test('resume (billing_cycle_anchor=now, the default): a period starts now, its invoice charged; customer.subscription.resumed', async () => {
  const key = newTestKey();
  const { clock, customer, sub } = await paused(key);
  await advance(key, clock, TRIAL_END + 10 * DAY);
  await addCard(key, customer.id);
  const resumed = await e.t.stripe(key).subscriptions.resume(sub.id);
  expectMatchesSdkTypes(resumed);
  const now = TRIAL_END + 10 * DAY;
  expect(resumed).toMatchObject({ status: 'active', billing_cycle_anchor: now });
  expect(resumed.items.data[0]).toMatchObject({ current_period_start: now, current_period_end: addInterval(now, 'month', 1) });
  const invoice = (await get(key, `/v1/invoices/${resumed.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'paid', amount_paid: 3100, billing_reason: 'subscription_update', created: now });
  expect(invoice.lines.data[0].period).toEqual({ start: now, end: addInterval(now, 'month', 1) });
  const events = await eventsOf(key, 'customer.subscription.resumed');
  expect(events).toHaveLength(1);
  expect(events[0].data.object).toMatchObject({ id: sub.id, status: 'active' });
  expectMatchesSdkTypes(events[0], 'customer.subscription.resumed');
  expect((await eventsOf(key, 'customer.subscription.updated'))[0].data.previous_attributes).toMatchObject({ status: 'paused' });
  // It renews again a month on.
  await advance(key, clock, addInterval(now, 'month', 1) + 60);
  const renewals = (await invoicesOf(key, sub.id)).map((i: any) => [i.billing_reason, i.status]);
  expect(renewals).toEqual([
    ['subscription_create', 'paid'],
    ['subscription_update', 'paid'],
    ['subscription_cycle', 'paid'],
  ]);

  // Only a paused subscription resumes.
  const res = await post(key, `/v1/subscriptions/${sub.id}/resume`, {});
  expectError(res, 400, { type: 'invalid_request_error', param: 'subscription' });
  expect(res.body.error.message).toContain('paused');
  await expect(e.t.stripe(key).subscriptions.resume(sub.id)).rejects.toMatchObject({ type: 'StripeInvalidRequestError' });
  expectError(await post(key, '/v1/subscriptions/sub_nope/resume', {}), 404, { type: 'invalid_request_error', code: 'resource_missing' });
  expectError(await post(key, `/v1/subscriptions/${sub.id}/resume`, { billing_cycle_anchor: 'later' }), 400, { param: 'billing_cycle_anchor' });
});

test('resume with billing_cycle_anchor=unchanged: the period around now on the old anchor, its rest prorated per proration_behavior', async () => {
  const key = newTestKey();
  const periodEnd = addInterval(TRIAL_END, 'month', 1);
  const now = TRIAL_END + 10 * DAY;
  // create_prorations (the default): the remaining 21 of 31 days pending for the next renewal.
  const first = await paused(key);
  await advance(key, first.clock, now);
  await addCard(key, first.customer.id);
  const resumed = (await post(key, `/v1/subscriptions/${first.sub.id}/resume`, { billing_cycle_anchor: 'unchanged' })).body;
  expectMatchesResponseSchema('PostSubscriptionsSubscriptionResume', 200, resumed);
  expect(resumed).toMatchObject({ status: 'active', billing_cycle_anchor: TRIAL_END, latest_invoice: first.sub.latest_invoice });
  expect(resumed.items.data[0]).toMatchObject({ current_period_start: TRIAL_END, current_period_end: periodEnd });
  const pending = (await get(key, `/v1/invoiceitems?pending=true&customer=${first.customer.id}`)).body.data;
  expect(pending.map((i: any) => [i.amount, i.proration, i.period])).toEqual([[2100, true, { start: now, end: periodEnd }]]);
  expect(await eventsOf(key, 'customer.subscription.resumed')).toHaveLength(1);
  await advance(key, first.clock, periodEnd + 60);
  const cycle = (await invoicesOf(key, first.sub.id)).at(-1);
  expect(cycle).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', amount_paid: 3100 + 2100 });

  // always_invoice: the proration billed at once; none: nothing billed until the period's end.
  const second = await paused(key);
  await advance(key, second.clock, now);
  await addCard(key, second.customer.id);
  // Newer versions send the anchor as `{type}`, as the SDK does.
  const invoiced = (await e.t.stripe(key).subscriptions.resume(second.sub.id, { billing_cycle_anchor: { type: 'unchanged' }, proration_behavior: 'always_invoice' })) as any;
  expect(invoiced.status).toBe('active');
  expect((await get(key, `/v1/invoices/${invoiced.latest_invoice}`)).body).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', amount_paid: 2100 });
  const third = await paused(key);
  await advance(key, third.clock, now);
  await addCard(key, third.customer.id);
  const quiet = (await post(key, `/v1/subscriptions/${third.sub.id}/resume`, { billing_cycle_anchor: 'unchanged', proration_behavior: 'none' })).body;
  expect(quiet).toMatchObject({ status: 'active', latest_invoice: third.sub.latest_invoice });
  expect((await get(key, `/v1/invoiceitems?pending=true&customer=${third.customer.id}`)).body.data).toHaveLength(0);
  expectError(await post(key, `/v1/subscriptions/${third.sub.id}/resume`, { billing_cycle_anchor: 'unchanged' }), 400, { param: 'subscription' });
});

test('resume whose invoice is declined: past_due (resume_on_payment_attempt, the default), or still paused until the invoice is paid (resume_on_payment_success)', async () => {
  const key = newTestKey();
  const attempt = await paused(key);
  await addCard(key, attempt.customer.id, 'pm_card_chargeCustomerFail');
  const resumed = await post(key, `/v1/subscriptions/${attempt.sub.id}/resume`, {});
  expect(resumed.status).toBe(200);
  expect(resumed.body.status).toBe('past_due');
  expect((await get(key, `/v1/invoices/${resumed.body.latest_invoice}`)).body).toMatchObject({ status: 'open', billing_reason: 'subscription_update', attempt_count: 1 });
  expect(await eventsOf(key, 'customer.subscription.resumed')).toHaveLength(1);

  const success = await paused(key);
  await addCard(key, success.customer.id, 'pm_card_chargeCustomerFail');
  const res = await post(key, `/v1/subscriptions/${success.sub.id}/resume`, { payment_behavior: 'resume_on_payment_success' });
  expect(res.status).toBe(200);
  expect(res.body.status).toBe('paused');
  const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'open', billing_reason: 'subscription_update', attempt_count: 1 });
  expect(await eventsOf(key, 'customer.subscription.resumed')).toHaveLength(1);
  expect((await post(key, `/v1/invoices/${invoice.id}/pay`, { payment_method: 'pm_card_visa' })).body.status).toBe('paid');
  expect((await get(key, `/v1/subscriptions/${success.sub.id}`)).body.status).toBe('active');
  const events = await eventsOf(key, 'customer.subscription.resumed');
  expect(events).toHaveLength(2);
  expect(events[0].data.object).toMatchObject({ id: success.sub.id, status: 'active' });
  expectError(await post(key, `/v1/subscriptions/${success.sub.id}/resume`, { payment_behavior: 'later' }), 400, { param: 'payment_behavior' });
});

test('on the real clock: trial_will_end (due at once for a trial shorter than three days) and the trial ending in `cancel` and `pause`', async () => {
  const key = newTestKey();
  const customer = (await post(key, '/v1/customers', { email: 'trial@example.test' })).body;
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body;
  const trialEnd = Math.floor(Date.now() / 1000) + 3;
  const make = async (behavior: string) =>
    (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }], trial_end: trialEnd, trial_settings: { end_behavior: { missing_payment_method: behavior } } })).body;
  const canceling = await make('cancel');
  const pausing = await make('pause');
  await until(async () => (await eventsOf(key, 'customer.subscription.trial_will_end')).length === 2, 15000, 'trial_will_end on the real clock');
  await until(async () => (await get(key, `/v1/subscriptions/${canceling.id}`)).body.status === 'canceled', 20000, 'canceled at the trial end');
  await until(async () => (await get(key, `/v1/subscriptions/${pausing.id}`)).body.status === 'paused', 20000, 'paused at the trial end');
  expect((await get(key, `/v1/subscriptions/${canceling.id}`)).body.ended_at).toBeGreaterThanOrEqual(trialEnd);
  expect(await eventsOf(key, 'customer.subscription.paused')).toHaveLength(1);
  expect(await eventsOf(key, 'customer.subscription.deleted')).toHaveLength(1);
  expect((await get(key, `/v1/invoices?customer=${customer.id}`)).body.data.map((i: any) => i.billing_reason)).toEqual(['subscription_create', 'subscription_create']);
});
