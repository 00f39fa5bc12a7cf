import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCoupon, createTaxRate } from '../../../helpers/fixtures';
import { payingCustomer, recurringPrice } from '../../../helpers/billing';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { formatDate } from '../../../../src/resources/billing/invoices/amounts';

// Prorations against hand-computed figures. The rounding rule: each proration line is rounded on
// its own, to the nearest unit, halves away from zero. `proration_date` sits at an exact fraction of
// the current period (periods are whole days, so a half and a quarter are whole seconds), so every
// figure below is worked out by hand from the prices.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del, eventsOf } = requestsOf(() => t);

interface Setup {
  key: string;
  customer: { id: string; pm: string };
  sub: Record<string, any>;
  item: Record<string, any>;
  start: number;
  end: number;
  /** The time with this fraction of the period left. */
  at: (left: number) => number;
}

async function subscribed(unitAmount: number, params: Record<string, unknown> = {}, itemParams: Record<string, unknown> = {}): Promise<Setup> {
  const key = newTestKey();
  const customer = await payingCustomer(t, key);
  const price = await recurringPrice(t, key, unitAmount, 'Gold');
  const res = await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id, ...itemParams }], ...params });
  expect(res.status).toBe(200);
  const item = res.body.items.data[0];
  const start = item.current_period_start;
  const end = item.current_period_end;
  return { key, customer, sub: res.body, item, start, end, at: (left) => end - Math.round((end - start) * left) };
}

const pending = async (key: string) => (await get(key, '/v1/invoiceitems?pending=true&limit=100')).body.data.reverse();
const amounts = (items: any[]) => items.map((i) => i.amount);

describe('create_prorations (the default) leaves two pending invoice items per change', () => {
  test('an upgrade at half the period: −500 for the old price, +1000 for the new', async () => {
    const s = await subscribed(1000);
    const silver = await recurringPrice(t, s.key, 2000, 'Silver');
    const t0 = s.at(1 / 2);
    const res = await post(s.key, `/v1/subscription_items/${s.item.id}`, { price: silver.id, proration_date: t0 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ price: { id: silver.id }, quantity: 1 });
    const items = await pending(s.key);
    expect(amounts(items)).toEqual([-500, 1000]);
    for (const item of items) {
      expectMatchesResponseSchema('GetInvoiceitemsInvoiceitem', 200, item);
      expectMatchesSdkTypes(item);
      expect(item).toMatchObject({
        proration: true,
        discountable: false,
        period: { start: t0, end: s.end },
        parent: { type: 'subscription_details', subscription_details: { subscription: s.sub.id, subscription_item: s.item.id } },
        invoice: null,
      });
    }
    expect(items[0].description).toBe(`Unused time on Gold after ${formatDate(t0)}`);
    expect(items[1].description).toBe(`Remaining time on Silver after ${formatDate(t0)}`);
    expect(items[0].pricing.price_details.price).toBe(s.item.price.id);
    expect(items[1].pricing.price_details.price).toBe(silver.id);
    expect((await eventsOf(s.key, 'invoiceitem.created')).length).toBe(2);
  });

  test('a downgrade with three quarters left: −1500, +750', async () => {
    const s = await subscribed(2000);
    const bronze = await recurringPrice(t, s.key, 1000, 'Bronze');
    await post(s.key, `/v1/subscriptions/${s.sub.id}`, { items: [{ id: s.item.id, price: bronze.id }], proration_date: s.at(3 / 4) });
    expect(amounts(await pending(s.key))).toEqual([-1500, 750]);
  });

  test('a quantity change of a 9.99 price from 1 to 3 at half: −499.5 → −500 and 1498.5 → 1499 (halves away from zero)', async () => {
    const s = await subscribed(999);
    const res = await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 3, proration_date: s.at(1 / 2) });
    expect(res.body).toMatchObject({ quantity: 3, price: { id: s.item.price.id } });
    const items = await pending(s.key);
    expect(amounts(items)).toEqual([-500, 1499]);
    expect(items[1].description).toMatch(/^Remaining time on 3 × Gold after /);
    // The next change credits what was last billed: 3 × 9.99 for the rest.
    await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 2, proration_date: s.at(1 / 4) });
    expect(amounts(await pending(s.key))).toEqual([-500, 1499, -749, 500]);
  });

  test('a mid-period proration_date computes as of then; one outside the period is refused', async () => {
    const s = await subscribed(1200);
    await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 2, proration_date: s.at(1 / 4) });
    expect(amounts(await pending(s.key))).toEqual([-300, 600]);
    expectError(await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 3, proration_date: s.end + 10 }), 400, { param: 'proration_date' });
  });

  test('a coupon: each proration carries its share of the discount, and the invoice bills the net', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { percent_off: 25, duration: 'forever' });
    const customer = await payingCustomer(t, key);
    const gold = await recurringPrice(t, key, 1000, 'Gold');
    const silver = await recurringPrice(t, key, 2000, 'Silver');
    const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: gold.id }], discounts: [{ coupon: coupon.id }] })).body;
    const first = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
    expect(first).toMatchObject({ subtotal: 1000, total: 750, amount_paid: 750 });
    expect(first.total_discount_amounts).toEqual([{ amount: 250, discount: sub.discounts[0] }]);
    const item = sub.items.data[0];
    const half = item.current_period_end - (item.current_period_end - item.current_period_start) / 2;
    const res = await post(key, `/v1/subscription_items/${item.id}`, { price: silver.id, proration_date: half, proration_behavior: 'always_invoice' });
    expect(res.status).toBe(200);
    const updated = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
    const invoice = (await get(key, `/v1/invoices/${updated.latest_invoice}`)).body;
    // −500 (−125 of it discounted) and +1000 (250 discounted): 500 − 125 = 375.
    expect(invoice.lines.data.map((l: any) => [l.amount, l.discount_amounts.map((d: any) => d.amount)])).toEqual([
      [-500, [-125]],
      [1000, [250]],
    ]);
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', subtotal: 500, total: 375, amount_paid: 375, status: 'paid' });
  });

  test('an exclusive tax rate adds to each proration, an inclusive one is taken out of it', async () => {
    const key = newTestKey();
    const exclusive = await createTaxRate(t, key, { percentage: 20, inclusive: false });
    const inclusive = await createTaxRate(t, key, { percentage: 25, inclusive: true });
    const customer = await payingCustomer(t, key);
    const gold = await recurringPrice(t, key, 1000, 'Gold');
    const silver = await recurringPrice(t, key, 2000, 'Silver');
    for (const [rate, expected] of [
      // −500 and +1000, 20 % on top: −100 and +200; 500 + 100 = 600 due.
      [exclusive, { subtotal: 500, total: 600, total_excluding_tax: 500, taxes: [-100, 200] }],
      // 25 % inside: −500 × 25/125 = −100, 1000 × 25/125 = 200; 500 due, 400 of it before tax.
      [inclusive, { subtotal: 500, total: 500, total_excluding_tax: 400, taxes: [-100, 200] }],
    ] as const) {
      const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: gold.id, tax_rates: [rate.id] }] })).body;
      const item = sub.items.data[0];
      const half = item.current_period_end - (item.current_period_end - item.current_period_start) / 2;
      await post(key, `/v1/subscription_items/${item.id}`, { price: silver.id, proration_date: half, proration_behavior: 'always_invoice' });
      const invoice = (await get(key, `/v1/invoices/${(await get(key, `/v1/subscriptions/${sub.id}`)).body.latest_invoice}`)).body;
      expect(invoice).toMatchObject({ subtotal: expected.subtotal, total: expected.total, total_excluding_tax: expected.total_excluding_tax });
      expect(invoice.lines.data.map((l: any) => l.taxes[0].amount)).toEqual(expected.taxes);
      await del(key, `/v1/subscriptions/${sub.id}`);
    }
  });
});

describe('proration_behavior', () => {
  test('none makes no prorations; always_invoice bills them at once (and those left pending)', async () => {
    const s = await subscribed(1000);
    await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 2, proration_behavior: 'none' });
    expect(await pending(s.key)).toEqual([]);
    // What was last billed (1 × 10.00) is what the next change credits.
    await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 3, proration_date: s.at(1 / 2) });
    expect(amounts(await pending(s.key))).toEqual([-500, 1500]);
    await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 4, proration_date: s.at(1 / 2), proration_behavior: 'always_invoice' });
    expect(await pending(s.key)).toEqual([]);
    const sub = (await get(s.key, `/v1/subscriptions/${s.sub.id}`)).body;
    const invoice = (await get(s.key, `/v1/invoices/${sub.latest_invoice}`)).body;
    expect(amounts(invoice.lines.data)).toEqual([-500, 1500, -1500, 2000]);
    expect(invoice).toMatchObject({ status: 'paid', amount_paid: 1500, billing_reason: 'subscription_update' });
    expect((await get(s.key, `/v1/invoiceitems?invoice=${invoice.id}`)).body.data).toHaveLength(4);
  });

  test('metadata, discounts and thresholds make no prorations; quantity- and metadata-only updates need no price', async () => {
    const s = await subscribed(1000);
    const coupon = await createCoupon(t, s.key, { percent_off: 10, duration: 'forever' });
    const res = await post(s.key, `/v1/subscription_items/${s.item.id}`, { metadata: { seat: 'a' }, billing_thresholds: { usage_gte: 5 }, discounts: [{ coupon: coupon.id }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ metadata: { seat: 'a' }, billing_thresholds: { usage_gte: 5 }, quantity: 1 });
    expect(res.body.discounts).toHaveLength(1);
    expect(await pending(s.key)).toEqual([]);
    expect((await post(s.key, `/v1/subscription_items/${s.item.id}`, { billing_thresholds: '', discounts: '' })).body).toMatchObject({ billing_thresholds: null, discounts: [] });
    const updated = await eventsOf(s.key, 'customer.subscription.updated');
    expect(updated[updated.length - 1].data.previous_attributes).toEqual({ items: expect.any(Object) });
  });
});

describe('payment_behavior when the change is charged and the card declines', () => {
  async function decliningDefault(s: Setup): Promise<string> {
    const declining = await post(s.key, '/v1/payment_methods/pm_card_chargeCustomerFail/attach', { customer: s.customer.id });
    await post(s.key, `/v1/subscriptions/${s.sub.id}`, { default_payment_method: declining.body.id });
    return declining.body.id;
  }

  test('allow_incomplete: the change stands, the invoice stays open, the subscription is past_due', async () => {
    const s = await subscribed(1000);
    await decliningDefault(s);
    const res = await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 2, proration_behavior: 'always_invoice', payment_behavior: 'allow_incomplete' });
    expect(res.body.quantity).toBe(2);
    const sub = (await get(s.key, `/v1/subscriptions/${s.sub.id}`)).body;
    expect(sub.status).toBe('past_due');
    expect((await get(s.key, `/v1/invoices/${sub.latest_invoice}`)).body).toMatchObject({ status: 'open', attempt_count: 1 });
  });

  test('default_incomplete: the invoice waits for confirmation (open, not attempted); paying it settles the subscription', async () => {
    const s = await subscribed(1000);
    const res = await post(s.key, `/v1/subscriptions/${s.sub.id}`, { items: [{ id: s.item.id, quantity: 2 }], proration_behavior: 'always_invoice', payment_behavior: 'default_incomplete' });
    expect(res.body.status).toBe('past_due');
    const invoice = (await get(s.key, `/v1/invoices/${res.body.latest_invoice}`)).body;
    expect(invoice).toMatchObject({ status: 'open', attempt_count: 0 });
    expect((await post(s.key, `/v1/invoices/${invoice.id}/pay`)).body.status).toBe('paid');
    expect((await get(s.key, `/v1/subscriptions/${s.sub.id}`)).body.status).toBe('active');
  });

  test('error_if_incomplete: 402 card_error with the decline, and nothing changes', async () => {
    const s = await subscribed(1000);
    await decliningDefault(s);
    const before = (await get(s.key, `/v1/subscriptions/${s.sub.id}`)).body;
    const res = await post(s.key, `/v1/subscription_items/${s.item.id}`, { quantity: 2, proration_behavior: 'always_invoice', payment_behavior: 'error_if_incomplete' });
    expectError(res, 402, { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
    expect((await get(s.key, `/v1/subscriptions/${s.sub.id}`)).body).toEqual(before);
    expect(await pending(s.key)).toEqual([]);
    expect((await get(s.key, '/v1/invoices')).body.data).toHaveLength(1);
  });

  test('pending_if_incomplete: the change parks in pending_update until its invoice is paid, then pending_update_applied', async () => {
    const s = await subscribed(1000);
    await decliningDefault(s);
    const silver = await recurringPrice(t, s.key, 2000, 'Silver');
    expectError(await post(s.key, `/v1/subscriptions/${s.sub.id}`, { items: [{ id: s.item.id, price: silver.id }], metadata: { a: '1' }, payment_behavior: 'pending_if_incomplete' }), 400, {
      param: 'metadata',
    });
    const res = await post(s.key, `/v1/subscriptions/${s.sub.id}`, { items: [{ id: s.item.id, price: silver.id }], proration_behavior: 'always_invoice', payment_behavior: 'pending_if_incomplete' });
    expect(res.status).toBe(200);
    expectMatchesSdkTypes(res.body);
    expect(res.body.items.data[0].price.id).toBe(s.item.price.id);
    expect(res.body.status).toBe('active');
    expect(res.body.pending_update.subscription_items[0].price.id).toBe(silver.id);
    expect(res.body.pending_update.expires_at).toBeGreaterThan(s.start);
    const invoice = res.body.latest_invoice;
    expect((await get(s.key, `/v1/invoices/${invoice}`)).body.status).toBe('open');
    expectError(await post(s.key, `/v1/invoices/${invoice}/pay`), 402, { type: 'card_error', decline_code: 'generic_decline' });
    // The declined attempt stands (counted), though the answer was an error.
    expect((await get(s.key, `/v1/invoices/${invoice}`)).body.attempt_count).toBe(2);
    const paid = await post(s.key, `/v1/invoices/${invoice}/pay`, { payment_method: 'pm_card_visa' });
    expect(paid.body.status).toBe('paid');
    const after = (await get(s.key, `/v1/subscriptions/${s.sub.id}`)).body;
    expect(after.pending_update).toBeNull();
    expect(after.items.data[0].price.id).toBe(silver.id);
    expect((await eventsOf(s.key, 'customer.subscription.pending_update_applied')).length).toBe(1);
  });
});
