import { LATEST_API_VERSION, VersionRenderer } from '../../../src/kernel/versions';
import { versionChanges } from '../../../src/resources/billing/versions';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { payingCustomer, recurringPrice } from '../../helpers/billing';
import { createCoupon, createPrice, createTaxRate } from '../../helpers/fixtures';
import { requestsOf } from '../../helpers/requests';
import { sdkTypeProblems } from '../../helpers/sdkTypes';

// Billing objects at older API versions: what each change of src/resources/billing/versions
// undoes, in answers, in events (their object and previous_attributes), and checked against the
// stripe package major of that time.

// Each major's SDK types are compiled on first use: slow on a busy machine.
jest.setTimeout(120_000);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);
const at = (version: string) => ({ 'Stripe-Version': version });
const renderer = new VersionRenderer(versionChanges);

/** A subscription to one monthly price, with a tax rate and a coupon; its first invoice paid. */
async function subscribed(key: string, options: { inclusive?: boolean; coupon?: boolean } = {}) {
  const customer = await payingCustomer(t, key);
  const price = await recurringPrice(t, key, 1000, 'Gold');
  const rate = await createTaxRate(t, key, { percentage: 10, inclusive: options.inclusive ?? false });
  const coupon = options.coupon === false ? null : await createCoupon(t, key, { percent_off: 50, duration: 'forever' });
  const res = await post(key, '/v1/subscriptions', {
    customer: customer.id,
    items: [{ price: price.id, quantity: 2, tax_rates: [rate.id] }],
    metadata: { plan: 'gold' },
    ...(coupon ? { discounts: [{ coupon: coupon.id }] } : {}),
  });
  if (res.status !== 200) throw new Error(`subscribing failed: ${JSON.stringify(res.body)}`);
  return { customer, price, rate, coupon, sub: res.body };
}

describe('subscriptions', () => {
  test('at 2024-04-10: the period of its items, `discount` whole with its coupon, aggregate_usage on plans and prices', async () => {
    const key = newTestKey();
    const { sub, coupon, price } = await subscribed(key);
    const old = (await get(key, `/v1/subscriptions/${sub.id}`, at('2024-04-10'))).body;
    const [item] = sub.items.data;
    expect(old.current_period_start).toBe(item.current_period_start);
    expect(old.current_period_end).toBe(item.current_period_end);
    expect(old.discount).toMatchObject({ id: sub.discounts[0], object: 'discount', coupon: { id: coupon!.id, object: 'coupon', percent_off: 50 }, subscription: sub.id });
    expect(old.discount).not.toHaveProperty('source');
    expect(old.items.data[0].plan).toMatchObject({ id: price.id, object: 'plan', amount: 1000, interval: 'month', usage_type: 'licensed', aggregate_usage: null });
    expect(old.items.data[0].price.recurring.aggregate_usage).toBeNull();
    expect(sdkTypeProblems(old, 'stripe-v15')).toEqual([]);
    // The newest shape has none of it (the account is pinned to 2024-04-10 now: its first request with a version).
    const newest = (await get(key, `/v1/subscriptions/${sub.id}`, at(LATEST_API_VERSION))).body;
    expect(newest).not.toHaveProperty('current_period_start');
    expect(newest).not.toHaveProperty('discount');
    expect(newest.items.data[0].plan).not.toHaveProperty('aggregate_usage');
  });

  test('without discounts, `discount` is null; a metered plan aggregates by `sum`', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const metered = await recurringPrice(t, key, 5, 'Calls', { recurring: { interval: 'month', usage_type: 'metered' } });
    const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: metered.id }] })).body;
    const old = (await get(key, `/v1/subscriptions/${sub.id}`, at('2025-02-24.acacia'))).body;
    expect(old.discount).toBeNull();
    expect(old.items.data[0].plan.aggregate_usage).toBe('sum');
    expect(old.items.data[0].price.recurring.aggregate_usage).toBe('sum');
    expect(sdkTypeProblems(old, 'stripe-v17')).toEqual([]);
  });

  test('at 2025-08-27.basil (after the change) the subscription has no period of its own', async () => {
    const key = newTestKey();
    const { sub } = await subscribed(key, { coupon: false });
    const basil = (await get(key, `/v1/subscriptions/${sub.id}`, at('2025-08-27.basil'))).body;
    expect(basil).not.toHaveProperty('current_period_start');
    expect(basil).not.toHaveProperty('discount');
    expect(basil.items.data[0].current_period_start).toBe(sub.items.data[0].current_period_start);
  });
});

describe('invoices', () => {
  test('at 2022-08-01: subscription, paid, its charge and payment intent, taxes and discount as then; lines with type, proration, price and plan', async () => {
    const key = newTestKey();
    const { sub, price, rate, coupon } = await subscribed(key);
    const newest = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
    const old = (await get(key, `/v1/invoices/${sub.latest_invoice}`, at('2022-08-01'))).body;
    for (const gone of ['parent', 'total_taxes']) expect(old).not.toHaveProperty(gone);
    // The PaymentIntent that paid it, and that intent's charge.
    const [intent] = (await get(key, `/v1/payment_intents?customer=${sub.customer}`)).body.data;
    const [charge] = (await get(key, `/v1/charges?payment_intent=${intent.id}`)).body.data;
    expect(charge.id).toMatch(/^ch_/);
    expect(old).toMatchObject({
      subscription: sub.id,
      subscription_details: { metadata: { plan: 'gold' } },
      quote: null,
      paid: true,
      paid_out_of_band: false,
      charge: charge.id,
      payment_intent: intent.id,
      application_fee_amount: null,
      transfer_data: null,
      rendering_options: null,
      discount: { id: newest.discounts[0], object: 'discount', coupon: { id: coupon!.id, percent_off: 50 } },
    });
    // 2 × 10.00, half off, then 10 % tax on 10.00.
    expect(old.tax).toBe(100);
    expect(old.total_tax_amounts).toEqual([{ amount: 100, inclusive: false, tax_rate: rate.id, taxability_reason: 'standard_rated', taxable_amount: 1000 }]);
    const [line] = old.lines.data;
    for (const gone of ['parent', 'pricing', 'taxes']) expect(line).not.toHaveProperty(gone);
    const priceThen = (await get(key, `/v1/prices/${price.id}`, at('2022-08-01'))).body;
    expect(line).toMatchObject({
      type: 'subscription',
      subscription: sub.id,
      subscription_item: sub.items.data[0].id,
      proration: false,
      price: priceThen,
      plan: { id: price.id, object: 'plan', amount: 1000, interval: 'month', interval_count: 1, usage_type: 'licensed', aggregate_usage: null },
      tax_amounts: [{ amount: 100, inclusive: false, tax_rate: rate.id, taxability_reason: 'standard_rated', taxable_amount: 1000 }],
      tax_rates: [expect.objectContaining({ id: rate.id, object: 'tax_rate', percentage: 10 })],
      amount_excluding_tax: 2000,
      unit_amount_excluding_tax: '1000',
    });
    expect(line).not.toHaveProperty('invoice_item');
    expect(sdkTypeProblems(old, 'stripe-v11')).toEqual([]);
    // The line list says the same.
    const lines = (await get(key, `/v1/invoices/${sub.latest_invoice}/lines`, at('2022-08-01'))).body;
    expect(lines.data[0]).toEqual(line);
  });

  test('inclusive taxes come off amount_excluding_tax; an unpaid invoice is not `paid`', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key, 'pm_card_chargeCustomerFail');
    const price = await recurringPrice(t, key, 1100, 'Gold');
    const rate = await createTaxRate(t, key, { percentage: 10, inclusive: true });
    const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id, tax_rates: [rate.id] }] })).body;
    const old = (await get(key, `/v1/invoices/${sub.latest_invoice}`, at('2024-04-10'))).body;
    expect(old).toMatchObject({ status: 'open', paid: false, discount: null });
    expect(old.lines.data[0]).toMatchObject({ amount: 1100, amount_excluding_tax: 1000, unit_amount_excluding_tax: '1000', tax_amounts: [{ amount: 100, inclusive: true }] });
    expect(sdkTypeProblems(old, 'stripe-v15')).toEqual([]);
  });

  test('a proration: its invoice item with subscription, price, plan and unit amount; its line `type: invoiceitem`', async () => {
    const key = newTestKey();
    const { sub, price } = await subscribed(key, { coupon: false });
    const item = sub.items.data[0];
    const res = await post(key, `/v1/subscription_items/${item.id}`, { quantity: 3, proration_behavior: 'always_invoice' });
    expect(res.status).toBe(200);
    const items = (await get(key, '/v1/invoiceitems?limit=10', at('2025-02-24.acacia'))).body.data;
    expect(items.length).toBeGreaterThan(0);
    for (const ii of items) {
      expect(ii).not.toHaveProperty('parent');
      expect(ii).not.toHaveProperty('pricing');
      expect(ii).toMatchObject({ subscription: sub.id, subscription_item: item.id, proration: true, price: { id: price.id, object: 'price' }, plan: { id: price.id, object: 'plan' } });
      expect(ii.unit_amount_decimal).toEqual(expect.any(String));
      expect(sdkTypeProblems(ii, 'stripe-v17')).toEqual([]);
    }
    const invoice = (await get(key, `/v1/subscriptions/${sub.id}?expand[]=latest_invoice`, at('2025-02-24.acacia'))).body.latest_invoice;
    const prorated = invoice.lines.data.filter((l: any) => l.proration);
    expect(prorated.length).toBeGreaterThan(0);
    for (const line of prorated) expect(line).toMatchObject({ type: 'invoiceitem', invoice_item: expect.stringMatching(/^ii_/), subscription_item: item.id });
    expect(sdkTypeProblems(invoice, 'stripe-v17')).toEqual([]);
  });
});

describe('events', () => {
  test("an account pinned to 2022-08-01 gets its invoices' and subscriptions' events as then", async () => {
    const key = newTestKey();
    await get(key, '/v1/account', at('2022-08-01'));
    const { sub, price } = await subscribed(key, { coupon: false });
    const [paid] = await eventsOf(key, 'invoice.paid');
    expect(paid.api_version).toBe('2022-08-01');
    const [intent] = (await get(key, `/v1/payment_intents?customer=${sub.customer}`)).body.data;
    const [charge] = (await get(key, `/v1/charges?payment_intent=${intent.id}`)).body.data;
    expect(paid.data.object).toMatchObject({ subscription: sub.id, paid: true, charge: charge.id, payment_intent: intent.id });
    expect(paid.data.object.lines.data[0]).toMatchObject({ type: 'subscription', proration: false, price: { id: price.id, object: 'price' }, plan: { id: price.id } });
    expect(paid.data.object).not.toHaveProperty('parent');
    expect(sdkTypeProblems(paid, 'stripe-v11')).toEqual([]);
    const [created] = await eventsOf(key, 'customer.subscription.created');
    expect(created.data.object.current_period_end).toBe(sub.current_period_end);
    expect(created.data.object.discount).toBeNull();
    await post(key, `/v1/subscriptions/${sub.id}`, { metadata: { plan: 'silver' }, items: [{ id: sub.items.data[0].id, quantity: 5 }], proration_behavior: 'none' });
    const [updated] = await eventsOf(key, 'customer.subscription.updated');
    expect(updated.data.object).toMatchObject({ current_period_start: sub.current_period_start, metadata: { plan: 'silver' } });
    // The items as they were, and with them the period they had.
    expect(updated.data.previous_attributes).toMatchObject({ metadata: { plan: 'gold' }, current_period_start: sub.current_period_start });
    expect(updated.data.previous_attributes.items.data[0].quantity).toBe(2);
    expect(updated.data.previous_attributes).not.toHaveProperty('discount');
  });

  test('previous_attributes: a downgrade moves only what is there', () => {
    expect(renderer.render({ status: 'open', amount_paid: 0 }, '2022-08-01', 'invoice')).toEqual({ status: 'open', amount_paid: 0, paid: false });
    expect(renderer.render({ metadata: { a: '1' } }, '2022-08-01', 'invoice')).toEqual({ metadata: { a: '1' } });
    expect(renderer.render({ parent: null }, '2022-08-01', 'invoice')).toEqual({ quote: null, subscription: null, subscription_details: null });
    expect(renderer.render({ quantity: 1 }, '2022-08-01', 'line_item')).toEqual({ quantity: 1 });
    expect(renderer.render({ metadata: {} }, '2022-08-01', 'subscription')).toEqual({ metadata: {} });
    expect(renderer.render({ marketing_features: [{ name: 'a' }] }, '2023-10-16', 'product')).toEqual({ features: [{ name: 'a' }] });
    expect(renderer.render({ name: 'old' }, '2022-11-15', 'product')).toEqual({ name: 'old' });
  });

  test('tax_percent (null) on whole subscriptions and invoices before 2020-08-27, not after', () => {
    const sub = { id: 'sub_1', object: 'subscription', discounts: [], items: { object: 'list', data: [] } };
    expect(renderer.render(sub, '2020-03-02')).toMatchObject({ tax_percent: null, discount: null });
    expect(renderer.render(sub, '2020-08-27')).not.toHaveProperty('tax_percent');
    expect(renderer.render({ id: 'in_1', object: 'invoice' }, '2019-12-03')).toMatchObject({ tax_percent: null, paid_out_of_band: false });
  });

  test('prices named by id and unknown to the embed leave `price` null; expanded ones are kept', () => {
    const line = { id: 'il_1', object: 'line_item', amount: 100, quantity: 1, pricing: { type: 'price_details', price_details: { price: 'price_x', product: 'prod_x' }, unit_amount_decimal: '100' }, taxes: [] };
    expect(renderer.render(line, '2024-04-10')).toMatchObject({ price: null, plan: null, tax_amounts: [], tax_rates: [], amount_excluding_tax: 100 });
    const price = { id: 'price_x', object: 'price', recurring: null, unit_amount: 100 };
    const expanded = { ...line, pricing: { ...line.pricing, price_details: { price, product: 'prod_x' } } };
    expect(renderer.render(expanded, '2024-04-10')).toMatchObject({ price: { id: 'price_x' }, plan: null });
  });
});

describe('products and prices', () => {
  test('features before 2024-04-10; attributes, caption and deactivate_on before 2023-08-16', async () => {
    const key = newTestKey();
    const product = (await post(key, '/v1/products', { name: 'Box', marketing_features: [{ name: 'Sturdy' }] })).body;
    const v14 = (await get(key, `/v1/products/${product.id}`, at('2023-10-16'))).body;
    expect(v14.features).toEqual([{ name: 'Sturdy' }]);
    expect(v14).not.toHaveProperty('marketing_features');
    expect(v14).not.toHaveProperty('attributes');
    expect(sdkTypeProblems(v14, 'stripe-v14')).toEqual([]);
    const v11 = (await get(key, `/v1/products/${product.id}`, at('2022-11-15'))).body;
    expect(v11).toMatchObject({ features: [{ name: 'Sturdy' }], attributes: [], caption: null, deactivate_on: [] });
    expect(sdkTypeProblems(v11, 'stripe-v11')).toEqual([]);
    expect((await get(key, `/v1/products/${product.id}`, at('2024-04-10'))).body).not.toHaveProperty('features');
  });

  test("a price's recurring has aggregate_usage before basil; a one-time price has no recurring to change", async () => {
    const key = newTestKey();
    const recurring = await createPrice(t, key, { unit_amount: 100, currency: 'usd', recurring: { interval: 'month' }, product_data: { name: 'R' } });
    const once = await createPrice(t, key, { unit_amount: 100, currency: 'usd', product_data: { name: 'O' } });
    expect((await get(key, `/v1/prices/${recurring.id}`, at('2025-02-24.acacia'))).body.recurring).toMatchObject({ interval: 'month', aggregate_usage: null });
    expect((await get(key, `/v1/prices/${once.id}`, at('2025-02-24.acacia'))).body.recurring).toBeNull();
    expect((await get(key, `/v1/prices/${recurring.id}`, at('2025-03-31.basil'))).body.recurring).not.toHaveProperty('aggregate_usage');
  });
});
