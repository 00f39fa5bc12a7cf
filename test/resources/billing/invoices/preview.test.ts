import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { recurringPrice } from '../../../helpers/billing';
import { createPrice } from '../../../helpers/fixtures';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { client, MAJORS } from '../../../conformance/sdk_versions/majors';
import { formatDate } from '../../../../src/resources/billing/invoices/amounts';

// Invoice previews against hand-computed figures. Subscriptions sit on a test clock frozen at
// their start, January 15 09:00 UTC: the period runs to February 15, 31 days, so a 3100 price is
// worth 100 a day, and `proration_date` a whole number of days in gives whole figures. Each
// proration line is rounded on its own (halves away from zero), as the update makes them.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del } = requestsOf(() => t);
const START = Date.UTC(2027, 0, 15, 9) / 1000;
const END = Date.UTC(2027, 1, 15, 9) / 1000;
const NEXT_END = Date.UTC(2027, 2, 15, 9) / 1000;
const DAY = 86400;
const ACACIA = '2025-02-24.acacia';

/** A customer on a test clock frozen at START, paying with the test card. */
async function clockCustomer(key: string): Promise<string> {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body;
  const customer = (await post(key, '/v1/customers', { test_clock: clock.id, payment_method: 'pm_card_visa' })).body;
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  return customer.id;
}

async function onClock(key: string, unitAmount = 3100, quantity = 1) {
  const customer = { id: await clockCustomer(key) };
  const gold = await recurringPrice(t, key, unitAmount, 'Gold');
  const silver = await recurringPrice(t, key, 2 * unitAmount, 'Silver');
  const res = await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: gold.id, quantity }] });
  expect(res.status).toBe(200);
  return { customer: customer.id as string, gold, silver, sub: res.body, item: res.body.items.data[0].id as string };
}

/** What the account holds, as the API lists it: a preview must leave every count as it was. */
async function counts(key: string) {
  const count = async (path: string) => (await get(key, `${path}${path.includes('?') ? '&' : '?'}limit=100`)).body.data.length;
  return {
    invoices: await count('/v1/invoices'),
    invoiceItems: await count('/v1/invoiceitems'),
    prices: await count('/v1/prices'),
    events: await count('/v1/events'),
    subscriptions: await count('/v1/subscriptions?status=all'),
  };
}

const lineFigures = (lines: any[]) => lines.map((l) => [l.amount, l.description, l.period.start, l.period.end, l.parent?.subscription_item_details?.proration ?? l.proration]);

describe('POST /v1/invoices/create_preview', () => {
  test('an upgrade at 10 days in: the next period at the new price, the unused time credited and the remaining time charged, exactly as the update then makes them', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const before = await counts(key);
    const subBefore = (await get(key, `/v1/subscriptions/${s.sub.id}`)).body;
    const t0 = START + 10 * DAY;
    const res = await post(key, '/v1/invoices/create_preview', {
      customer: s.customer,
      subscription: s.sub.id,
      subscription_details: { items: [{ id: s.item, price: s.silver.id }], proration_date: t0 },
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesCreatePreview', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body.id).toMatch(/^upcoming_in_/);
    // 21 of 31 days left: Gold 3100 × 21/31 = 2100 credited; Silver 6200 × 21/31 = 4200 charged;
    // the next period (February 15 to March 15) bills Silver whole, 6200. 6200 − 2100 + 4200 = 8300.
    expect(lineFigures(res.body.lines.data)).toEqual([
      [6200, '1 × Silver (at $62.00 / month)', END, NEXT_END, false],
      [-2100, `Unused time on Gold after ${formatDate(t0)}`, t0, END, true],
      [4200, `Remaining time on Silver after ${formatDate(t0)}`, t0, END, true],
    ]);
    expect(res.body).toMatchObject({
      object: 'invoice',
      status: 'draft',
      billing_reason: 'upcoming',
      customer: s.customer,
      subtotal: 8300,
      total: 8300,
      amount_due: 8300,
      period_start: END,
      period_end: NEXT_END,
      parent: { subscription_details: { subscription: s.sub.id, subscription_proration_date: t0 } },
    });
    // Nothing written: no invoice, invoice item, price or event, and the subscription as it was.
    expect(await counts(key)).toEqual(before);
    expect((await get(key, `/v1/subscriptions/${s.sub.id}`)).body).toEqual(subBefore);

    // The update at the same proration_date makes the preview's proration lines, figure for figure.
    expect((await post(key, `/v1/subscriptions/${s.sub.id}`, { items: [{ id: s.item, price: s.silver.id }], proration_date: t0 })).status).toBe(200);
    const made = (await get(key, '/v1/invoiceitems?pending=true')).body.data.reverse();
    expect(made.map((i: any) => [i.amount, i.description, i.period.start, i.period.end, i.proration])).toEqual(lineFigures(res.body.lines.data.slice(1)));
  });

  test('always_invoice: the invoice the update makes at once, its prorations only; a quantity change at 21 days in', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const t0 = START + 21 * DAY;
    const details = { items: [{ id: s.item, quantity: 3 }], proration_date: t0, proration_behavior: 'always_invoice' };
    const res = await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, subscription_details: details });
    expect(res.status).toBe(200);
    // 10 of 31 days left: 1 × Gold 3100 × 10/31 = 1000 credited; 3 × Gold 9300 × 10/31 = 3000
    // charged; 3000 − 1000 = 2000, over [t0, February 15].
    expect(lineFigures(res.body.lines.data)).toEqual([
      [-1000, `Unused time on Gold after ${formatDate(t0)}`, t0, END, true],
      [3000, `Remaining time on 3 × Gold after ${formatDate(t0)}`, t0, END, true],
    ]);
    expect(res.body).toMatchObject({ total: 2000, amount_due: 2000, period_start: t0, period_end: END });
    const invoices = (await get(key, '/v1/invoices')).body.data.length;
    const update = await post(key, `/v1/subscriptions/${s.sub.id}`, { items: details.items, proration_date: t0, proration_behavior: 'always_invoice' });
    const invoice = (await get(key, `/v1/invoices/${update.body.latest_invoice}`)).body;
    expect((await get(key, '/v1/invoices')).body.data.length).toBe(invoices + 1);
    expect(lineFigures(invoice.lines.data)).toEqual(lineFigures(res.body.lines.data));
    expect(invoice.total).toBe(res.body.total);
  });

  test('billing_cycle_anchor=now with a price change: the invoice made at once, as the update makes it', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const details = { items: [{ id: s.item, price: s.silver.id }], billing_cycle_anchor: 'now' };
    const res = await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, subscription_details: details });
    expect(res.status).toBe(200);
    // At the period's start (the clock's frozen time) all 31 days are unused: the new period bills
    // Silver whole, 6200; Gold's 3100 is credited and Silver's rest of the old period charged, 6200;
    // then the cycle's reset credits what Silver now bills for that old period, −6200.
    // 6200 − 3100 + 6200 − 6200 = 3100.
    expect(res.body.lines.data.map((l: any) => l.amount)).toEqual([6200, -3100, 6200, -6200]);
    expect(res.body).toMatchObject({ total: 3100, period_start: START, period_end: END });
    const update = await post(key, `/v1/subscriptions/${s.sub.id}`, details);
    expect(update.status).toBe(200);
    const invoice = (await get(key, `/v1/invoices/${update.body.latest_invoice}`)).body;
    expect(lineFigures(invoice.lines.data)).toEqual(lineFigures(res.body.lines.data));
    expect(invoice.total).toBe(3100);
  });

  test('a trial to 10 days on: the invoice at its end bills the next period with the unused time credited', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const trialEnd = START + 10 * DAY;
    const res = await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, subscription_details: { trial_end: trialEnd } });
    expect(res.status).toBe(200);
    // The whole period is unused at its start: −3100; the period from the trial's end (January 25
    // to February 25) bills Gold whole, 3100. 3100 − 3100 = 0.
    expect(res.body.lines.data.map((l: any) => [l.amount, l.period.start, l.period.end])).toEqual([
      [3100, trialEnd, Date.UTC(2027, 1, 25, 9) / 1000],
      [-3100, START, END],
    ]);
    expect(res.body).toMatchObject({ total: 0, amount_due: 0 });
    await post(key, `/v1/subscriptions/${s.sub.id}`, { trial_end: trialEnd });
    expect((await get(key, '/v1/invoiceitems?pending=true')).body.data.map((i: any) => i.amount)).toEqual([-3100]);
  });

  test('proration_behavior=none: the next period alone', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const res = await post(key, '/v1/invoices/create_preview', {
      subscription: s.sub.id,
      subscription_details: { items: [{ id: s.item, price: s.silver.id }], proration_behavior: 'none', proration_date: START + DAY },
    });
    expect(res.body.lines.data.map((l: any) => l.amount)).toEqual([6200]);
    // No proration, so no proration date.
    expect(res.body.parent.subscription_details.subscription_proration_date).toBeUndefined();
  });

  test("another key's subscription, an unknown one, a wrong customer, schedule_details, an inline price and nothing to preview are refused", async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const other = newTestKey();
    expectError(await post(other, '/v1/invoices/create_preview', { subscription: s.sub.id }), 400, { code: 'resource_missing', param: 'subscription' });
    expectError(await post(key, '/v1/invoices/create_preview', { subscription: 'sub_nope' }), 400, { code: 'resource_missing', param: 'subscription' });
    expectError(await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, customer: 'cus_other' }), 400, { param: 'customer' });
    expectError(await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, schedule_details: { end_behavior: 'release' } }), 400, { code: 'parameter_unknown',
      param: 'schedule_details',
    });
    expectError(
      await post(key, '/v1/invoices/create_preview', {
        subscription: s.sub.id,
        subscription_details: { items: [{ price_data: { currency: 'usd', product: s.gold.product, unit_amount: 5, recurring: { interval: 'month' } } }] },
      }),
      400, { code: 'parameter_unknown' },
    );
    // From 2025-03-31.basil `customer` alone previews nothing (before it, the customer's next invoice: below).
    expectError(await post(key, '/v1/invoices/create_preview', { customer: s.customer }), 400, { code: 'parameter_missing' });
    expectError(await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, subscription_details: { items: [{ id: 'si_nope', quantity: 2 }] } }), 400, { code: 'resource_missing',
      param: 'subscription_details[items][0][id]',
    });
    expectError(await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, subscription_details: { proration_date: START - DAY, items: [{ id: s.item, quantity: 2 }] } }), 400, { param: 'subscription_details[proration_date]',
    });
  });

  test('the official SDK: stripe.invoices.createPreview', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const preview = await t.stripe(key).invoices.createPreview({
      customer: s.customer,
      subscription: s.sub.id,
      subscription_details: { items: [{ id: s.item, quantity: 2 }], proration_date: START + 21 * DAY },
    });
    // Next period 2 × 3100 = 6200; 10 of 31 days left: −1000 for one, +2000 for two. 7200.
    expect(preview.lines.data.map((l) => l.amount)).toEqual([6200, -1000, 2000]);
    expect(preview.total).toBe(7200);
    expect(preview.id).toMatch(/^upcoming_in_/);
  });
});

describe('GET /v1/invoices/upcoming and /upcoming/lines (before 2025-03-31.basil)', () => {
  test('the same preview from the flat parameters, without an id; its lines paged', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const t0 = START + 10 * DAY;
    const query = `subscription=${s.sub.id}&subscription_items[0][id]=${s.item}&subscription_items[0][price]=${s.silver.id}&subscription_proration_date=${t0}`;
    const before = await counts(key);
    const res = await get(key, `/v1/invoices/upcoming?${query}`, { 'Stripe-Version': ACACIA });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('GetInvoicesUpcoming', 200, res.body);
    expect(res.body.id).toBeUndefined();
    // As create_preview above: 6200 − 2100 + 4200 = 8300.
    expect(res.body.lines.data.map((l: any) => l.amount)).toEqual([6200, -2100, 4200]);
    expect(res.body).toMatchObject({ object: 'invoice', total: 8300, amount_due: 8300, lines: { url: '/v1/invoices/upcoming/lines' } });
    const first = await get(key, `/v1/invoices/upcoming/lines?${query}&limit=2`, { 'Stripe-Version': ACACIA });
    expect(first.status).toBe(200);
    expectMatchesResponseSchema('GetInvoicesUpcomingLines', 200, first.body);
    expect(first.body).toMatchObject({ object: 'list', has_more: true, url: '/v1/invoices/upcoming/lines' });
    const rest = await get(key, `/v1/invoices/upcoming/lines?${query}&limit=2&starting_after=${first.body.data[1].id}`, { 'Stripe-Version': ACACIA });
    expect([...first.body.data, ...rest.body.data].map((l: any) => l.amount)).toEqual([6200, -2100, 4200]);
    expect(rest.body.has_more).toBe(false);
    expect(await counts(key)).toEqual(before);
    // The flat parameter and subscription_details together say the same thing twice.
    expectError(await get(key, `/v1/invoices/upcoming?${query}&subscription_details[proration_date]=${t0}`, { 'Stripe-Version': ACACIA }), 400, { code: 'parameters_exclusive',
    });
    // Errors name the parameter as sent.
    expectError(await get(key, `/v1/invoices/upcoming?subscription=${s.sub.id}&subscription_proration_date=${START - DAY}`, { 'Stripe-Version': ACACIA }), 400, {
      param: 'subscription_proration_date',
    });
    expectError(await get(key, `/v1/invoices/upcoming?subscription=${s.sub.id}&subscription_items[0][id]=si_nope`, { 'Stripe-Version': ACACIA }), 400, { param: 'subscription_items[0][id]',
    });
  });

  test('from 2025-03-31.basil the endpoints are gone: 404, as for any unknown URL; `upcoming` is never an invoice id', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    for (const path of ['/v1/invoices/upcoming', '/v1/invoices/upcoming/lines']) {
      for (const version of ['2025-03-31.basil', undefined]) {
        const res = await get(key, `${path}?subscription=${s.sub.id}`, version ? { 'Stripe-Version': version } : {});
        expectError(res, 404, {});
        expect(res.body.error.message).toContain(`Unrecognized request URL (GET: ${path})`);
      }
    }
  });

  test('an old SDK (stripe-node 17, 2025-02-24.acacia): invoices.retrieveUpcoming and listUpcomingLines', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const major = MAJORS.find((m) => m.pkg === 'stripe-v17')!;
    const old = client(t, major, key).stripe;
    const params = { subscription: s.sub.id, subscription_items: [{ id: s.item, quantity: 2 }], subscription_proration_date: START + 21 * DAY };
    const upcoming = await old.invoices.retrieveUpcoming(params);
    // As with the current SDK above: 6200 − 1000 + 2000 = 7200.
    expect(upcoming.lines.data.map((l: any) => l.amount)).toEqual([6200, -1000, 2000]);
    expect(upcoming.total).toBe(7200);
    const lines = await old.invoices.listUpcomingLines({ ...params, limit: 1 });
    expect(lines.data.map((l: any) => l.amount)).toEqual([6200]);
    expect(lines.has_more).toBe(true);
  });
});

/** What an invoice's lines bill, as the first invoice of a subscription and its preview show them. */
const firstFigures = (lines: any[]) => lines.map((l) => [l.amount, l.description, l.period.start, l.period.end]);

describe('POST /v1/invoices/create_preview of a new subscription (customer and subscription_details[items])', () => {
  test('2 × 1000 with the customer\'s pending item of 300 and a 25% coupon: the first invoice the create then makes, and nothing written (the coupon not redeemed)', async () => {
    const key = newTestKey();
    const customer = await clockCustomer(key);
    const gold = await recurringPrice(t, key, 1000, 'Gold');
    const coupon = (await post(key, '/v1/coupons', { percent_off: 25, duration: 'once' })).body;
    expect((await post(key, '/v1/invoiceitems', { customer, amount: 300, currency: 'usd', description: 'Setup' })).status).toBe(200);
    const before = await counts(key);
    const params = { customer, subscription_details: { items: [{ price: gold.id, quantity: 2 }] }, discounts: [{ coupon: coupon.id }] };
    const res = await post(key, '/v1/invoices/create_preview', params);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesCreatePreview', 200, res.body);
    expectMatchesSdkTypes(res.body);
    // The first period (January 15 to February 15) bills 2 × 1000 = 2000; the pending item 300
    // follows. 25% off each discountable line: 500 + 75 = 575. 2300 − 575 = 1725.
    expect(firstFigures(res.body.lines.data)).toEqual([
      [2000, '2 × Gold (at $10.00 / month)', START, END],
      [300, 'Setup', START, START],
    ]);
    expect(res.body).toMatchObject({ id: expect.stringMatching(/^upcoming_in_/), customer, parent: null, subtotal: 2300, total_discount_amounts: [{ amount: 575 }], total: 1725, amount_due: 1725 });
    // Nothing written: no invoice, item, subscription or event, and the coupon not redeemed.
    expect(await counts(key)).toEqual(before);
    expect((await get(key, `/v1/coupons/${coupon.id}`)).body.times_redeemed).toBe(0);

    // The create with the same parameters makes that invoice, line for line.
    const made = await post(key, '/v1/subscriptions', { customer, items: params.subscription_details.items, discounts: params.discounts });
    expect(made.status).toBe(200);
    const invoice = (await get(key, `/v1/invoices/${made.body.latest_invoice}`)).body;
    expect(firstFigures(invoice.lines.data)).toEqual(firstFigures(res.body.lines.data));
    expect(invoice).toMatchObject({ subtotal: 2300, total: 1725, amount_paid: 1725 });
    expect((await get(key, `/v1/coupons/${coupon.id}`)).body.times_redeemed).toBe(1);
    // The pending item went on that invoice.
    expect((await get(key, '/v1/invoiceitems?pending=true')).body.data).toEqual([]);
  });

  test('a trial: the zero line "Trial period for …" up to trial_end, as the create makes it', async () => {
    const key = newTestKey();
    const customer = await clockCustomer(key);
    const gold = await recurringPrice(t, key, 1000, 'Gold');
    const trialEnd = START + 10 * DAY;
    const items = [{ price: gold.id, quantity: 2 }];
    const res = await post(key, '/v1/invoices/create_preview', { customer, subscription_details: { items, trial_end: trialEnd } });
    expect(res.status).toBe(200);
    // A trial bills nothing: one line of 0 from now to the trial's end.
    expect(firstFigures(res.body.lines.data)).toEqual([[0, 'Trial period for Gold', START, trialEnd]]);
    expect(res.body).toMatchObject({ total: 0, amount_due: 0 });
    const made = await post(key, '/v1/subscriptions', { customer, items, trial_end: trialEnd });
    expect(made.body.status).toBe('trialing');
    const invoice = (await get(key, `/v1/invoices/${made.body.latest_invoice}`)).body;
    expect(firstFigures(invoice.lines.data)).toEqual(firstFigures(res.body.lines.data));
  });

  test('a billing_cycle_anchor 10 days on: the first period prorated as the create prorates it', async () => {
    const key = newTestKey();
    const customer = await clockCustomer(key);
    const gold = await recurringPrice(t, key, 3100, 'Gold');
    const anchor = START + 10 * DAY;
    const items = [{ price: gold.id }];
    const res = await post(key, '/v1/invoices/create_preview', { customer, subscription_details: { items, billing_cycle_anchor: anchor } });
    expect(res.status).toBe(200);
    // The first period runs to the anchor, January 25: its share of the whole month that ends
    // there (December 25 to January 25, 31 days) is 10/31; 3100 × 10 / 31 = 1000.
    expect(firstFigures(res.body.lines.data)).toEqual([[1000, '1 × Gold (at $31.00 / month)', START, anchor]]);
    expect(res.body.total).toBe(1000);
    const made = await post(key, '/v1/subscriptions', { customer, items, billing_cycle_anchor: anchor });
    const invoice = (await get(key, `/v1/invoices/${made.body.latest_invoice}`)).body;
    expect(firstFigures(invoice.lines.data)).toEqual(firstFigures(res.body.lines.data));
    expect(invoice.total).toBe(1000);
  });

  test('refusals name the parameters as sent: no customer, an unknown price, a past trial_end or anchor, proration_date, an unknown coupon', async () => {
    const key = newTestKey();
    const customer = await clockCustomer(key);
    const gold = await recurringPrice(t, key, 1000, 'Gold');
    const preview = (body: Record<string, unknown>) => post(key, '/v1/invoices/create_preview', body);
    const items = [{ price: gold.id }];
    expectError(await preview({ subscription_details: { items } }), 400, { code: 'parameter_missing', param: 'customer' });
    expectError(await preview({ customer: 'cus_nope', subscription_details: { items } }), 400, { code: 'resource_missing', param: 'customer' });
    expectError(await preview({ customer, subscription_details: { items: [{ price: 'price_nope' }] } }), 400, { code: 'resource_missing', param: 'subscription_details[items][0][price]' });
    expectError(await preview({ customer, subscription_details: { items, trial_end: START - DAY } }), 400, { param: 'subscription_details[trial_end]' });
    expectError(await preview({ customer, subscription_details: { items, billing_cycle_anchor: START - DAY } }), 400, { param: 'subscription_details[billing_cycle_anchor]' });
    expectError(await preview({ customer, subscription_details: { items, proration_date: START } }), 400, { param: 'subscription_details[proration_date]' });
    expectError(await preview({ customer, subscription_details: { items: [{ id: 'si_x', quantity: 2 }] } }), 400, { code: 'parameter_invalid', param: 'subscription_details[items][0][id]' });
    expectError(await preview({ customer, subscription_details: { items }, discounts: [{ coupon: 'nope' }] }), 400, { code: 'resource_missing', param: 'discounts[0][coupon]' });
    expect((await get(key, '/v1/subscriptions?status=all')).body.data).toEqual([]);
  });

  test('the official SDK: stripe.invoices.createPreview of a new subscription', async () => {
    const key = newTestKey();
    const customer = await clockCustomer(key);
    const gold = await recurringPrice(t, key, 1000, 'Gold');
    const coupon = (await post(key, '/v1/coupons', { percent_off: 25, duration: 'forever' })).body;
    const preview = await t.stripe(key).invoices.createPreview({ customer, subscription_details: { items: [{ price: gold.id, quantity: 2 }] }, discounts: [{ coupon: coupon.id }] });
    // 2 × 1000 = 2000, 25% off: 2000 − 500 = 1500.
    expect(preview.lines.data.map((l) => l.amount)).toEqual([2000]);
    expect(preview.total).toBe(1500);
    expect(preview.id).toMatch(/^upcoming_in_/);
  });
});

describe("a customer's next invoice: `customer` alone, before 2025-03-31.basil", () => {
  test('GET /v1/invoices/upcoming?customer=: the renewal of the subscription that renews soonest; create_preview the same before basil', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    // A second subscription anchored 10 days on renews first, January 25.
    const anchor = START + 10 * DAY;
    const second = await post(key, '/v1/subscriptions', { customer: s.customer, items: [{ price: s.silver.id }], billing_cycle_anchor: anchor });
    expect(second.status).toBe(200);
    const before = await counts(key);
    const res = await get(key, `/v1/invoices/upcoming?customer=${s.customer}`, { 'Stripe-Version': ACACIA });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('GetInvoicesUpcoming', 200, res.body);
    // Its renewal bills Silver's whole next period, January 25 to February 25: 6200.
    expect(firstFigures(res.body.lines.data)).toEqual([[6200, '1 × Silver (at $62.00 / month)', anchor, Date.UTC(2027, 1, 25, 9) / 1000]]);
    expect(res.body).toMatchObject({ subscription: second.body.id, total: 6200, billing_reason: 'upcoming' });
    const lines = await get(key, `/v1/invoices/upcoming/lines?customer=${s.customer}`, { 'Stripe-Version': ACACIA });
    expect(lines.body.data.map((l: any) => l.amount)).toEqual([6200]);
    const created = await post(key, '/v1/invoices/create_preview', { customer: s.customer }, { 'Stripe-Version': ACACIA });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ subscription: second.body.id, total: 6200 });
    expect(await counts(key)).toEqual(before);
    // Once it is canceled, the first one (Gold, renewing February 15) is next: 3100.
    expect((await del(key, `/v1/subscriptions/${second.body.id}`)).status).toBe(200);
    const next = await get(key, `/v1/invoices/upcoming?customer=${s.customer}`, { 'Stripe-Version': ACACIA });
    expect(next.body).toMatchObject({ subscription: s.sub.id, total: 3100, period_start: END, period_end: NEXT_END });
  });

  test('without subscriptions: its pending items, else 404 invoice_upcoming_none; an old SDK (stripe-node 17) sees the same', async () => {
    const key = newTestKey();
    const customer = await clockCustomer(key);
    const old = client(t, MAJORS.find((m) => m.pkg === 'stripe-v17')!, key).stripe;
    const none = await get(key, `/v1/invoices/upcoming?customer=${customer}`, { 'Stripe-Version': ACACIA });
    expectError(none, 404, { code: 'invoice_upcoming_none' });
    expect(none.body.error.message).toBe(`No upcoming invoices for customer: ${customer}`);
    await expect(old.invoices.retrieveUpcoming({ customer })).rejects.toMatchObject({ statusCode: 404, code: 'invoice_upcoming_none' });
    await post(key, '/v1/invoiceitems', { customer, amount: 700, currency: 'usd', description: 'Consulting' });
    // One pending item of 700: an invoice of it alone.
    const upcoming = await old.invoices.retrieveUpcoming({ customer });
    expect(upcoming.lines.data.map((l: any) => [l.amount, l.description])).toEqual([[700, 'Consulting']]);
    expect(upcoming).toMatchObject({ total: 700, subscription: null });
  });
});

describe('invoice_items: one-off items added to a preview, written nowhere', () => {
  test("on a subscription's renewal, a new subscription's first invoice, and (from basil) alone with the customer's pending items", async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const oneTime = await createPrice(t, key, { unit_amount: 1500, product_data: { name: 'Bag' } });
    const coupon = (await post(key, '/v1/coupons', { percent_off: 10, duration: 'once' })).body;
    const before = await counts(key);
    const prices = (await get(key, '/v1/prices?limit=100')).body.data.length;
    const invoiceItems = [
      { amount: 500, currency: 'usd', description: 'Extra', period: { start: START, end: START + DAY } },
      { price: oneTime.id, quantity: 2, description: 'Two bags' },
      { unit_amount: 250, quantity: 4, description: 'Stickers' },
      { amount: -200, description: 'Goodwill' },
    ];
    const renewal = await post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, invoice_items: invoiceItems });
    expect(renewal.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesCreatePreview', 200, renewal.body);
    expectMatchesSdkTypes(renewal.body);
    // The renewal bills Gold 3100 (February 15 to March 15); then 500, 2 × 1500 = 3000,
    // 4 × 250 = 1000 and the credit −200 (its currency the invoice's). 3100 + 500 + 3000 + 1000 − 200 = 7400.
    expect(firstFigures(renewal.body.lines.data)).toEqual([
      [3100, '1 × Gold (at $31.00 / month)', END, NEXT_END],
      [500, 'Extra', START, START + DAY],
      [3000, 'Two bags', START, START],
      [1000, 'Stickers', START, START],
      [-200, 'Goodwill', START, START],
    ]);
    expect(renewal.body.lines.data.map((l: any) => [l.quantity, l.discountable])).toEqual([[1, true], [1, true], [2, true], [4, true], [1, false]]);
    expect(renewal.body.total).toBe(7400);

    // A new subscription's first invoice with a 10% coupon: Gold 3100, then 500 (discountable)
    // and the credit −200 (not discountable). 10% of 3100 + 500 = 360; 3400 − 360 = 3040.
    const first = await post(key, '/v1/invoices/create_preview', {
      customer: s.customer,
      subscription_details: { items: [{ price: s.gold.id }] },
      discounts: [{ coupon: coupon.id }],
      invoice_items: [invoiceItems[0], invoiceItems[3]],
    });
    expect(first.status).toBe(200);
    expect(first.body.lines.data.map((l: any) => l.amount)).toEqual([3100, 500, -200]);
    expect(first.body).toMatchObject({ subtotal: 3400, total: 3040 });

    // From basil, `customer` with `invoice_items` and no subscription: the pending items (none
    // here but the subscription's own, which stay its) and the items given: 500 + 3000 = 3500.
    const alone = await post(key, '/v1/invoices/create_preview', { customer: s.customer, invoice_items: invoiceItems.slice(0, 2) });
    expect(alone.status).toBe(200);
    expect(alone.body).toMatchObject({ parent: null, total: 3500, lines: { data: [{ amount: 500 }, { amount: 3000 }] } });

    // Nothing written, not even the inline amounts' prices.
    expect(await counts(key)).toEqual(before);
    expect((await get(key, '/v1/prices?limit=100')).body.data.length).toBe(prices);
    expect((await get(key, `/v1/coupons/${coupon.id}`)).body.times_redeemed).toBe(0);
  });

  test('refused: another currency than the invoice\'s, a recurring or unknown price, two amounts, none', async () => {
    const key = newTestKey();
    const s = await onClock(key);
    const preview = (items: Record<string, unknown>[]) => post(key, '/v1/invoices/create_preview', { subscription: s.sub.id, invoice_items: items });
    expectError(await preview([{ amount: 100, currency: 'eur' }]), 400, { code: 'parameter_invalid', param: 'invoice_items[0][currency]' });
    expectError(await preview([{ price: s.gold.id }]), 400, { code: 'parameter_invalid', param: 'invoice_items[0][price]' });
    expectError(await preview([{ amount: 1 }, { price: 'price_nope' }]), 400, { code: 'resource_missing', param: 'invoice_items[1][price]' });
    expectError(await preview([{ amount: 100, unit_amount: 100 }]), 400, { code: 'parameters_exclusive' });
    expectError(await preview([{ description: 'Nothing' }]), 400, { code: 'parameter_missing', param: 'invoice_items[0][amount]' });
    expectError(await preview([{ amount: 1, period: { start: START, end: START - 1 } }]), 400, { param: 'invoice_items[0][period][end]' });
  });
});
