import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createCoupon, createPromotionCode } from '../../helpers/fixtures';
import { payingCustomer, recurringPrice } from '../../helpers/billing';
import { expectError, requestsOf } from '../../helpers/requests';

// Billing's parameters at older versions, through HTTP with Stripe-Version and an SDK pinned to
// one: a subscription's single `coupon`/`promotion_code` (before 2025-03-31.basil), products'
// `features` (before 2024-04-10), and items' `plan` (every version). The same request at a version
// after the change gets the public 400 for an unknown parameter.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);
const SUB = '/v1/subscriptions';
const at = (version: string) => ({ 'Stripe-Version': version });
const NEWEST = at(LATEST_API_VERSION);
const ACACIA = at('2025-02-24.acacia');

/** The subscription as the newest version shows it (its discounts by id), and its first invoice. */
async function newest(key: string, id: string) {
  const sub = (await get(key, `${SUB}/${id}`, NEWEST)).body;
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`, NEWEST)).body;
  return { sub, invoice };
}

describe("a subscription's coupon and promotion_code before 2025-03-31.basil", () => {
  test('create with `coupon` at 2024-04-10: the subscription carries that discount and its invoice bills the net', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { percent_off: 25, duration: 'forever' });
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], coupon: coupon.id }, at('2024-04-10'));
    expect(res.status).toBe(200);
    const { sub, invoice } = await newest(key, res.body.id);
    expect(sub.discounts).toHaveLength(1);
    expect(invoice).toMatchObject({ subtotal: 1000, total: 750 });
    expect(invoice.total_discount_amounts).toEqual([{ amount: 250, discount: sub.discounts[0] }]);
    // The same request at basil and after: `coupon` is no parameter there.
    for (const version of ['2025-03-31.basil', LATEST_API_VERSION]) {
      expectError(await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], coupon: coupon.id }, at(version)), 400, {
        code: 'parameter_unknown',
        param: 'coupon',
        message: 'Received unknown parameter: coupon. coupon was removed in API version 2025-03-31.basil: use `discounts[][coupon]` instead.',
      });
    }
  });

  test('create with `promotion_code`, and update with `coupon` replacing the discount', async () => {
    const key = newTestKey();
    const code = await createPromotionCode(t, key, { coupon: (await createCoupon(t, key, { amount_off: 100, currency: 'usd', duration: 'forever' })).id });
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], promotion_code: code.id }, ACACIA);
    expect(res.status).toBe(200);
    const { sub, invoice } = await newest(key, res.body.id);
    expect(sub.discounts).toHaveLength(1);
    expect(invoice).toMatchObject({ subtotal: 1000, total: 900 });
    const other = await createCoupon(t, key, { percent_off: 50, duration: 'forever' });
    expect((await post(key, `${SUB}/${sub.id}`, { coupon: other.id }, ACACIA)).status).toBe(200);
    const after = (await get(key, `${SUB}/${sub.id}`, NEWEST)).body;
    expect(after.discounts).toHaveLength(1);
    expect(after.discounts[0]).not.toBe(sub.discounts[0]);
    expectError(await post(key, `${SUB}/${sub.id}`, { coupon: other.id }, NEWEST), 400, { code: 'parameter_unknown', param: 'coupon' });
    expectError(await post(key, `${SUB}/${sub.id}`, { promotion_code: code.id }, NEWEST), 400, { code: 'parameter_unknown', param: 'promotion_code' });
  });

  test('errors name the parameter sent; one discount only, and not beside `discounts`', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key);
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const base = { customer: customer.id, items: [{ price: price.id }] };
    expectError(await post(key, SUB, { ...base, coupon: 'NOPE' }, ACACIA), 400, { code: 'resource_missing', param: 'coupon' });
    expectError(await post(key, SUB, { ...base, promotion_code: 'promo_NOPE' }, ACACIA), 400, { code: 'resource_missing', param: 'promotion_code' });
    expectError(await post(key, SUB, { ...base, coupon: coupon.id, promotion_code: 'promo_x' }, ACACIA), 400, { code: 'parameters_exclusive', param: 'coupon' });
    expectError(await post(key, SUB, { ...base, coupon: coupon.id, discounts: [{ coupon: coupon.id }] }, ACACIA), 400, {
      code: 'parameters_exclusive',
      param: 'coupon',
      message: 'You may only specify one of these parameters: coupon, discounts.',
    });
    // `discounts` itself is taken at these versions too (a parameter added later).
    expect((await post(key, SUB, { ...base, discounts: [{ coupon: coupon.id }] }, ACACIA)).status).toBe(200);
  });

  test('an SDK pinned to 2024-04-10 (stripe-node 15) creates and updates with `coupon`', async () => {
    const key = newTestKey();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const StripeV15 = require('stripe-v15');
    const stripe = new StripeV15(key, { host: '127.0.0.1', port: t.port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
    const coupon = await stripe.coupons.create({ percent_off: 10, duration: 'forever' });
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 2000);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }], coupon: coupon.id });
    const { invoice } = await newest(key, sub.id);
    expect(invoice).toMatchObject({ subtotal: 2000, total: 1800 });
    const missing = await stripe.subscriptions.update(sub.id, { coupon: 'NOPE' }).catch((err: any) => err);
    expect(missing).toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_missing', param: 'coupon' });
  });
});

describe("items' plan: a recurring price by its id, at every version", () => {
  test('items[0][plan] at 2020-08-27 and at the newest version; plan and price at once is refused', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1500);
    for (const version of ['2020-08-27', LATEST_API_VERSION]) {
      const res = await post(key, SUB, { customer: customer.id, items: [{ plan: price.id, quantity: 2 }] }, at(version));
      expect(res.status).toBe(200);
      const item = (await get(key, `${SUB}/${res.body.id}`, NEWEST)).body.items.data[0];
      expect(item).toMatchObject({ quantity: 2, price: { id: price.id }, plan: { id: price.id, object: 'plan', amount: 1500 } });
    }
    expectError(await post(key, SUB, { customer: customer.id, items: [{ plan: 'price_NOPE' }] }, NEWEST), 400, {
      code: 'resource_missing',
      param: 'items[0][plan]',
      message: "No such plan: 'price_NOPE'",
    });
    expectError(await post(key, SUB, { customer: customer.id, items: [{ plan: price.id, price: price.id }] }, NEWEST), 400, {
      code: 'parameters_exclusive',
      param: 'items[0][plan]',
    });
  });

  test('subscription items: create and update with `plan`', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const gold = await recurringPrice(t, key, 1000, 'Gold');
    const silver = await recurringPrice(t, key, 2000, 'Silver');
    const sub = (await post(key, SUB, { customer: customer.id, items: [{ price: gold.id }] }, NEWEST)).body;
    const added = await post(key, '/v1/subscription_items', { subscription: sub.id, plan: silver.id, proration_behavior: 'none' }, at('2020-08-27'));
    expect(added.status).toBe(200);
    expect(added.body.plan).toMatchObject({ id: silver.id });
    const changed = await post(key, `/v1/subscription_items/${sub.items.data[0].id}`, { plan: silver.id, proration_behavior: 'none' }, NEWEST);
    // Two items of one price are refused, as with `price`.
    expect(changed.status).toBe(400);
    const third = await recurringPrice(t, key, 3000, 'Bronze');
    const updated = await post(key, `/v1/subscription_items/${sub.items.data[0].id}`, { plan: third.id, proration_behavior: 'none' }, NEWEST);
    expect(updated.status).toBe(200);
    expect(updated.body.price).toMatchObject({ id: third.id });
  });
});

describe("products' features before 2024-04-10", () => {
  test('create and update with `features` at 2023-10-16 set marketing_features; at 2024-04-10 and after it is unknown', async () => {
    const key = newTestKey();
    const old = at('2023-10-16');
    const res = await post(key, '/v1/products', { name: 'Box', features: [{ name: 'Fast' }, { name: 'Small' }] }, old);
    expect(res.status).toBe(200);
    const shown = async () => (await get(key, `/v1/products/${res.body.id}`, NEWEST)).body.marketing_features;
    expect(await shown()).toEqual([{ name: 'Fast' }, { name: 'Small' }]);
    expect((await post(key, `/v1/products/${res.body.id}`, { features: [{ name: 'Light' }] }, old)).status).toBe(200);
    expect(await shown()).toEqual([{ name: 'Light' }]);
    expectError(await post(key, '/v1/products', { name: 'Box', features: [{ name: 'x' }], marketing_features: [{ name: 'y' }] }, old), 400, {
      code: 'parameters_exclusive',
      param: 'features',
    });
    for (const version of ['2024-04-10', LATEST_API_VERSION]) {
      const res = await post(key, '/v1/products', { name: 'Box', features: [{ name: 'Fast' }] }, at(version));
      expectError(res, 400, { code: 'parameter_unknown', param: 'features' });
      expect(res.body.error.message).toBe('Received unknown parameter: features. features was removed in API version 2024-04-10: use `marketing_features` instead.');
    }
  });
});

describe("products' id and type on create, at every version", () => {
  test('stripe-node 8 (2020-08-27) names the id and type; the product is found by it, and a second one with it is refused', async () => {
    const key = newTestKey();
    const Stripe8 = require('stripe-v8');
    const stripe = new Stripe8(key, { apiVersion: '2020-08-27', host: '127.0.0.1', port: t.port, protocol: 'http' });
    const id = `gold-${newTestKey().slice(8, 20)}`;
    const made = await stripe.products.create({ id, name: 'Gold', type: 'service' });
    expect(made).toMatchObject({ id, object: 'product', type: 'service', name: 'Gold' });
    expect(await stripe.products.retrieve(id)).toMatchObject({ id, type: 'service' });
    const price = await stripe.prices.create({ product: id, unit_amount: 500, currency: 'usd', recurring: { interval: 'month' } });
    expect(price.product).toBe(id);
    const again = await stripe.products.create({ id, name: 'Gold again' }).catch((e: unknown) => e);
    expect(again).toMatchObject({ statusCode: 400, code: 'resource_already_exists', param: 'id', message: 'Product already exists.' });
    const good = await stripe.products.create({ name: 'Widget', type: 'good' });
    expect(good).toMatchObject({ type: 'good' });
    expect(good.id).toMatch(/^prod_/);
  });

  test('raw HTTP at the newest version too; a bad type or id is a 400', async () => {
    const key = newTestKey();
    const res = await post(key, '/v1/products', { id: `plan.${newTestKey().slice(8, 20)}`, name: 'Plan', type: 'good' }, NEWEST);
    expect(res.body).toMatchObject({ type: 'good' });
    expect((await get(key, `/v1/products/${res.body.id}`, NEWEST)).body.type).toBe('good');
    expectError(await post(key, '/v1/products', { name: 'P', type: 'thing' }, NEWEST), 400, { param: 'type' });
    expectError(await post(key, '/v1/products', { name: 'P', id: 'has space' }, NEWEST), 400, { param: 'id' });
    // Another account's product id is not this one's.
    expectError(await get(newTestKey(), `/v1/products/${res.body.id}`), 404, { code: 'resource_missing' });
  });
});

describe("invoice items' unit_amount before 2025-03-31.basil", () => {
  test('stripe-node 17 (2025-02-24.acacia) creates and updates with unit_amount; at basil and after it is unknown, naming unit_amount_decimal', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const Stripe17 = require('stripe-v17');
    const stripe = new Stripe17(key, { host: '127.0.0.1', port: t.port, protocol: 'http' });
    const item = await stripe.invoiceItems.create({ customer: customer.id, unit_amount: 250, quantity: 3, currency: 'usd' });
    expect(item).toMatchObject({ amount: 750, unit_amount: 250, unit_amount_decimal: '250', quantity: 3 });
    const updated = await stripe.invoiceItems.update(item.id, { unit_amount: 300 });
    expect(updated).toMatchObject({ amount: 900, unit_amount: 300 });
    const both = await stripe.invoiceItems.create({ customer: customer.id, unit_amount: 250, unit_amount_decimal: '250', currency: 'usd' }).catch((e: unknown) => e);
    expect(both).toMatchObject({ statusCode: 400, code: 'parameters_exclusive', param: 'unit_amount' });
    const fraction = await stripe.invoiceItems.create({ customer: customer.id, unit_amount: 2.5 as number, currency: 'usd' }).catch((e: unknown) => e);
    expect(fraction).toMatchObject({ statusCode: 400, code: 'parameter_invalid_integer', param: 'unit_amount' });
    for (const version of ['2025-03-31.basil', LATEST_API_VERSION]) {
      const res = await post(key, '/v1/invoiceitems', { customer: customer.id, unit_amount: 250, currency: 'usd' }, at(version));
      expectError(res, 400, { code: 'parameter_unknown', param: 'unit_amount' });
      expect(res.body.error.message).toContain('use `unit_amount_decimal` instead');
    }
  });
});

describe("invoices' rendering (rendering_options before 2024-04-10)", () => {
  test('stripe-node 14 (2023-10-16) sets rendering_options; it shows as both names there and as rendering today', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const Stripe14 = require('stripe-v14');
    const stripe = new Stripe14(key, { host: '127.0.0.1', port: t.port, protocol: 'http' });
    const invoice = await stripe.invoices.create({ customer: customer.id, rendering_options: { amount_tax_display: 'include_inclusive_tax' } });
    expect(invoice.rendering_options).toEqual({ amount_tax_display: 'include_inclusive_tax' });
    const today = (await get(key, `/v1/invoices/${invoice.id}`, NEWEST)).body;
    expect(today.rendering).toEqual({ amount_tax_display: 'include_inclusive_tax', pdf: null, template: null, template_version: null });
    expect(today).not.toHaveProperty('rendering_options');
    const cleared = await stripe.invoices.update(invoice.id, { rendering_options: { amount_tax_display: '' } });
    expect(cleared.rendering_options).toEqual({ amount_tax_display: null });
    const both = await stripe.invoices.create({ customer: customer.id, rendering_options: { amount_tax_display: 'exclude_tax' }, rendering: { amount_tax_display: 'exclude_tax' } }).catch((e: unknown) => e);
    expect(both).toMatchObject({ statusCode: 400, code: 'parameters_exclusive', param: 'rendering_options' });
  });

  test('rendering at the newest version: set, merged by update, shown; rendering_options is unknown, naming rendering; no templates', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const stripe = t.stripe(key);
    const invoice = await stripe.invoices.create({ customer: customer.id, rendering: { amount_tax_display: 'exclude_tax' } });
    expect(invoice.rendering).toEqual({ amount_tax_display: 'exclude_tax', pdf: null, template: null, template_version: null });
    const updated = await stripe.invoices.update(invoice.id, { rendering: { pdf: { page_size: 'a4' } } });
    expect(updated.rendering).toEqual({ amount_tax_display: 'exclude_tax', pdf: { page_size: 'a4' }, template: null, template_version: null });
    const plain = await stripe.invoices.create({ customer: customer.id });
    expect(plain.rendering).toBeNull();
    const old = await post(key, '/v1/invoices', { customer: customer.id, rendering_options: { amount_tax_display: 'exclude_tax' } }, at('2024-04-10'));
    expectError(old, 400, { code: 'parameter_unknown', param: 'rendering_options' });
    expect(old.body.error.message).toContain('use `rendering` instead');
    expectError(await post(key, '/v1/invoices', { customer: customer.id, rendering: { amount_tax_display: 'sometimes' } }, NEWEST), 400, { param: 'rendering[amount_tax_display]' });
    expectError(await post(key, '/v1/invoices', { customer: customer.id, rendering: { template: 'inrtem_nope' } }, NEWEST), 400, { code: 'resource_missing', param: 'rendering[template]' });
  });
});

describe('an invoice: no last_payment_error, and deleted as {id, object, deleted} at every version', () => {
  test.each(['2020-08-27', '2022-11-15', '2024-04-10', '2025-02-24.acacia', '2025-08-27.basil', LATEST_API_VERSION])('at %s', async (version) => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const draft = await post(key, '/v1/invoices', { customer: customer.id }, at(version));
    expect(draft.status).toBe(200);
    expect(draft.body).not.toHaveProperty('last_payment_error');
    const deleted = await t.http().delete(`/v1/invoices/${draft.body.id}`).set('Authorization', `Bearer ${key}`).set('Stripe-Version', version);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: draft.body.id, object: 'invoice', deleted: true });
    // Deleting it again: gone.
    const again = await t.http().delete(`/v1/invoices/${draft.body.id}`).set('Authorization', `Bearer ${key}`).set('Stripe-Version', version);
    expect(again.status).toBe(404);
  });

  test('stripe-node 8 deletes a draft and reads {id, object, deleted}', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const Stripe8 = require('stripe-v8');
    const stripe = new Stripe8(key, { apiVersion: '2020-08-27', host: '127.0.0.1', port: t.port, protocol: 'http' });
    const draft = await stripe.invoices.create({ customer: customer.id });
    const { lastResponse: _l, ...deleted } = await stripe.invoices.del(draft.id);
    expect(deleted).toEqual({ id: draft.id, object: 'invoice', deleted: true });
  });
});
