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
        message: 'Received unknown parameter: coupon',
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
      expectError(await post(key, '/v1/products', { name: 'Box', features: [{ name: 'Fast' }] }, at(version)), 400, { code: 'parameter_unknown', param: 'features' });
    }
  });
});
