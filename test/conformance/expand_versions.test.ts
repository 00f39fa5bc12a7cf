import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { payingCustomer, recurringPrice } from '../helpers/billing';
import { expectError, requestsOf } from '../helpers/requests';
import { sdkModule } from './sdk_versions/majors';

// Expansions at every version: what an older version shows as an id expands at that version
// (an invoice's `payment_intent` before basil), through the object registry, as the guides of
// that time call it; what a version doesn't show stays the public 400.

jest.setTimeout(60_000);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);
const at = (version: string) => ({ 'Stripe-Version': version });
const BASIL = '2025-03-31.basil';

/** A client of an older major as its users make it (8 and 11 given the version they pin). */
function client(pkg: 'stripe-v8' | 'stripe-v11' | 'stripe-v14' | 'stripe', key: string, apiVersion?: string): any {
  const S = sdkModule(pkg);
  return new S(key, { host: '127.0.0.1', port: t.port, protocol: 'http', maxNetworkRetries: 0, telemetry: false, ...(apiVersion ? { apiVersion } : {}) });
}

/** A customer whose card asks for nothing, and a monthly price, for a subscription. */
async function subscriptionSetup(key: string, card = 'pm_card_visa') {
  const customer = await payingCustomer(t, key, card);
  const price = await recurringPrice(t, key, 1500);
  return { customer: customer.id, price: price.id };
}

describe("pre-basil subscription sign-up: expand[]=latest_invoice.payment_intent", () => {
  test.each([
    ['stripe-v8', '2020-08-27'],
    ['stripe-v11', '2022-11-15'],
    ['stripe-v14', undefined],
  ] as const)('%s: default_incomplete gives the invoice its PaymentIntent, with its client_secret', async (pkg, apiVersion) => {
    const key = newTestKey();
    const { price } = await subscriptionSetup(key);
    const customer = (await post(key, '/v1/customers', { email: 'new@example.com' })).body;
    const stripe = client(pkg, key, apiVersion);
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price }],
      payment_behavior: 'default_incomplete',
      expand: ['latest_invoice.payment_intent'],
    });
    expect(sub.status).toBe('incomplete');
    const intent = sub.latest_invoice.payment_intent;
    expect(intent).toMatchObject({ object: 'payment_intent', status: 'requires_payment_method', amount: 1500 });
    expect(intent.client_secret).toMatch(new RegExp(`^${intent.id}_secret_`));
    // The intent as that version shows it: its invoice (an id), `charges` before 2022-11-15.
    expect(intent.invoice).toBe(sub.latest_invoice.id);
    if (apiVersion === '2020-08-27') {
      expect(intent).not.toHaveProperty('latest_charge');
      expect(intent.charges).toMatchObject({ object: 'list', data: [] });
    } else {
      expect(intent.latest_charge).toBeNull();
    }
  });

  test('raw HTTP at 2024-04-10: invoice.payment_intent and invoice.charge, and deeper (payment_intent.payment_method)', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const res = await post(
      key,
      '/v1/subscriptions',
      { customer, items: [{ price }], expand: ['latest_invoice.payment_intent.payment_method', 'latest_invoice.charge.customer', 'latest_invoice.subscription'] },
      at('2024-04-10'),
    );
    expect(res.status).toBe(200);
    const invoice = res.body.latest_invoice;
    expect(invoice).toMatchObject({ object: 'invoice', paid: true, subscription: { object: 'subscription', id: res.body.id } });
    expect(invoice.payment_intent).toMatchObject({ object: 'payment_intent', status: 'succeeded', invoice: invoice.id, payment_method: { object: 'payment_method', type: 'card' } });
    expect(invoice.charge).toMatchObject({ object: 'charge', id: invoice.payment_intent.latest_charge, invoice: invoice.id, customer: { object: 'customer', id: customer } });
    // The expanded objects are rendered for the version too (a charge before basil has `invoice`; an invoice its `paid`).
    const retrieved = await get(key, `/v1/invoices/${invoice.id}?expand[]=payment_intent&expand[]=charge`, at('2024-04-10'));
    expect(retrieved.body.payment_intent.id).toBe(invoice.payment_intent.id);
    expect(retrieved.body.charge.id).toBe(invoice.charge.id);
  });

  test('an invoice without a payment yet: payment_intent and charge expand to null', async () => {
    const key = newTestKey();
    const { customer } = await subscriptionSetup(key);
    const draft = (await post(key, '/v1/invoices', { customer }, at('2024-04-10'))).body;
    const res = await get(key, `/v1/invoices/${draft.id}?expand[]=payment_intent&expand[]=charge&expand[]=subscription`, at('2024-04-10'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ payment_intent: null, charge: null, subscription: null });
  });

  test('lists: data.payment_intent on the invoice list at an older version', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    await post(key, '/v1/subscriptions', { customer, items: [{ price }] });
    const res = await get(key, `/v1/invoices?customer=${customer}&expand[]=data.payment_intent`, at('2023-10-16'));
    expect(res.status).toBe(200);
    expect(res.body.data[0].payment_intent).toMatchObject({ object: 'payment_intent', status: 'succeeded' });
    // Not data.-prefixed on a list: the public hint.
    const hinted = await get(key, `/v1/invoices?expand[]=payment_intent`, at('2023-10-16'));
    expectError(hinted, 400, { type: 'invalid_request_error', param: 'expand', message: "This property cannot be expanded (payment_intent). You may want to try expanding 'data.payment_intent' instead." });
  });

  test('at basil and after, the fields it removed are not expandable: the public 400', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    for (const version of [BASIL, LATEST_API_VERSION]) {
      const res = await post(key, '/v1/subscriptions', { customer, items: [{ price }], expand: ['latest_invoice.payment_intent'] }, at(version));
      expectError(res, 400, { type: 'invalid_request_error', param: 'expand', message: 'This property cannot be expanded (payment_intent).' });
      for (const field of ['charge', 'subscription']) {
        expectError(await get(key, `/v1/invoices?expand[]=data.${field}`, at(version)), 400, { message: `This property cannot be expanded (${field}).` });
      }
    }
    // Through the newest SDK too: its error class, its message.
    const stripe = client('stripe', key);
    await expect(stripe.subscriptions.create({ customer, items: [{ price }], expand: ['latest_invoice.payment_intent'] })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      param: 'expand',
      message: 'This property cannot be expanded (payment_intent).',
    });
    // The newest way: confirmation_secret; which did not exist before basil.
    const sub = await stripe.subscriptions.create({ customer, items: [{ price }], payment_behavior: 'default_incomplete', expand: ['latest_invoice.confirmation_secret'] });
    expect(sub.latest_invoice.confirmation_secret.client_secret).toMatch(/_secret_/);
    const old = await post(key, '/v1/subscriptions', { customer, items: [{ price }], expand: ['latest_invoice.confirmation_secret'] }, at('2025-02-24.acacia'));
    expectError(old, 400, { message: 'This property cannot be expanded (confirmation_secret).' });
  });
});

describe('PaymentIntents and charges at older versions', () => {
  test('2020-08-27 (stripe-v8): charges.data.balance_transaction is a path; latest_charge does not exist yet', async () => {
    const key = newTestKey();
    const stripe = client('stripe-v8', key, '2020-08-27');
    const intent = await stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, payment_method_types: ['card'], expand: ['charges.data.customer'] });
    expect(intent.charges.data).toHaveLength(1);
    expect(intent.charges.data[0]).toMatchObject({ object: 'charge', customer: null, invoice: null });
    const res = await get(key, `/v1/payment_intents/${intent.id}?expand[]=invoice&expand[]=charges.data.payment_intent`, at('2020-08-27'));
    expect(res.status).toBe(200);
    expect(res.body.invoice).toBeNull();
    expect(res.body.charges.data[0].payment_intent).toMatchObject({ object: 'payment_intent', id: intent.id, charges: { object: 'list' } });
    expectError(await get(key, `/v1/payment_intents/${intent.id}?expand[]=latest_charge`, at('2020-08-27')), 400, { message: 'This property cannot be expanded (latest_charge).' });
    expectError(await get(key, `/v1/payment_intents/${intent.id}?expand[]=charges.bogus`, at('2020-08-27')), 400, { message: 'This property cannot be expanded (bogus).' });
    // From 2022-11-15, `charges` is gone.
    expectError(await get(key, `/v1/payment_intents/${intent.id}?expand[]=charges.data.customer`, at('2022-11-15')), 400, { message: 'This property cannot be expanded (charges).' });
  });

  test('an invoice’s PaymentIntent and charge expand their `invoice` before basil (stripe-v14), not from it', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }] })).body;
    const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`, at('2024-04-10'))).body;
    const stripe = client('stripe-v14', key);
    const intent = await stripe.paymentIntents.retrieve(invoice.payment_intent, { expand: ['invoice.subscription'] });
    expect(intent.invoice).toMatchObject({ object: 'invoice', id: invoice.id, subscription: { object: 'subscription', id: sub.id } });
    const charge = await stripe.charges.retrieve(invoice.charge, { expand: ['invoice', 'payment_intent'] });
    expect(charge.invoice).toMatchObject({ object: 'invoice', id: invoice.id, paid: true });
    expect(charge.payment_intent).toMatchObject({ object: 'payment_intent', invoice: invoice.id });
    const newest = client('stripe', key);
    await expect(newest.charges.retrieve(invoice.charge, { expand: ['invoice'] })).rejects.toMatchObject({ statusCode: 400, message: 'This property cannot be expanded (invoice).' });
  });
});

describe('a customer’s subscriptions, sources, tax_ids and default_source', () => {
  test.each([
    ['stripe-v8', '2020-08-27'],
    ['stripe-v11', '2022-11-15'],
    ['stripe', undefined],
  ] as const)('%s: shown only when expanded: lists (empty where nothing exists), null default_source', async (pkg, apiVersion) => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const stripe = client(pkg, key, apiVersion);
    const plain = await stripe.customers.retrieve(customer);
    for (const field of ['subscriptions', 'sources', 'tax_ids']) expect(plain).not.toHaveProperty(field);
    expect(plain.default_source).toBeNull();
    const sub = await stripe.subscriptions.create({ customer, items: [{ price }] });
    const canceled = await stripe.subscriptions.create({ customer, items: [{ price }] });
    await stripe.subscriptions.del?.(canceled.id) ?? (await stripe.subscriptions.cancel(canceled.id));
    const expanded = await stripe.customers.retrieve(customer, { expand: ['subscriptions', 'sources', 'tax_ids', 'default_source', 'test_clock'] });
    expect(expanded.subscriptions).toMatchObject({ object: 'list', has_more: false, url: `/v1/customers/${customer}/subscriptions` });
    // Its current subscriptions: not the canceled one.
    expect(expanded.subscriptions.data.map((s: any) => s.id)).toEqual([sub.id]);
    expect(expanded.sources).toEqual({ object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/customers/${customer}/sources` });
    expect(expanded.tax_ids).toEqual({ object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/customers/${customer}/tax_ids` });
    expect(expanded).toMatchObject({ default_source: null, test_clock: null });
    // The subscriptions inside are rendered for the version (before basil, their period on the subscription).
    if (apiVersion !== undefined) expect(typeof expanded.subscriptions.data[0].current_period_end).toBe('number');
  });

  test('raw HTTP: deeper paths through the list (subscriptions.data.latest_invoice), on the list of customers, and the refused ones', async () => {
    const key = newTestKey();
    const { customer, price } = await subscriptionSetup(key);
    const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }] })).body;
    const res = await get(key, `/v1/customers/${customer}?expand[]=subscriptions.data.latest_invoice.payment_intent`, at('2024-04-10'));
    expect(res.status).toBe(200);
    expect(res.body.subscriptions.data[0]).toMatchObject({ id: sub.id, latest_invoice: { object: 'invoice', id: sub.latest_invoice, payment_intent: { object: 'payment_intent' } } });
    const list = await get(key, `/v1/customers?expand[]=data.subscriptions&expand[]=data.tax_ids`);
    expect(list.status).toBe(200);
    expect(list.body.data.find((c: any) => c.id === customer).subscriptions.data).toHaveLength(1);
    for (const [path, segment] of [
      ['subscriptions.data', 'data'],
      ['subscriptions.latest_invoice', 'latest_invoice'],
      ['sources.data.owner', 'owner'],
      ['default_source.customer', 'customer'],
      ['balance', 'balance'],
    ]) {
      expectError(await get(key, `/v1/customers/${customer}?expand[]=${path}`), 400, { param: 'expand', message: `This property cannot be expanded (${segment}).` });
    }
  });
});
