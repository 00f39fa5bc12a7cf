import { LATEST_API_VERSION } from '../../../../src/kernel/versions';
import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCoupon } from '../../../helpers/fixtures';
import { recurringPrice } from '../../../helpers/billing';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// DELETE /v1/customers/{customer}/discount: the customer's discount (set at versions before
// 2025-03-31.basil) ends; answered deleted, with `customer.discount.deleted`; its subscriptions
// without a discount of their own bill the whole price from then on.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del } = requestsOf(() => t);
const OLD = { 'Stripe-Version': '2024-04-10' };
const NEWEST = { 'Stripe-Version': LATEST_API_VERSION };

/** A customer paying with `pm_card_visa` whose discount is `coupon` (set at 2024-04-10). */
async function customerWith(key: string, coupon: string): Promise<Record<string, any>> {
  const created = await post(key, '/v1/customers', { coupon, payment_method: 'pm_card_visa', invoice_settings: { default_payment_method: 'pm_card_visa' } }, OLD);
  expect(created.status).toBe(200);
  return (await get(key, `/v1/customers/${created.body.id}`, NEWEST)).body;
}

async function invoiceTotal(key: string, customer: string): Promise<number> {
  const price = await recurringPrice(t, key, 1000);
  const sub = await post(key, '/v1/subscriptions', { customer, items: [{ price: price.id }] }, NEWEST);
  expect(sub.status).toBe(200);
  return (await get(key, `/v1/invoices/${sub.body.latest_invoice}`, NEWEST)).body.total;
}

test("answers the discount deleted, sends customer.discount.deleted, and the customer's invoices bill it no more", async () => {
  const key = newTestKey();
  const coupon = await createCoupon(t, key, { percent_off: 25, duration: 'forever' });
  const customer = await customerWith(key, coupon.id);
  expect(await invoiceTotal(key, customer.id)).toBe(750);
  const deleted = await del(key, `/v1/customers/${customer.id}/discount`, NEWEST);
  expect(deleted.status).toBe(200);
  expect(deleted.body).toEqual({
    id: customer.discount.id,
    object: 'discount',
    checkout_session: null,
    customer: customer.id,
    customer_account: null,
    deleted: true,
    invoice: null,
    invoice_item: null,
    promotion_code: null,
    source: { coupon: coupon.id, type: 'coupon' },
    start: customer.discount.start,
    subscription: null,
    subscription_item: null,
  });
  expectMatchesResponseSchema('DeleteCustomersCustomerDiscount', 200, deleted.body);
  expectMatchesSdkTypes(deleted.body);
  expect((await get(key, `/v1/customers/${customer.id}`, NEWEST)).body.discount).toBeNull();
  const events = (await get(key, '/v1/events?type=customer.discount.deleted', NEWEST)).body.data;
  expect(events).toHaveLength(1);
  expect(events[0].data.object).toMatchObject({ id: customer.discount.id, object: 'discount', customer: customer.id, subscription: null });
  // Events render at the account's version (2024-04-10 here), stripe-node 15's.
  expectMatchesSdkTypes(events[0], 'customer.discount.deleted', 'stripe-v15');
  expect(await invoiceTotal(key, customer.id)).toBe(1000);
  // Nothing left to delete.
  expectError(await del(key, `/v1/customers/${customer.id}/discount`, NEWEST), 404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No active discount for customer: ${customer.id}`,
  });
});

test('an unknown or deleted customer: 404; at an older version the coupon shows whole', async () => {
  const key = newTestKey();
  expectError(await del(key, '/v1/customers/cus_nope/discount'), 404, { code: 'resource_missing', message: 'No such customer: \'cus_nope\'' });
  const coupon = await createCoupon(t, key, { amount_off: 200, currency: 'usd', duration: 'forever' });
  const gone = await customerWith(key, coupon.id);
  expect((await del(key, `/v1/customers/${gone.id}`)).status).toBe(200);
  expectError(await del(key, `/v1/customers/${gone.id}/discount`), 404, { code: 'resource_missing' });
  const customer = await customerWith(key, coupon.id);
  const old = await del(key, `/v1/customers/${customer.id}/discount`, OLD);
  expect(old.status).toBe(200);
  expect(old.body).toMatchObject({ id: customer.discount.id, deleted: true, coupon: { id: coupon.id, object: 'coupon', amount_off: 200 } });
  expect(old.body.source).toBeUndefined();
});

test('the official SDK: customers.deleteDiscount, and its error when there is none', async () => {
  const key = newTestKey();
  const coupon = await createCoupon(t, key, { percent_off: 10, duration: 'forever' });
  const customer = await customerWith(key, coupon.id);
  const stripe = t.stripe(key);
  const deleted = await stripe.customers.deleteDiscount(customer.id);
  expect(deleted).toMatchObject({ id: customer.discount.id, object: 'discount', deleted: true, customer: customer.id });
  const missing = await stripe.customers.deleteDiscount(customer.id).catch((err: unknown) => err);
  expect(missing).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404, code: 'resource_missing' });
});
