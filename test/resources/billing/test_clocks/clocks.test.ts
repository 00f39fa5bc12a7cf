import Stripe from 'stripe';
import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { MAX_FROZEN_TIME } from '../../../../src/resources/billing/test_clocks/service';

// Test clocks as the Stripe CLI's fixtures use them (frozen in 2020, advanced month by month
// through the SDK), the public API's advance limit, and the periods of renewal invoices: an
// invoice's own period looks back on the period that ended, its subscription line bills the next
// one in advance, and prorations keep their own. Every time below is written out by hand.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('clocks');
});
afterAll(() => e.close());

const { post, get } = requestsOf(() => e.t);

const JAN_1_2020 = 1577836800;
const FEB_1_2020 = 1580515200;
const FEB_15_2020 = 1581724800;
const MAR_1_2020 = 1583020800;
const APR_1_2020 = 1585699200;
const MAY_1_2020 = 1588291200;
const JUN_1_2020 = 1590969600;
const JAN_1_2022 = 1640995200;

async function advance(stripe: Stripe, clock: string, to: number): Promise<void> {
  const advancing = await stripe.testHelpers.testClocks.advance(clock, { frozen_time: to });
  expectMatchesSdkTypes(advancing);
  expect(advancing).toMatchObject({ status: 'advancing', status_details: { advancing: { target_frozen_time: to } } });
  await until(async () => (await stripe.testHelpers.testClocks.retrieve(clock)).status === 'ready', 30000, `${clock} ready`);
  expect((await stripe.testHelpers.testClocks.retrieve(clock)).frozen_time).toBe(to);
}

const invoicesOf = async (stripe: Stripe, sub: string) => (await stripe.invoices.list({ subscription: sub, limit: 100 })).data.reverse();
const subscriptionLine = (invoice: Stripe.Invoice) => invoice.lines.data.find((l) => !l.parent?.subscription_item_details?.proration)!;

test('a clock frozen at 2020-01-01 (the Stripe CLI fixtures): month-by-month renewals whose invoices look back one period', async () => {
  const key = newTestKey();
  const stripe = e.t.stripe(key);
  const clock = await stripe.testHelpers.testClocks.create({ frozen_time: JAN_1_2020, name: 'fixtures' });
  expectMatchesSdkTypes(clock);
  expect(clock).toMatchObject({ object: 'test_helpers.test_clock', frozen_time: JAN_1_2020, status: 'ready', name: 'fixtures' });
  const customer = await stripe.customers.create({ test_clock: clock.id, payment_method: 'pm_card_visa' });
  const pm = (await stripe.paymentMethods.list({ customer: customer.id })).data[0].id;
  await stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: pm } });
  const price = await stripe.prices.create({ product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } });
  const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }] });
  expect(sub).toMatchObject({ status: 'active', start_date: JAN_1_2020, created: JAN_1_2020 });
  expect(sub.items.data[0]).toMatchObject({ current_period_start: JAN_1_2020, current_period_end: FEB_1_2020 });

  // The first invoice: its own period is its creation time; its line bills January.
  const [first] = await invoicesOf(stripe, sub.id);
  expectMatchesSdkTypes(first);
  expect(first).toMatchObject({ billing_reason: 'subscription_create', status: 'paid', created: JAN_1_2020, period_start: JAN_1_2020, period_end: JAN_1_2020 });
  expect(subscriptionLine(first).period).toEqual({ start: JAN_1_2020, end: FEB_1_2020 });

  // February's renewal: the invoice looks back on January, its line bills February.
  await advance(stripe, clock.id, FEB_1_2020);
  let invoices = await invoicesOf(stripe, sub.id);
  expect(invoices).toHaveLength(2);
  expect(invoices[1]).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', amount_paid: 1000, created: FEB_1_2020, period_start: JAN_1_2020, period_end: FEB_1_2020 });
  expect(subscriptionLine(invoices[1]).period).toEqual({ start: FEB_1_2020, end: MAR_1_2020 });

  // Two units from February 15: 2020 is a leap year, so 15 of February's 29 days are left.
  await advance(stripe, clock.id, FEB_15_2020);
  await stripe.subscriptions.update(sub.id, { items: [{ id: sub.items.data[0].id, quantity: 2 }] });
  const pending = (await stripe.invoiceItems.list({ pending: true } as Stripe.InvoiceItemListParams)).data;
  // −1000 × 15/29 = −517.24 and 2000 × 15/29 = 1034.48, each rounded on its own.
  expect(pending.map((i) => i.amount).sort((a, b) => a - b)).toEqual([-517, 1034]);

  // March's renewal: the invoice looks back on February, its line bills March for two, the
  // prorations keep their own period (February 15 to March 1).
  await advance(stripe, clock.id, MAR_1_2020);
  invoices = await invoicesOf(stripe, sub.id);
  expect(invoices).toHaveLength(3);
  const march = invoices[2];
  expectMatchesSdkTypes(march);
  expect(march).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', amount_paid: 2000 - 517 + 1034, created: MAR_1_2020, period_start: FEB_1_2020, period_end: MAR_1_2020 });
  expect(subscriptionLine(march)).toMatchObject({ amount: 2000, quantity: 2, period: { start: MAR_1_2020, end: APR_1_2020 } });
  const prorations = march.lines.data.filter((l) => l.parent?.subscription_item_details?.proration);
  expect(prorations.map((l) => [l.amount, l.period])).toEqual(
    expect.arrayContaining([
      [-517, { start: FEB_15_2020, end: MAR_1_2020 }],
      [1034, { start: FEB_15_2020, end: MAR_1_2020 }],
    ]),
  );
  expect(prorations).toHaveLength(2);

  // April: the invoice.upcoming three days before already shows the look-back period.
  await advance(stripe, clock.id, APR_1_2020);
  invoices = await invoicesOf(stripe, sub.id);
  expect(invoices[3]).toMatchObject({ billing_reason: 'subscription_cycle', amount_paid: 2000, period_start: MAR_1_2020, period_end: APR_1_2020 });
  expect(subscriptionLine(invoices[3]).period).toEqual({ start: APR_1_2020, end: MAY_1_2020 });
  const upcoming = (await get(key, '/v1/events?type=invoice.upcoming&limit=1')).body.data[0].data.object;
  expect(upcoming).toMatchObject({ created: APR_1_2020 - 3 * 86400, period_start: MAR_1_2020, period_end: APR_1_2020 });
  expect(upcoming.lines.data[0].period).toEqual({ start: APR_1_2020, end: MAY_1_2020 });

  // The advance limit: two intervals of the shortest subscription (April 1 + two months).
  const tooFar = await post(key, `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: JUN_1_2020 + 1 });
  expectError(tooFar, 400, {
    type: 'invalid_request_error',
    code: 'parameter_invalid',
    param: 'frozen_time',
    message: `Cannot advance the test clock to ${JUN_1_2020 + 1}: it can be advanced at most two intervals of its shortest subscription (1 month) at once, to ${JUN_1_2020}. Advance it in steps.`,
  });
  await expect(stripe.testHelpers.testClocks.advance(clock.id, { frozen_time: JUN_1_2020 + 1 })).rejects.toMatchObject({ type: 'StripeInvalidRequestError', param: 'frozen_time' });
  expect((await get(key, `/v1/test_helpers/test_clocks/${clock.id}`)).body).toMatchObject({ status: 'ready', frozen_time: APR_1_2020 });
  // Exactly two intervals is allowed: May's and June's renewals run.
  await advance(stripe, clock.id, JUN_1_2020);
  invoices = await invoicesOf(stripe, sub.id);
  expect(invoices.map((i) => [i.period_start, i.period_end, i.created])).toEqual([
    [JAN_1_2020, JAN_1_2020, JAN_1_2020],
    [JAN_1_2020, FEB_1_2020, FEB_1_2020],
    [FEB_1_2020, MAR_1_2020, MAR_1_2020],
    [MAR_1_2020, APR_1_2020, APR_1_2020],
    [APR_1_2020, MAY_1_2020, MAY_1_2020],
    [MAY_1_2020, JUN_1_2020, JUN_1_2020],
  ]);
});

test('a clock without subscriptions advances at most two years at once; frozen times past what the sandbox stores are refused', async () => {
  const key = newTestKey();
  const stripe = e.t.stripe(key);
  const clock = await stripe.testHelpers.testClocks.create({ frozen_time: JAN_1_2020 });
  expectError(await post(key, `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: JAN_1_2022 + 1 }), 400, {
    param: 'frozen_time',
    message: `Cannot advance the test clock to ${JAN_1_2022 + 1}: it can be advanced at most two years when it has no subscriptions at once, to ${JAN_1_2022}. Advance it in steps.`,
  });
  await advance(stripe, clock.id, JAN_1_2022);
  // Not backwards, nor to the time it is at.
  expectError(await post(key, `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: JAN_1_2022 }), 400, { param: 'frozen_time', code: 'parameter_invalid' });

  // Any time the sandbox can bill from: long ago or far ahead of now, not before 1970 nor so
  // late that a subscription's period would end past 2038-01-19.
  const past = await stripe.testHelpers.testClocks.create({ frozen_time: 86400 });
  expect(past.frozen_time).toBe(86400);
  const ahead = await stripe.testHelpers.testClocks.create({ frozen_time: MAX_FROZEN_TIME });
  expect(ahead.frozen_time).toBe(MAX_FROZEN_TIME);
  expectError(await post(key, '/v1/test_helpers/test_clocks', { frozen_time: MAX_FROZEN_TIME + 1 }), 400, { param: 'frozen_time', code: 'parameter_invalid' });
  expectError(await post(key, '/v1/test_helpers/test_clocks', { frozen_time: -1 }), 400, { param: 'frozen_time', code: 'parameter_invalid' });
  expectError(await post(key, `/v1/test_helpers/test_clocks/${ahead.id}/advance`, { frozen_time: MAX_FROZEN_TIME + 1 }), 400, { param: 'frozen_time', code: 'parameter_invalid' });
  // A subscription on the latest clock fits: its three-year period ends before 2038-01-19.
  const customer = await stripe.customers.create({ test_clock: ahead.id });
  const price = await stripe.prices.create({ product_data: { name: 'Long' }, currency: 'usd', unit_amount: 500, recurring: { interval: 'year', interval_count: 3 } });
  const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }], collection_method: 'send_invoice', days_until_due: 30 });
  expect(sub.items.data[0].current_period_start).toBe(MAX_FROZEN_TIME);
  expect(sub.items.data[0].current_period_end).toBeLessThanOrEqual(2_147_483_647);
});
