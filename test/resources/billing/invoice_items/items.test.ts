import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCustomer, createPrice, createProduct, createTaxRate } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// Invoice items made, changed and deleted through the API: amounts are price × quantity, worked
// out by hand below.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del, eventsOf } = requestsOf(() => t);
const II = '/v1/invoiceitems';

async function setup() {
  const key = newTestKey();
  const customer = await createCustomer(t, key);
  return { key, customer: customer.id as string };
}

describe('POST /v1/invoiceitems', () => {
  test('an amount: a pending item of that amount, quantity 1, with invoiceitem.created', async () => {
    const { key, customer } = await setup();
    const res = await post(key, II, { customer, amount: 1250, currency: 'usd', description: 'Setup fee', metadata: { order: '7' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoiceitems', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body).toMatchObject({
      object: 'invoiceitem',
      amount: 1250,
      currency: 'usd',
      customer,
      description: 'Setup fee',
      quantity: 1,
      invoice: null,
      proration: false,
      discountable: true,
      metadata: { order: '7' },
      parent: null,
      pricing: { type: 'price_details', unit_amount_decimal: '1250' },
    });
    expect(res.body.period).toEqual({ start: res.body.date, end: res.body.date });
    const [event] = await eventsOf(key, 'invoiceitem.created');
    expect(event.data.object).toEqual(res.body);
    expect((await get(key, `${II}/${res.body.id}`)).body).toEqual(res.body);
    expect((await get(key, `${II}?pending=true&customer=${customer}`)).body.data.map((i: any) => i.id)).toEqual([res.body.id]);
  });

  test('a negative amount is a credit, not discountable unless asked', async () => {
    const { key, customer } = await setup();
    const res = await post(key, II, { customer, amount: -300, currency: 'usd' });
    expect(res.body).toMatchObject({ amount: -300, discountable: false });
  });

  test('a one-time price × quantity: 3 × 450 = 1350', async () => {
    const { key, customer } = await setup();
    const price = await createPrice(t, key, { unit_amount: 450, product_data: { name: 'Widget' } });
    const res = await post(key, II, { customer, pricing: { price: price.id }, quantity: 3 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ amount: 1350, quantity: 3, currency: 'usd', pricing: { price_details: { price: price.id, product: price.product } } });
    // `price`, its name before basil, is taken too.
    expect((await post(key, II, { customer, price: price.id })).body.amount).toBe(450);
  });

  test('price_data on a product: 2 × 12.5 = 25; unit_amount_decimal × quantity rounds per the rule', async () => {
    const { key, customer } = await setup();
    const product = await createProduct(t, key, { name: 'Hours' });
    const res = await post(key, II, { customer, price_data: { currency: 'eur', product: product.id, unit_amount_decimal: '12.5' }, quantity: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ amount: 25, currency: 'eur', pricing: { price_details: { product: product.id }, unit_amount_decimal: '12.5' } });
    // 0.333 × 5 = 1.665 → 2 (nearest unit).
    const dec = await post(key, II, { customer, unit_amount_decimal: '0.333', quantity: 5, currency: 'usd' });
    expect(dec.body).toMatchObject({ amount: 2, quantity: 5, pricing: { unit_amount_decimal: '0.333' } });
  });

  test('tax rates, period and a subscription are kept', async () => {
    const { key, customer } = await setup();
    const rate = await createTaxRate(t, key);
    const res = await post(key, II, { customer, amount: 100, currency: 'usd', tax_rates: [rate.id], period: { start: 1800000000, end: 1800086400 } });
    expect(res.body.tax_rates.map((r: any) => r.id)).toEqual([rate.id]);
    expect(res.body.period).toEqual({ start: 1800000000, end: 1800086400 });
  });

  test('errors: no pricing, two pricings, no currency, unknown customer, a recurring price, another key', async () => {
    const { key, customer } = await setup();
    expectError(await post(key, II, { customer }), 400, { type: 'invalid_request_error', param: 'amount' });
    expectError(await post(key, II, { customer, amount: 1, unit_amount_decimal: '1', currency: 'usd' }), 400, { param: 'amount' });
    expectError(await post(key, II, { customer, amount: 1 }), 400, { code: 'parameter_missing', param: 'currency' });
    expectError(await post(key, II, { amount: 1, currency: 'usd' }), 400, { code: 'parameter_missing', param: 'customer' });
    expectError(await post(key, II, { customer: 'cus_nope', amount: 1, currency: 'usd' }), 400, { code: 'resource_missing', param: 'customer' });
    const monthly = await createPrice(t, key, { unit_amount: 100, recurring: { interval: 'month' }, product_data: { name: 'M' } });
    expectError(await post(key, II, { customer, pricing: { price: monthly.id } }), 400, { param: 'pricing[price]' });
    const oneTime = await createPrice(t, key, { unit_amount: 100, product_data: { name: 'O' } });
    expectError(await post(key, II, { customer, pricing: { price: oneTime.id }, currency: 'eur' }), 400, { param: 'currency' });
    expectError(await post(key, II, { customer, amount: 1, currency: 'usd', invoice: 'in_nope' }), 400, { code: 'resource_missing', param: 'invoice' });
    expectError(await post(key, II, { customer, amount: 1, currency: 'usd', subscription: 'sub_nope' }), 400, { code: 'resource_missing', param: 'subscription' });
    const other = newTestKey();
    expectError(await post(other, II, { customer, amount: 1, currency: 'usd' }), 400, { code: 'resource_missing' });
    const mine = await post(key, II, { customer, amount: 1, currency: 'usd' });
    expectError(await get(other, `${II}/${mine.body.id}`), 404, { code: 'resource_missing' });
    expectError(await post(other, `${II}/${mine.body.id}`, { description: 'x' }), 404, { code: 'resource_missing' });
    expectError(await del(other, `${II}/${mine.body.id}`), 404, { code: 'resource_missing' });
    expect((await get(other, II)).body.data).toEqual([]);
  });
});

describe('POST /v1/invoiceitems/{id}', () => {
  test('quantity and description change; the amount follows the price (4 × 450 = 1800)', async () => {
    const { key, customer } = await setup();
    const price = await createPrice(t, key, { unit_amount: 450, product_data: { name: 'Widget' } });
    const made = (await post(key, II, { customer, pricing: { price: price.id } })).body;
    const res = await post(key, `${II}/${made.id}`, { quantity: 4, description: 'Four widgets', metadata: { a: '1' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoiceitemsInvoiceitem', 200, res.body);
    expect(res.body).toMatchObject({ id: made.id, amount: 1800, quantity: 4, description: 'Four widgets', metadata: { a: '1' } });
    const amount = await post(key, `${II}/${made.id}`, { amount: -50 });
    expect(amount.body).toMatchObject({ amount: -50, quantity: 1 });
    expect((await get(key, `${II}/${made.id}`)).body).toEqual(amount.body);
  });

  test('unknown id is a 404; a bad tax rate names its index', async () => {
    const { key, customer } = await setup();
    expectError(await post(key, `${II}/ii_nope`, { description: 'x' }), 404, { code: 'resource_missing' });
    const made = (await post(key, II, { customer, amount: 10, currency: 'usd' })).body;
    expectError(await post(key, `${II}/${made.id}`, { tax_rates: ['txr_nope'] }), 400, { param: 'tax_rates[0]' });
  });
});

describe('DELETE /v1/invoiceitems/{id}', () => {
  test('a pending item goes, with invoiceitem.deleted', async () => {
    const { key, customer } = await setup();
    const made = (await post(key, II, { customer, amount: 10, currency: 'usd' })).body;
    const res = await del(key, `${II}/${made.id}`);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('DeleteInvoiceitemsInvoiceitem', 200, res.body);
    expect(res.body).toEqual({ id: made.id, object: 'invoiceitem', deleted: true });
    expectError(await get(key, `${II}/${made.id}`), 404, { code: 'resource_missing' });
    const [event] = await eventsOf(key, 'invoiceitem.deleted');
    expect(event.data.object).toMatchObject({ id: made.id, amount: 10 });
    expectError(await del(key, `${II}/${made.id}`), 404, { code: 'resource_missing' });
  });

  test('an item a subscription invoiced (finalized) can be neither changed nor deleted', async () => {
    const { key, customer } = await setup();
    const attached = await post(key, '/v1/payment_methods/pm_card_visa/attach', { customer });
    await post(key, `/v1/customers/${customer}`, { invoice_settings: { default_payment_method: attached.body.id } });
    const price = await createPrice(t, key, { unit_amount: 1000, recurring: { interval: 'month' }, product_data: { name: 'Gold' } });
    const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price: price.id }] })).body;
    const item = (await post(key, II, { customer, amount: 700, currency: 'usd', subscription: sub.id })).body;
    expect(item.parent).toEqual({ type: 'subscription_details', subscription_details: { subscription: sub.id } });
    // An upgrade invoiced at once takes the subscription's pending items (700 among them).
    const gold2 = await createPrice(t, key, { unit_amount: 2000, recurring: { interval: 'month' }, product_data: { name: 'Gold2' } });
    const up = await post(key, `/v1/subscription_items/${sub.items.data[0].id}`, { price: gold2.id, proration_behavior: 'always_invoice' });
    expect(up.status).toBe(200);
    const invoiced = (await get(key, `${II}/${item.id}`)).body;
    expect(invoiced.invoice).toMatch(/^in_/);
    expectError(await post(key, `${II}/${item.id}`, { description: 'x' }), 400, { code: 'invoice_already_finalized' });
    expectError(await del(key, `${II}/${item.id}`), 400, { code: 'invoice_already_finalized' });
  });
});

test('the SDK creates, updates, lists and deletes', async () => {
  const { key, customer } = await setup();
  const stripe = t.stripe(key);
  const made = await stripe.invoiceItems.create({ customer, amount: 500, currency: 'usd' });
  expectMatchesSdkTypes(made);
  const updated = await stripe.invoiceItems.update(made.id, { description: 'Changed' });
  expect(updated.description).toBe('Changed');
  expect((await stripe.invoiceItems.list({ customer })).data.map((i) => i.id)).toEqual([made.id]);
  expect(await stripe.invoiceItems.del(made.id)).toMatchObject({ id: made.id, deleted: true });
});
