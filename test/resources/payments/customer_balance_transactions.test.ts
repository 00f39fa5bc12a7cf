import Stripe from 'stripe';
import { newTestKey } from '../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { createCustomer } from '../../helpers/fixtures';
import { payingCustomer } from '../../helpers/billing';
import { until } from '../../helpers/queues';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../helpers/requests';
import { expectMatchesSdkTypes } from '../../helpers/sdkTypes';

// A customer's balance: adjustments made through the API (customer.updated shows the balance it
// had), and the balance applied to the next invoice as it is finalized (starting_balance,
// ending_balance, an applied_to_invoice transaction), manual invoices and a test clock's renewals.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('balance');
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const txns = (customer: string) => `/v1/customers/${customer}/balance_transactions`;

async function adjust(key: string, customer: string, amount: number, currency = 'usd') {
  const res = await post(key, txns(customer), { amount, currency });
  expect(res.status).toBe(200);
  return res.body;
}

/** A manual invoice of `amount` for `customer`, finalized. */
async function finalizedInvoice(key: string, customer: string, amount: number) {
  const draft = (await post(key, '/v1/invoices', { customer })).body;
  await post(key, '/v1/invoiceitems', { customer, amount, currency: 'usd', invoice: draft.id });
  const res = await post(key, `/v1/invoices/${draft.id}/finalize`, {});
  expect(res.status).toBe(200);
  return res.body;
}

describe('balance transactions', () => {
  test('create: the public object; the balance moves and customer.updated shows what it was', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(e.t, key)).id;
    const res = await post(key, txns(customer), { amount: -500, currency: 'USD', description: 'Goodwill', metadata: { ticket: '7' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostCustomersCustomerBalanceTransactions', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^cbtxn_/),
      object: 'customer_balance_transaction',
      amount: -500,
      checkout_session: null,
      created: expect.any(Number),
      credit_note: null,
      currency: 'usd',
      customer,
      customer_account: null,
      description: 'Goodwill',
      ending_balance: -500,
      invoice: null,
      livemode: false,
      metadata: { ticket: '7' },
      type: 'adjustment',
    });
    expect((await get(key, `/v1/customers/${customer}`)).body).toMatchObject({ balance: -500, currency: 'usd' });
    const [updated] = await eventsOf(key, 'customer.updated');
    expect(updated.data.object).toMatchObject({ id: customer, balance: -500, currency: 'usd' });
    expect(updated.data.previous_attributes).toEqual({ balance: 0, currency: null });
    const second = await adjust(key, customer, 200);
    expect(second).toMatchObject({ amount: 200, ending_balance: -300 });
    expect((await get(key, `/v1/customers/${customer}`)).body.balance).toBe(-300);
    const read = await get(key, `${txns(customer)}/${res.body.id}`);
    expectMatchesResponseSchema('GetCustomersCustomerBalanceTransactionsTransaction', 200, read.body);
    expect(read.body).toEqual(res.body);
    const list = await get(key, txns(customer));
    expectMatchesResponseSchema('GetCustomersCustomerBalanceTransactions', 200, list.body);
    expect(list.body.data.map((x: any) => x.id)).toEqual([second.id, res.body.id]);
  });

  test('update: description and metadata only, the balance unchanged', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(e.t, key)).id;
    const made = await adjust(key, customer, -100);
    const res = await post(key, `${txns(customer)}/${made.id}`, { description: 'Refund of order 9', metadata: { a: '1' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostCustomersCustomerBalanceTransactionsTransaction', 200, res.body);
    expect(res.body).toEqual({ ...made, description: 'Refund of order 9', metadata: { a: '1' } });
    expect((await post(key, `${txns(customer)}/${made.id}`, { description: '', metadata: '' })).body).toMatchObject({ description: null, metadata: {} });
    expectError(await post(key, `${txns(customer)}/${made.id}`, { amount: 5 }), 400, { code: 'parameter_unknown', param: 'amount' });
    expect((await get(key, `/v1/customers/${customer}`)).body.balance).toBe(-100);
  });

  test('bad input: missing or unknown parameters, another currency than the balance\'s, unknown customers and transactions', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(e.t, key)).id;
    expectError(await post(key, txns(customer), { currency: 'usd' }), 400, { code: 'parameter_missing', param: 'amount' });
    expectError(await post(key, txns(customer), { amount: 100 }), 400, { code: 'parameter_missing', param: 'currency' });
    expectError(await post(key, txns(customer), { amount: 100, currency: 'zzz' }), 400, { param: 'currency' });
    expectError(await post(key, txns(customer), { amount: 'lots', currency: 'usd' }), 400, { param: 'amount' });
    await adjust(key, customer, -100);
    expectError(await post(key, txns(customer), { amount: 100, currency: 'eur' }), 400, { param: 'currency', message: expect.stringContaining("Can't combine currencies") });
    expect((await get(key, `/v1/customers/${customer}`)).body).toMatchObject({ balance: -100, currency: 'usd' });
    expectError(await post(key, txns('cus_nope'), { amount: 100, currency: 'usd' }), 404, { code: 'resource_missing', param: 'customer' });
    expectError(await get(key, txns('cus_nope')), 404, { code: 'resource_missing' });
    expectError(await get(key, `${txns(customer)}/cbtxn_nope`), 404, { code: 'resource_missing' });
    expectError(await post(key, `${txns(customer)}/cbtxn_nope`, { description: 'x' }), 404, { code: 'resource_missing' });
    const other = (await createCustomer(e.t, key)).id;
    const mine = (await get(key, txns(customer))).body.data[0].id;
    expectError(await get(key, `${txns(other)}/${mine}`), 404, { code: 'resource_missing' });
  });

  test('another key never sees a customer\'s balance transactions, nor makes or changes one', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(e.t, key)).id;
    const made = await adjust(key, customer, -250);
    const other = newTestKey();
    expectError(await get(other, txns(customer)), 404, { code: 'resource_missing' });
    expectError(await get(other, `${txns(customer)}/${made.id}`), 404, { code: 'resource_missing' });
    expectError(await post(other, `${txns(customer)}/${made.id}`, { description: 'x' }), 404, { code: 'resource_missing' });
    expectError(await post(other, txns(customer), { amount: -1, currency: 'usd' }), 404, { code: 'resource_missing' });
    expect((await get(key, `/v1/customers/${customer}`)).body.balance).toBe(-250);
    expect((await get(key, `${txns(customer)}/${made.id}`)).body.description).toBeNull();
  });

  test('through the SDK: createBalanceTransaction, listBalanceTransactions, retrieveBalanceTransaction, updateBalanceTransaction', async () => {
    const key = newTestKey();
    const stripe = e.t.stripe(key);
    const customer = await stripe.customers.create({ name: 'Jenny' });
    const made = await stripe.customers.createBalanceTransaction(customer.id, { amount: -1200, currency: 'usd' });
    expectMatchesSdkTypes(made);
    expect((await stripe.customers.retrieve(customer.id)) as Stripe.Customer).toMatchObject({ balance: -1200 });
    expect((await stripe.customers.retrieveBalanceTransaction(customer.id, made.id)).amount).toBe(-1200);
    expect((await stripe.customers.updateBalanceTransaction(customer.id, made.id, { description: 'SDK' })).description).toBe('SDK');
    const all = await stripe.customers.listBalanceTransactions(customer.id).autoPagingToArray({ limit: 10 });
    expect(all.map((x) => x.id)).toEqual([made.id]);
    await expect(stripe.customers.createBalanceTransaction(customer.id, { amount: 1, currency: 'eur' })).rejects.toMatchObject({ type: 'StripeInvalidRequestError', param: 'currency' });
  });
});

describe('the balance applied to the next invoice as it is finalized', () => {
  test('a credit smaller than the invoice reduces amount_due; an applied_to_invoice transaction records it', async () => {
    const key = newTestKey();
    const { id: customer } = await payingCustomer(e.t, key);
    await adjust(key, customer, -500);
    const invoice = await finalizedInvoice(key, customer, 2000);
    expect(invoice).toMatchObject({ status: 'open', total: 2000, amount_due: 1500, amount_remaining: 1500, starting_balance: -500, ending_balance: 0 });
    expect((await get(key, `/v1/customers/${customer}`)).body.balance).toBe(0);
    const [applied] = (await get(key, `${txns(customer)}?invoice=${invoice.id}`)).body.data;
    expect(applied).toMatchObject({ type: 'applied_to_invoice', amount: 500, ending_balance: 0, invoice: invoice.id, currency: 'usd' });
    const expanded = (await get(key, `${txns(customer)}/${applied.id}?expand[]=invoice`)).body;
    expect(expanded.invoice).toMatchObject({ id: invoice.id, object: 'invoice', starting_balance: -500 });
    const paid = await post(key, `/v1/invoices/${invoice.id}/pay`, {});
    expect(paid.body).toMatchObject({ status: 'paid', amount_paid: 1500 });
    // A draft shows neither until it is finalized.
    const draft = (await post(key, '/v1/invoices', { customer })).body;
    expect(draft).toMatchObject({ starting_balance: 0, ending_balance: null });
  });

  test('a credit larger than the invoice pays it at finalization; what is left stays the customer\'s', async () => {
    const key = newTestKey();
    const { id: customer } = await payingCustomer(e.t, key);
    await adjust(key, customer, -3000);
    const invoice = await finalizedInvoice(key, customer, 2000);
    expect(invoice).toMatchObject({ status: 'paid', total: 2000, amount_due: 0, amount_paid: 0, starting_balance: -3000, ending_balance: -1000 });
    expect((await get(key, `/v1/customers/${customer}`)).body.balance).toBe(-1000);
    const types = ((await get(key, '/v1/events?limit=100')).body.data as any[]).map((x) => x.type).filter((type) => type !== 'invoiceitem.created').reverse();
    expect(types.slice(types.indexOf('invoice.created'))).toEqual(['invoice.created', 'customer.updated', 'invoice.finalized', 'invoice.paid', 'invoice.payment_succeeded']);
  });

  test('an amount owed (positive balance) is added to the invoice; a draft paid directly takes the balance too', async () => {
    const key = newTestKey();
    const { id: customer } = await payingCustomer(e.t, key);
    await adjust(key, customer, 700);
    const draft = (await post(key, '/v1/invoices', { customer })).body;
    await post(key, '/v1/invoiceitems', { customer, amount: 2000, currency: 'usd', invoice: draft.id });
    const paid = await post(key, `/v1/invoices/${draft.id}/pay`, {});
    expect(paid.body).toMatchObject({ status: 'paid', total: 2000, amount_due: 2700, amount_paid: 2700, starting_balance: 700, ending_balance: 0 });
    expect((await get(key, `/v1/customers/${customer}`)).body.balance).toBe(0);
  });

  test('a balance in another currency is left for an invoice in its own', async () => {
    const key = newTestKey();
    const { id: customer } = await payingCustomer(e.t, key);
    await adjust(key, customer, -500, 'eur');
    const invoice = await finalizedInvoice(key, customer, 2000);
    expect(invoice).toMatchObject({ amount_due: 2000, starting_balance: 0, ending_balance: 0 });
    expect((await get(key, `/v1/customers/${customer}`)).body).toMatchObject({ balance: -500, currency: 'eur' });
  });

  test('a subscription whose first invoice the credit covers is active without a payment method; a partial credit is charged the rest', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(e.t, key)).id;
    await adjust(key, customer, -5000);
    const price = (await post(key, '/v1/prices', { currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' }, product_data: { name: 'Gold' } })).body.id;
    const sub = await post(key, '/v1/subscriptions', { customer, items: [{ price }], expand: ['latest_invoice'] });
    expect(sub.status).toBe(200);
    expect(sub.body.status).toBe('active');
    expect(sub.body.latest_invoice).toMatchObject({ status: 'paid', total: 1000, amount_due: 0, starting_balance: -5000, ending_balance: -4000 });
    const { id: paying } = await payingCustomer(e.t, key);
    await adjust(key, paying, -300);
    const charged = await post(key, '/v1/subscriptions', { customer: paying, items: [{ price }], expand: ['latest_invoice'] });
    expect(charged.body.status).toBe('active');
    expect(charged.body.latest_invoice).toMatchObject({ status: 'paid', amount_due: 700, amount_paid: 700, starting_balance: -300, ending_balance: 0 });
  });

  test('a test clock\'s renewals take the credit: the first all of it (paid at once), the next what is left', async () => {
    const JAN_1_2020 = 1577836800;
    const FEB_1_2020 = 1580515200;
    const MAR_1_2020 = 1583020800;
    const key = newTestKey();
    const stripe = e.t.stripe(key);
    const clock = await stripe.testHelpers.testClocks.create({ frozen_time: JAN_1_2020 });
    const customer = await stripe.customers.create({ test_clock: clock.id, payment_method: 'pm_card_visa' });
    const pm = (await stripe.paymentMethods.list({ customer: customer.id })).data[0].id;
    await stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: pm } });
    const price = await stripe.prices.create({ product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } });
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }] });
    await stripe.customers.createBalanceTransaction(customer.id, { amount: -1500, currency: 'usd' });
    const advance = async (to: number) => {
      await stripe.testHelpers.testClocks.advance(clock.id, { frozen_time: to });
      await until(async () => (await stripe.testHelpers.testClocks.retrieve(clock.id)).status === 'ready', 30000, 'clock ready');
    };
    await advance(FEB_1_2020);
    const [february] = (await stripe.invoices.list({ subscription: sub.id, limit: 1 })).data;
    expect(february).toMatchObject({ billing_reason: 'subscription_cycle', total: 1000, amount_due: 0, starting_balance: -1500, ending_balance: -500, status: 'paid' });
    expect(((await stripe.customers.retrieve(customer.id)) as Stripe.Customer).balance).toBe(-500);
    await advance(MAR_1_2020);
    const [march] = (await stripe.invoices.list({ subscription: sub.id, limit: 1 })).data;
    expect(march).toMatchObject({ total: 1000, amount_due: 500, amount_paid: 500, starting_balance: -500, ending_balance: 0, status: 'paid' });
    expect(((await stripe.customers.retrieve(customer.id)) as Stripe.Customer).balance).toBe(0);
    const applied = (await stripe.customers.listBalanceTransactions(customer.id)).data.filter((x) => x.type === 'applied_to_invoice');
    expect(applied.map((x) => [x.invoice, x.amount, x.ending_balance])).toEqual([[march.id, 500, 0], [february.id, 1000, -500]]);
  });
});
