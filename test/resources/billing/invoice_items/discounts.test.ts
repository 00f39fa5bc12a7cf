import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { createCoupon, createCustomer, createPromotionCode, customerWithDiscount } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { addInterval } from '../../../../src/resources/billing/invoices/amounts';

// An invoice item's own discounts (`discounts[]`: coupons, promotion codes, or a discount of its
// customer, subscription or draft reused) and how invoices apply them: on the item's line first,
// then the invoice's discounts on what is left of the discountable lines. Figures by hand.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('hitems');
});
afterAll(() => e.close());

const { post, get, del, eventsOf } = requestsOf(() => e.t);
const II = '/v1/invoiceitems';
const IN = '/v1/invoices';
const DI = /^di_/;

async function setup() {
  const key = newTestKey();
  const customer = (await createCustomer(e.t, key)).id as string;
  return { key, customer };
}

const coupon = async (key: string, params: Record<string, unknown>) => (await createCoupon(e.t, key, { duration: 'once', ...params })).id as string;

/** A manual invoice taking the customer's pending items, with `discounts` of its own. */
async function invoiceFor(key: string, customer: string, params: Record<string, unknown> = {}) {
  const res = await post(key, IN, { customer, pending_invoice_items_behavior: 'include', ...params });
  expect(res.status).toBe(200);
  return res.body;
}

const amountsOf = (line: any) => line.discount_amounts.map((d: any) => d.amount);

describe('discounts on create', () => {
  test('a coupon: the item carries its discount id; its line takes 10 % first, then the invoice 20 % of what is left (1000 → 900 → 720)', async () => {
    const { key, customer } = await setup();
    const item = await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { percent_off: 10 }) }] });
    expect(item.status).toBe(200);
    expectMatchesResponseSchema('PostInvoiceitems', 200, item.body);
    expect(item.body.discounts).toHaveLength(1);
    expect(item.body.discounts[0]).toMatch(DI);
    const [created] = await eventsOf(key, 'invoiceitem.created');
    expect(created.data.object).toEqual(item.body);
    const plain = (await post(key, II, { customer, amount: 500, currency: 'usd' })).body;
    expect(plain.discounts).toEqual([]);

    const invoice = await invoiceFor(key, customer, { discounts: [{ coupon: await coupon(key, { percent_off: 20 }) }] });
    const [invoiceDiscount] = invoice.discounts;
    expect(invoiceDiscount).toMatch(DI);
    const [line, other] = invoice.lines.data;
    expect(line.parent.invoice_item_details.invoice_item).toBe(item.body.id);
    // 10 % of 1000 = 100; 20 % of the 900 left = 180.
    expect(line.discount_amounts).toEqual([
      { amount: 100, discount: item.body.discounts[0] },
      { amount: 180, discount: invoiceDiscount },
    ]);
    expect(line.discounts).toContain(item.body.discounts[0]);
    // The other line: 20 % of 500 = 100.
    expect(other.discount_amounts).toEqual([{ amount: 100, discount: invoiceDiscount }]);
    expect(invoice).toMatchObject({ subtotal: 1500, total: 1500 - 100 - 180 - 100, amount_due: 1120 });
    expect(invoice.total_discount_amounts).toEqual(
      expect.arrayContaining([
        { amount: 100, discount: item.body.discounts[0] },
        { amount: 280, discount: invoiceDiscount },
      ]),
    );
  });

  test('amounts off: the item 300 off first (1000 → 700); the invoice 500 off split on what is left (700 : 500 → 292 + 208)', async () => {
    const { key, customer } = await setup();
    const item = (await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { amount_off: 300, currency: 'usd' }) }] })).body;
    await post(key, II, { customer, amount: 500, currency: 'usd' });
    const invoice = await invoiceFor(key, customer, { discounts: [{ coupon: await coupon(key, { amount_off: 500, currency: 'usd' }) }] });
    const [line, other] = invoice.lines.data;
    expect(line.discount_amounts[0]).toEqual({ amount: 300, discount: item.discounts[0] });
    // 500 × 700 / 1200 = 291.67 → 292; the last line takes the remainder, 208.
    expect(amountsOf(line)).toEqual([300, 292]);
    expect(amountsOf(other)).toEqual([208]);
    expect(invoice).toMatchObject({ subtotal: 1500, total: 700 });
  });

  test('an item amount off larger than the item takes what is left of it, no more; the invoice percent then finds nothing', async () => {
    const { key, customer } = await setup();
    await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { amount_off: 1500, currency: 'usd' }) }] });
    const invoice = await invoiceFor(key, customer, { discounts: [{ coupon: await coupon(key, { percent_off: 20 }) }] });
    expect(amountsOf(invoice.lines.data[0])).toEqual([1000]);
    expect(invoice).toMatchObject({ subtotal: 1000, total: 0, amount_due: 0 });
  });

  test('two item discounts stack in their order (10 % then 50 off: 1000 → 900 → 850)', async () => {
    const { key, customer } = await setup();
    const item = (
      await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { percent_off: 10 }) }, { coupon: await coupon(key, { amount_off: 50, currency: 'usd' }) }] })
    ).body;
    expect(item.discounts).toHaveLength(2);
    const invoice = await invoiceFor(key, customer);
    expect(invoice.lines.data[0].discount_amounts).toEqual([
      { amount: 100, discount: item.discounts[0] },
      { amount: 50, discount: item.discounts[1] },
    ]);
    expect(invoice.total).toBe(850);
  });

  test('a non-discountable item keeps its discounts but takes none, its own included ("discounts apply" only when discountable)', async () => {
    const { key, customer } = await setup();
    const item = (await post(key, II, { customer, amount: 1000, currency: 'usd', discountable: false, discounts: [{ coupon: await coupon(key, { percent_off: 10 }) }] })).body;
    expect(item.discounts).toHaveLength(1);
    const invoice = await invoiceFor(key, customer, { discounts: [{ coupon: await coupon(key, { percent_off: 20 }) }] });
    expect(invoice.lines.data[0].discount_amounts).toEqual([]);
    expect(invoice).toMatchObject({ subtotal: 1000, total: 1000 });
  });

  test('a coupon limited to other products gives the item nothing', async () => {
    const { key, customer } = await setup();
    const product = (await post(key, '/v1/products', { name: 'Elsewhere' })).body.id;
    await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { percent_off: 10, applies_to: { products: [product] } }) }] });
    const invoice = await invoiceFor(key, customer);
    expect(invoice.total).toBe(1000);
  });

  test('a promotion code redeems its coupon (times_redeemed counts it)', async () => {
    const { key, customer } = await setup();
    const base = await coupon(key, { percent_off: 15 });
    const code = await createPromotionCode(e.t, key, { coupon: base });
    const item = (await post(key, II, { customer, amount: 2000, currency: 'usd', discounts: [{ promotion_code: code.id }] })).body;
    expect(item.discounts[0]).toMatch(DI);
    expect((await get(key, `/v1/coupons/${base}`)).body.times_redeemed).toBe(1);
    expect((await invoiceFor(key, customer)).total).toBe(1700);
  });

  test("`discount` reuses the customer's discount: it applies to the line once, not again at the invoice level (25 % of 1000)", async () => {
    const key = newTestKey();
    const customer = await customerWithDiscount(e.t, key);
    const discount = (await get(key, `/v1/customers/${customer}`, { 'Stripe-Version': '2024-04-10' })).body.discount.id as string;
    expect(discount).toMatch(DI);
    const item = (await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ discount }] })).body;
    expect(item.discounts).toEqual([discount]);
    // The manual invoice takes the customer's discount too (its default).
    const invoice = await invoiceFor(key, customer);
    expect(invoice.lines.data[0].discount_amounts).toEqual([{ amount: 250, discount }]);
    expect(invoice.total).toBe(750);
  });

  test('errors: unknown coupon, promotion code or discount; two kinds in one entry', async () => {
    const { key, customer } = await setup();
    const base = { customer, amount: 100, currency: 'usd' };
    expectError(await post(key, II, { ...base, discounts: [{ coupon: 'nope' }] }), 400, { code: 'resource_missing', param: 'discounts[0][coupon]' });
    expectError(await post(key, II, { ...base, discounts: [{ promotion_code: 'promo_nope' }] }), 400, { code: 'resource_missing', param: 'discounts[0][promotion_code]' });
    expectError(await post(key, II, { ...base, discounts: [{ discount: 'di_nope' }] }), 400, { code: 'resource_missing', param: 'discounts[0][discount]' });
    const c = await coupon(key, { percent_off: 5 });
    expectError(await post(key, II, { ...base, discounts: [{ coupon: c }, { coupon: c, discount: 'di_x' }] }), 400, { type: 'invalid_request_error', param: 'discounts[1][discount]' });
    expectError(await post(key, II, { ...base, discounts: [{ unknown: 'x' }] }), 400, { type: 'invalid_request_error' });
    // Nothing was made.
    expect((await get(key, `${II}?customer=${customer}`)).body.data).toEqual([]);
  });
});

describe('discounts on update', () => {
  test("set, replaced and cleared (''); a draft's lines and totals follow; each change sends invoiceitem.updated", async () => {
    const { key, customer } = await setup();
    const draft = (await post(key, IN, { customer, currency: 'usd' })).body;
    const item = (await post(key, II, { customer, amount: 1000, currency: 'usd', invoice: draft.id })).body;
    expect((await get(key, `${IN}/${draft.id}`)).body.total).toBe(1000);

    const set = await post(key, `${II}/${item.id}`, { discounts: [{ coupon: await coupon(key, { percent_off: 10 }) }] });
    expect(set.status).toBe(200);
    expectMatchesResponseSchema('PostInvoiceitemsInvoiceitem', 200, set.body);
    expect(set.body.discounts).toHaveLength(1);
    expect((await get(key, `${II}/${item.id}`)).body).toEqual(set.body);
    let invoice = (await get(key, `${IN}/${draft.id}`)).body;
    expect(invoice.lines.data[0].discount_amounts).toEqual([{ amount: 100, discount: set.body.discounts[0] }]);
    expect(invoice.total).toBe(900);

    // Other changes keep the discounts: a new amount, 2000, takes 10 % = 200.
    const repriced = (await post(key, `${II}/${item.id}`, { amount: 2000 })).body;
    expect(repriced.discounts).toEqual(set.body.discounts);
    expect((await get(key, `${IN}/${draft.id}`)).body.total).toBe(1800);

    // Reusing its own discount beside a new one keeps it (not redeemed again).
    const kept = (await post(key, `${II}/${item.id}`, { discounts: [{ discount: set.body.discounts[0] }, { coupon: await coupon(key, { amount_off: 100, currency: 'usd' }) }] })).body;
    expect(kept.discounts[0]).toBe(set.body.discounts[0]);
    expect(kept.discounts).toHaveLength(2);
    expect((await get(key, `${IN}/${draft.id}`)).body.total).toBe(2000 - 200 - 100);

    const cleared = (await post(key, `${II}/${item.id}`, { discounts: '' })).body;
    expect(cleared.discounts).toEqual([]);
    invoice = (await get(key, `${IN}/${draft.id}`)).body;
    expect(invoice.lines.data[0].discount_amounts).toEqual([]);
    expect(invoice.total).toBe(2000);

    const events = (await get(key, '/v1/events?limit=100')).body.data;
    expect(events.map((ev: any) => ev.type)).toContain('invoiceitem.created');
    // Four updates, newest first: the last cleared the two discounts, the first set one (none before).
    const updated = events.filter((ev: any) => ev.type === 'invoiceitem.updated');
    expect(updated).toHaveLength(4);
    expect(updated[0].data.object).toEqual(cleared);
    expect(updated[0].data.previous_attributes).toEqual({ discounts: kept.discounts });
    expect(updated[2].data.previous_attributes).toMatchObject({ amount: 1000 });
    expect(updated[3].data.previous_attributes).toEqual({ discounts: [] });
  });

  test('an unknown coupon on update changes nothing', async () => {
    const { key, customer } = await setup();
    const item = (await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { percent_off: 10 }) }] })).body;
    expectError(await post(key, `${II}/${item.id}`, { discounts: [{ coupon: 'nope' }] }), 400, { code: 'resource_missing', param: 'discounts[0][coupon]' });
    expect((await get(key, `${II}/${item.id}`)).body).toEqual(item);
  });

  test('delete: invoiceitem.deleted shows the item with its discounts', async () => {
    const { key, customer } = await setup();
    const item = (await post(key, II, { customer, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { percent_off: 10 }) }] })).body;
    expect((await del(key, `${II}/${item.id}`)).body).toEqual({ id: item.id, object: 'invoiceitem', deleted: true });
    const [deleted] = await eventsOf(key, 'invoiceitem.deleted');
    expect(deleted.data.object).toEqual(item);
  });
});

describe("a subscription's renewal", () => {
  const START = Date.UTC(2027, 2, 10, 9) / 1000;

  test("takes its pending item with the item's discount first, then the subscription's (3000 → 2400; 1000 → 900 → 720); so does its preview", async () => {
    const key = newTestKey();
    const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body.id as string;
    const customer = (await post(key, '/v1/customers', { test_clock: clock })).body.id as string;
    const pm = (await post(key, '/v1/payment_methods/pm_card_visa/attach', { customer })).body.id as string;
    await post(key, `/v1/customers/${customer}`, { invoice_settings: { default_payment_method: pm } });
    const price = (await post(key, '/v1/prices', { product_data: { name: 'Plan' }, currency: 'usd', unit_amount: 3000, recurring: { interval: 'month' } })).body.id;
    const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }], discounts: [{ coupon: await coupon(key, { percent_off: 20, duration: 'forever' }) }] })).body;
    expect(sub.status).toBe('active');
    const item = (await post(key, II, { customer, subscription: sub.id, amount: 1000, currency: 'usd', discounts: [{ coupon: await coupon(key, { percent_off: 10 }) }] })).body;
    const [subDiscount] = sub.discounts;
    const expected = [
      { amount: 100, discount: item.discounts[0] },
      { amount: 180, discount: subDiscount },
    ];
    const lineOf = (invoice: any) => invoice.lines.data.find((l: any) => l.parent?.invoice_item_details?.invoice_item === item.id);

    // The preview of that invoice shows the same (it reads the pending items as the renewal does).
    const preview = await post(key, `${IN}/create_preview`, { subscription: sub.id });
    expect(preview.status).toBe(200);
    expect(lineOf(preview.body).discount_amounts).toEqual(expected);
    expect(preview.body.total).toBe(2400 + 720);

    expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: addInterval(START, 'month', 1) + 60 })).status).toBe(200);
    await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);

    const invoices = (await get(key, `${IN}?subscription=${sub.id}`)).body.data;
    expect(invoices).toHaveLength(2);
    const renewal = invoices[0];
    expect(renewal.billing_reason).toBe('subscription_cycle');
    expect(lineOf(renewal).discount_amounts).toEqual(expected);
    expect(renewal).toMatchObject({ subtotal: 4000, total: 2400 + 720, status: 'paid' });
    expect((await get(key, `${II}/${item.id}`)).body.invoice).toBe(renewal.id);
  });
});

test('the SDK creates an item with discounts and clears them', async () => {
  const { key, customer } = await setup();
  const stripe = e.t.stripe(key);
  const c = await coupon(key, { percent_off: 10 });
  const made = await stripe.invoiceItems.create({ customer, amount: 500, currency: 'usd', discounts: [{ coupon: c }] });
  expectMatchesSdkTypes(made);
  expect(made.discounts).toEqual([expect.stringMatching(DI)]);
  const cleared = await stripe.invoiceItems.update(made.id, { discounts: '' });
  expect(cleared.discounts).toEqual([]);
});
