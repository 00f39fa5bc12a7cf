import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createCoupon, createPromotionCode } from '../../helpers/fixtures';
import { payingCustomer, recurringPrice } from '../../helpers/billing';
import { expectError, requestsOf } from '../../helpers/requests';

// A customer's `coupon` and `promotion_code` (create and update) before 2025-03-31.basil: the
// customer carries that discount (`discount`, shown at every version), its subscriptions without a
// discount of their own bill it, `''` removes it; at basil and after they are unknown parameters.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);
const at = (version: string) => ({ 'Stripe-Version': version });
const OLD = at('2024-04-10');
const NEWEST = at(LATEST_API_VERSION);

/** A customer who pays by card, made at 2024-04-10 with `params` (its discount). */
async function customerWith(key: string, params: Record<string, unknown>) {
  const created = await post(key, '/v1/customers', { email: 'd@example.com', ...params }, OLD);
  expect(created.status).toBe(200);
  const attached = await post(key, '/v1/payment_methods/pm_card_visa/attach', { customer: created.body.id });
  expect((await post(key, `/v1/customers/${created.body.id}`, { invoice_settings: { default_payment_method: attached.body.id } })).status).toBe(200);
  return created.body;
}

/** A new monthly subscription of `customer` to a price of `amount`, and its first invoice (newest shape). */
async function subscribe(key: string, customer: string, amount: number, params: Record<string, unknown> = {}) {
  const price = await recurringPrice(t, key, amount);
  const sub = await post(key, '/v1/subscriptions', { customer, items: [{ price: price.id }], ...params });
  expect(sub.status).toBe(200);
  return (await get(key, `/v1/invoices/${sub.body.latest_invoice}`, NEWEST)).body;
}

describe("a customer's coupon and promotion_code before 2025-03-31.basil", () => {
  test('create with `coupon`: `discount` shown at old and newest versions; its subscription invoice bills the net', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { percent_off: 25, duration: 'forever' });
    const customer = await customerWith(key, { coupon: coupon.id });
    // At 2024-04-10 the discount's coupon is whole.
    expect(customer.discount).toMatchObject({ object: 'discount', customer: customer.id, coupon: { id: coupon.id, object: 'coupon', percent_off: 25 }, subscription: null });
    expect(customer.discount.source).toBeUndefined();
    // At the newest version the same discount, its coupon in `source`.
    const newest = (await get(key, `/v1/customers/${customer.id}`, NEWEST)).body;
    expect(newest.discount).toMatchObject({ id: customer.discount.id, object: 'discount', source: { coupon: coupon.id, type: 'coupon' }, promotion_code: null });
    expect((await get(key, `/v1/coupons/${coupon.id}`)).body.times_redeemed).toBe(1);
    const invoice = await subscribe(key, customer.id, 1000);
    expect(invoice).toMatchObject({ subtotal: 1000, total: 750 });
    expect(invoice.total_discount_amounts).toEqual([{ amount: 250, discount: customer.discount.id }]);
    // Old versions show the invoice's discount whole too.
    const oldInvoice = (await get(key, `/v1/invoices/${invoice.id}`, OLD)).body;
    expect(oldInvoice.discount).toMatchObject({ id: customer.discount.id, coupon: { id: coupon.id } });
    // Lists and search show it as well.
    const listed = (await get(key, '/v1/customers?limit=1', NEWEST)).body.data[0];
    expect(listed.discount).toMatchObject({ id: customer.discount.id });
    // The same request at basil and after: `coupon` is no parameter there.
    for (const version of ['2025-03-31.basil', LATEST_API_VERSION]) {
      expectError(await post(key, '/v1/customers', { coupon: coupon.id }, at(version)), 400, {
        code: 'parameter_unknown',
        param: 'coupon',
        message: 'Received unknown parameter: coupon',
      });
    }
  });

  test("a once-only customer discount ends with the first invoice that applied it", async () => {
    const key = newTestKey();
    const customer = await customerWith(key, { coupon: (await createCoupon(t, key, { percent_off: 25, duration: 'once' })).id });
    expect(await subscribe(key, customer.id, 1000)).toMatchObject({ subtotal: 1000, total: 750 });
    expect((await get(key, `/v1/customers/${customer.id}`, NEWEST)).body.discount).toBeNull();
    expect(await subscribe(key, customer.id, 1000)).toMatchObject({ subtotal: 1000, total: 1000 });
  });

  test("a subscription's own discount wins over its customer's", async () => {
    const key = newTestKey();
    const customer = await customerWith(key, { coupon: (await createCoupon(t, key, { percent_off: 25, duration: 'forever' })).id });
    const own = await createCoupon(t, key, { percent_off: 10, duration: 'forever' });
    const invoice = await subscribe(key, customer.id, 1000, { discounts: [{ coupon: own.id }] });
    expect(invoice).toMatchObject({ subtotal: 1000, total: 900 });
  });

  test("update with `coupon` sets it, `coupon=''` removes it (events for both); newest refuses the parameter", async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const coupon = await createCoupon(t, key, { amount_off: 100, currency: 'usd', duration: 'forever' });
    const set = await post(key, `/v1/customers/${customer.id}`, { coupon: coupon.id }, OLD);
    expect(set.status).toBe(200);
    expect(set.body.discount).toMatchObject({ coupon: { id: coupon.id, amount_off: 100 } });
    expect(await subscribe(key, customer.id, 1000)).toMatchObject({ subtotal: 1000, total: 900 });
    const removed = await post(key, `/v1/customers/${customer.id}`, { coupon: '' }, OLD);
    expect(removed.status).toBe(200);
    expect(removed.body.discount).toBeNull();
    expect((await get(key, `/v1/customers/${customer.id}`, NEWEST)).body.discount).toBeNull();
    expect(await subscribe(key, customer.id, 1000)).toMatchObject({ subtotal: 1000, total: 1000 });
    // A subscription's first payment writes its PaymentIntent's and charge's events too: look further back.
    const events = (await get(key, '/v1/events?limit=100', NEWEST)).body.data.map((e: any) => e.type);
    expect(events).toEqual(expect.arrayContaining(['customer.discount.created', 'customer.discount.deleted']));
    expectError(await post(key, `/v1/customers/${customer.id}`, { coupon: coupon.id }, NEWEST), 400, { code: 'parameter_unknown', param: 'coupon' });
    expectError(await post(key, `/v1/customers/${customer.id}`, { coupon: '' }, NEWEST), 400, { code: 'parameter_unknown', param: 'coupon' });
  });

  test('`promotion_code` on create and update; errors name the parameter sent; one of the two only', async () => {
    const key = newTestKey();
    const coupon = await createCoupon(t, key, { percent_off: 50, duration: 'forever' });
    const code = await createPromotionCode(t, key, { coupon: coupon.id });
    const customer = await customerWith(key, { promotion_code: code.id });
    expect(customer.discount).toMatchObject({ promotion_code: code.id, coupon: { id: coupon.id } });
    expect(await subscribe(key, customer.id, 1000)).toMatchObject({ subtotal: 1000, total: 500 });
    const other = await createPromotionCode(t, key, { coupon: (await createCoupon(t, key, { percent_off: 10, duration: 'forever' })).id });
    const updated = await post(key, `/v1/customers/${customer.id}`, { promotion_code: other.id }, OLD);
    expect(updated.body.discount).toMatchObject({ promotion_code: other.id });
    expect(updated.body.discount.id).not.toBe(customer.discount.id);
    expectError(await post(key, '/v1/customers', { coupon: 'NOPE' }, OLD), 400, { code: 'resource_missing', param: 'coupon' });
    expectError(await post(key, '/v1/customers', { promotion_code: 'promo_NOPE' }, OLD), 400, { code: 'resource_missing', param: 'promotion_code' });
    expectError(await post(key, '/v1/customers', { coupon: coupon.id, promotion_code: code.id }, OLD), 400, { code: 'parameters_exclusive', param: 'coupon' });
    expectError(await post(key, '/v1/customers', { coupon: { x: '1' } }, OLD), 400, { param: 'coupon' });
    expectError(await post(key, '/v1/customers', { promotion_code: code.id }, NEWEST), 400, { code: 'parameter_unknown', param: 'promotion_code' });
  });

  test('an SDK pinned to 2024-04-10 (stripe-node 15) creates and updates a customer with `coupon`', async () => {
    const key = newTestKey();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const StripeV15 = require('stripe-v15');
    const stripe = new StripeV15(key, { host: '127.0.0.1', port: t.port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
    const coupon = await stripe.coupons.create({ percent_off: 25, duration: 'forever' });
    const customer = await stripe.customers.create({ email: 'sdk@example.com', coupon: coupon.id, payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } });
    expect(customer.discount).toMatchObject({ object: 'discount', coupon: { id: coupon.id } });
    const price = await recurringPrice(t, key, 1000);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }] });
    const invoice = await stripe.invoices.retrieve(sub.latest_invoice as string);
    expect(invoice).toMatchObject({ subtotal: 1000, total: 750 });
    const cleared = await stripe.customers.update(customer.id, { coupon: '' });
    expect(cleared.discount).toBeNull();
    const missing = await stripe.customers.update(customer.id, { coupon: 'NOPE' }).catch((err: any) => err);
    expect(missing).toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_missing', param: 'coupon' });
  });
});
