import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { createCoupon } from '../../../helpers/fixtures';
import { addInterval } from '../../../../src/resources/billing/invoices/amounts';
import { LATEST_API_VERSION } from '../../../../src/kernel/versions';

// Discounts as invoices apply them, one after another on what the ones before left of each line:
// an item's own first, then the subscription's in their order, then (only for a subscription
// without one of its own) its customer's; `once` ends with the first invoice, `repeating` after
// its months; update replaces the list (`''` clears it) and DELETE …/discount removes it. On test
// clocks, so every figure is worked out by hand below.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('subdiscounts');
});
afterAll(() => e.close());

const raw = requestsOf(() => e.t);
// Every request at the newest version unless it says otherwise (the account's default is older).
const NEWEST = { 'Stripe-Version': LATEST_API_VERSION };
const get = (key: string, path: string, headers: Record<string, string> = NEWEST) => raw.get(key, path, headers);
const post = (key: string, path: string, body: Record<string, unknown> = {}, headers: Record<string, string> = NEWEST) => raw.post(key, path, body, headers);
const del = (key: string, path: string, headers: Record<string, string> = NEWEST) => raw.del(key, path, headers);
const eventsOf = async (key: string, type: string) => (await get(key, `/v1/events?type=${type}`)).body.data;
const START = Date.UTC(2027, 0, 15, 9) / 1000;
const FEB = addInterval(START, 'month', 1);
const MAR = addInterval(START, 'month', 2);
const OLD = { 'Stripe-Version': '2024-04-10' };

/** A customer on a new test clock at START paying with `pm_card_visa` (`params` at 2024-04-10: a `coupon`, say). */
async function clockCustomer(key: string, params: Record<string, unknown> = {}) {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body;
  const customer = (await post(key, '/v1/customers', { test_clock: clock.id, payment_method: 'pm_card_visa', ...params }, OLD)).body;
  expect(customer.id).toMatch(/^cus_/);
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  return { clock: clock.id as string, customer: customer.id as string };
}

const monthly = async (key: string, amount: number, name: string) =>
  (await post(key, '/v1/prices', { product_data: { name }, currency: 'usd', unit_amount: amount, recurring: { interval: 'month' } })).body.id as string;

async function subscribe(key: string, customer: string, params: Record<string, unknown>) {
  const sub = await post(key, '/v1/subscriptions', { customer, ...params });
  expect(sub.status).toBe(200);
  return sub.body;
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
}

/** The subscription's invoices, oldest first. */
const invoicesOf = async (key: string, sub: string) => (await get(key, `/v1/invoices?subscription=${sub}&limit=100`)).body.data.reverse();

const coupon = async (key: string, params: Record<string, unknown>) => (await createCoupon(e.t, key, params)).id as string;

test('stacked: item percent, then the subscription percent and amount off on what is left; the customer discount waits', async () => {
  const key = newTestKey();
  const { customer } = await clockCustomer(key, { coupon: await coupon(key, { percent_off: 50, duration: 'forever' }) });
  const [a, b] = [await monthly(key, 3000, 'A'), await monthly(key, 2000, 'B')];
  const sub = await subscribe(key, customer, {
    items: [{ price: a, discounts: [{ coupon: await coupon(key, { percent_off: 10, duration: 'forever' }) }] }, { price: b }],
    discounts: [{ coupon: await coupon(key, { percent_off: 20, duration: 'forever' }) }, { coupon: await coupon(key, { amount_off: 500, currency: 'usd', duration: 'forever' }) }],
  });
  const [itemDiscount] = sub.items.data[0].discounts;
  const [twenty, fiveHundred] = sub.discounts;
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  // A 3000: 10 % → 300, left 2700; 20 % of 2700 → 540, left 2160. B 2000: 20 % → 400, left 1600.
  // 500 off over 2160 + 1600 = 3760: A 500 × 2160 / 3760 = 287.2 → 287, B the rest, 213.
  // The customer's 50 % is not applied: the subscription has discounts of its own.
  const [lineA, lineB] = (await get(key, `/v1/invoices/${invoice.id}/lines`)).body.data;
  expect(lineA.discount_amounts).toEqual([
    { amount: 300, discount: itemDiscount },
    { amount: 540, discount: twenty },
    { amount: 287, discount: fiveHundred },
  ]);
  expect(lineB.discount_amounts).toEqual([
    { amount: 400, discount: twenty },
    { amount: 213, discount: fiveHundred },
  ]);
  expect(invoice.total_discount_amounts).toEqual([
    { amount: 300, discount: itemDiscount },
    { amount: 940, discount: twenty },
    { amount: 500, discount: fiveHundred },
  ]);
  expect(invoice).toMatchObject({ subtotal: 5000, total: 3260, amount_due: 3260, amount_paid: 3260, status: 'paid' });

  // Without discounts of its own, a subscription bills its customer's, after its items' own:
  // 3000 − 10 % = 2700, − 50 % = 1350.
  const fallback = await subscribe(key, customer, { items: [{ price: await monthly(key, 3000, 'C'), discounts: [{ coupon: await coupon(key, { percent_off: 10, duration: 'forever' }) }] }] });
  const second = (await get(key, `/v1/invoices/${fallback.latest_invoice}`)).body;
  expect(second).toMatchObject({ subtotal: 3000, total: 1350 });
  expect(second.total_discount_amounts.map((d: any) => d.amount)).toEqual([300, 1350]);
});

test('two percentages compound; an amount off never takes more than is left', async () => {
  const key = newTestKey();
  const { customer } = await clockCustomer(key);
  const sub = await subscribe(key, customer, {
    items: [{ price: await monthly(key, 1000, 'A') }],
    discounts: [
      { coupon: await coupon(key, { percent_off: 50, duration: 'forever' }) },
      { coupon: await coupon(key, { percent_off: 50, duration: 'forever' }) },
      { coupon: await coupon(key, { amount_off: 300, currency: 'usd', duration: 'forever' }) },
    ],
  });
  // 1000 − 500 = 500, − 250 = 250, − min(300, 250) = 0.
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  expect(invoice.total_discount_amounts.map((d: any) => d.amount)).toEqual([500, 250, 250]);
  expect(invoice).toMatchObject({ subtotal: 1000, total: 0, amount_due: 0 });
});

test('`once` ends with the first invoice, `repeating` after its months, across renewals on a test clock', async () => {
  const key = newTestKey();
  const { clock, customer } = await clockCustomer(key);
  const once = await coupon(key, { amount_off: 500, currency: 'usd', duration: 'once' });
  const repeating = await coupon(key, { percent_off: 10, duration: 'repeating', duration_in_months: 2 });
  const sub = await subscribe(key, customer, { items: [{ price: await monthly(key, 3100, 'Gold') }], discounts: [{ coupon: once }, { coupon: repeating }] });
  // The first invoice: 3100 − 500 = 2600, − 10 % = 2340. The once-only discount is gone after it.
  const first = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  expect(first.total_discount_amounts.map((d: any) => d.amount)).toEqual([500, 260]);
  const [onceId, repeatingId] = first.discounts;
  expect(sub.discounts).toEqual([repeatingId]);
  expect(onceId).not.toBe(repeatingId);
  await advance(key, clock, FEB + 60);
  // 15 Feb, within the two months: 3100 − 310 = 2790.
  await advance(key, clock, MAR + 60);
  // 15 Mar: the repeating discount ended with its two months (at 15 Mar): 3100.
  const invoices = await invoicesOf(key, sub.id);
  expect(invoices.map((i: any) => i.total)).toEqual([2340, 2790, 3100]);
  expect(invoices.map((i: any) => i.amount_paid)).toEqual([2340, 2790, 3100]);
  expect(invoices[1].discounts).toEqual([repeatingId]);
  expect(invoices[2].discounts).toEqual([]);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.discounts).toEqual([]);
});

test('update replaces `discounts` (applied from the next invoice) and `discounts=""` clears them', async () => {
  const key = newTestKey();
  const { clock, customer } = await clockCustomer(key);
  const sub = await subscribe(key, customer, { items: [{ price: await monthly(key, 3100, 'Gold') }], discounts: [{ coupon: await coupon(key, { percent_off: 10, duration: 'forever' }) }] });
  const replaced = await post(key, `/v1/subscriptions/${sub.id}`, {
    discounts: [{ coupon: await coupon(key, { percent_off: 20, duration: 'forever' }) }, { coupon: await coupon(key, { amount_off: 300, currency: 'usd', duration: 'forever' }) }],
  });
  expect(replaced.status).toBe(200);
  expect(replaced.body.discounts).toHaveLength(2);
  expect(replaced.body.discounts).not.toContain(sub.discounts[0]);
  await advance(key, clock, FEB + 60);
  expect((await post(key, `/v1/subscriptions/${sub.id}`, { discounts: '' })).body.discounts).toEqual([]);
  await advance(key, clock, MAR + 60);
  // 2790 (10 %), then 3100 − 620 = 2480, − 300 = 2180, then nothing off.
  expect((await invoicesOf(key, sub.id)).map((i: any) => i.total)).toEqual([2790, 2180, 3100]);
});

test("DELETE /v1/subscriptions/{id}/discount: its own discounts go, its customer's applies from the next invoice", async () => {
  const key = newTestKey();
  const customerCoupon = await coupon(key, { percent_off: 25, duration: 'forever' });
  const { clock, customer } = await clockCustomer(key, { coupon: customerCoupon });
  const own = await coupon(key, { percent_off: 10, duration: 'forever' });
  const second = await coupon(key, { amount_off: 100, currency: 'usd', duration: 'forever' });
  const itemCoupon = await coupon(key, { amount_off: 50, currency: 'usd', duration: 'forever' });
  const sub = await subscribe(key, customer, { items: [{ price: await monthly(key, 3100, 'Gold'), discounts: [{ coupon: itemCoupon }] }], discounts: [{ coupon: own }, { coupon: second }] });
  const deleted = await del(key, `/v1/subscriptions/${sub.id}/discount`);
  expect(deleted.status).toBe(200);
  expect(deleted.body).toEqual({
    id: sub.discounts[0],
    object: 'discount',
    checkout_session: null,
    customer,
    customer_account: null,
    deleted: true,
    invoice: null,
    invoice_item: null,
    promotion_code: null,
    source: { coupon: own, type: 'coupon' },
    start: START,
    subscription: sub.id,
    subscription_item: null,
  });
  expectMatchesResponseSchema('DeleteSubscriptionsSubscriptionExposedIdDiscount', 200, deleted.body);
  expectMatchesSdkTypes(deleted.body);
  const after = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(after.discounts).toEqual([]);
  // The item's own discount stays.
  expect(after.items.data[0].discounts).toEqual(sub.items.data[0].discounts);
  // One event per discount, each the discount as it was; the subscription's update.
  const events = await eventsOf(key, 'customer.discount.deleted');
  expect(events.map((ev: any) => ev.data.object.id).sort()).toEqual([...sub.discounts].sort());
  for (const ev of events) expect(ev.data.object).toMatchObject({ object: 'discount', subscription: sub.id, customer });
  expectMatchesSdkTypes(events[0], 'customer.discount.deleted');
  const [updated] = await eventsOf(key, 'customer.subscription.updated');
  expect(updated.data.previous_attributes).toEqual({ discounts: sub.discounts });
  // Nothing left to delete: 404.
  expectError(await del(key, `/v1/subscriptions/${sub.id}/discount`), 404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No active discount for subscription: ${sub.id}`,
  });
  expectError(await del(key, '/v1/subscriptions/sub_nope/discount'), 404, { code: 'resource_missing', message: "No such subscription: 'sub_nope'" });
  await advance(key, clock, FEB + 60);
  // First 3100 − 50 (item) = 3050, − 10 % = 2745, − 100 = 2645; after: 3050 − 25 % (762.5 → 763) = 2287.
  expect((await invoicesOf(key, sub.id)).map((i: any) => i.total)).toEqual([2645, 2287]);
});

test('the official SDK deletes a subscription discount; older versions show its coupon whole', async () => {
  const key = newTestKey();
  const { customer } = await clockCustomer(key);
  const percent = await coupon(key, { percent_off: 10, duration: 'forever' });
  const sub = await subscribe(key, customer, { items: [{ price: await monthly(key, 1000, 'Gold') }], discounts: [{ coupon: percent }] });
  const stripe = e.t.stripe(key);
  const deleted = await stripe.subscriptions.deleteDiscount(sub.id);
  expect(deleted).toMatchObject({ id: sub.discounts[0], object: 'discount', deleted: true, subscription: sub.id, source: { coupon: percent, type: 'coupon' } });
  const missing = await stripe.subscriptions.deleteDiscount(sub.id).catch((err: unknown) => err);
  expect(missing).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404, code: 'resource_missing' });

  const older = await subscribe(key, customer, { items: [{ price: await monthly(key, 1000, 'Silver') }], discounts: [{ coupon: percent }] });
  const old = await del(key, `/v1/subscriptions/${older.id}/discount`, OLD);
  expect(old.status).toBe(200);
  expect(old.body).toMatchObject({ id: older.discounts[0], deleted: true, coupon: { id: percent, object: 'coupon', percent_off: 10 } });
  expect(old.body.source).toBeUndefined();
});
