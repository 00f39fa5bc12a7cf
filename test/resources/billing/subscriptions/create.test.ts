import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createPrice, createTaxRate } from '../../../helpers/fixtures';
import { payingCustomer, recurringPrice } from '../../../helpers/billing';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// Creating subscriptions: the first invoice made, finalized and charged at once; the status the
// test card decides; trials; send_invoice; the validation the public API does; events.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, eventsOf } = requestsOf(() => t);
const SUB = '/v1/subscriptions';

describe('create', () => {
  test("the first invoice takes the customer's pending items of its currency that no subscription owns: 1500 + 400 − 100 = 1800", async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1500);
    const other = (await post(key, SUB, { customer: customer.id, items: [{ price: (await recurringPrice(t, key, 700, 'Silver')).id }] })).body;
    const item = async (params: Record<string, unknown>) => (await post(key, '/v1/invoiceitems', { customer: customer.id, currency: 'usd', ...params })).body;
    const fee = await item({ amount: 400, description: 'Setup' });
    const credit = await item({ amount: -100, description: 'Welcome credit' });
    const eur = await item({ amount: 900, currency: 'eur' });
    const owned = await item({ amount: 300, subscription: other.id });
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] });
    expect(res.status).toBe(200);
    const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
    // Gold 1500, then the two usd items in the order they were made: 1500 + 400 − 100 = 1800, charged.
    expect(invoice.lines.data.map((l: any) => [l.amount, l.description])).toEqual([
      [1500, '1 × Gold (at $15.00 / month)'],
      [400, 'Setup'],
      [-100, 'Welcome credit'],
    ]);
    expect(invoice).toMatchObject({ total: 1800, amount_paid: 1800, status: 'paid' });
    for (const taken of [fee, credit]) expect((await get(key, `/v1/invoiceitems/${taken.id}`)).body.invoice).toBe(invoice.id);
    // Another currency's and another subscription's stay pending.
    for (const left of [eur, owned]) expect((await get(key, `/v1/invoiceitems/${left.id}`)).body.invoice).toBeNull();
  });

  test('with a succeeding card: active, its first invoice paid, periods on the items, events in order', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1500);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id, quantity: 2 }], metadata: { plan: 'gold' } });
    expect(res.status).toBe(200);
    const sub = res.body;
    expectMatchesResponseSchema('PostSubscriptions', 200, sub);
    expectMatchesSdkTypes(sub);
    expect(sub).toMatchObject({ object: 'subscription', status: 'active', customer: customer.id, currency: 'usd', metadata: { plan: 'gold' }, billing_mode: { type: 'flexible' } });
    const [item] = sub.items.data;
    expect(item).toMatchObject({ object: 'subscription_item', quantity: 2, price: { id: price.id }, plan: { id: price.id, object: 'plan', amount: 1500 } });
    expect(item.current_period_end - item.current_period_start).toBeGreaterThanOrEqual(28 * 86400);
    const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
    expectMatchesResponseSchema('GetInvoicesInvoice', 200, invoice);
    expectMatchesSdkTypes(invoice);
    expect(invoice).toMatchObject({ status: 'paid', billing_reason: 'subscription_create', amount_due: 3000, amount_paid: 3000, amount_remaining: 0, total: 3000, subtotal: 3000 });
    expect(invoice.lines.data).toEqual([expect.objectContaining({ amount: 3000, quantity: 2, description: '2 × Gold (at $15.00 / month)' })]);
    const types = (await get(key, '/v1/events?limit=20')).body.data.map((e: any) => e.type).reverse();
    expect(types.slice(types.indexOf('customer.subscription.created'))).toEqual([
      'customer.subscription.created',
      'invoice.created',
      'invoice.finalized',
      // The invoice is paid through a PaymentIntent, which records the charge.
      'payment_intent.created',
      'charge.succeeded',
      'payment_intent.succeeded',
      'invoice.paid',
      'invoice.payment_succeeded',
    ]);
  });

  test('with a declining card: incomplete, the invoice open with the decline recorded', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key, 'pm_card_chargeCustomerFail');
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('incomplete');
    const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
    expect(invoice).toMatchObject({ status: 'open', attempt_count: 1, attempted: true, amount_paid: 0, amount_remaining: 1000 });
    expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(1);
  });

  test('a card that asks for authentication: incomplete, invoice.payment_action_required', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key, 'pm_card_authenticationRequired');
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }] });
    expect(res.body.status).toBe('incomplete');
    expect((await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body).toMatchObject({ status: 'open' });
    const [event] = await eventsOf(key, 'invoice.payment_action_required');
    expect(event.data.object.id).toBe(res.body.latest_invoice);
    // Every event of the account is what the SDK's types describe.
    for (const e of (await get(key, '/v1/events?limit=100')).body.data) expectMatchesSdkTypes(e, e.type);
  });

  test('error_if_incomplete with a declining card: 402 and nothing is made', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key, 'pm_card_chargeCustomerFail');
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], payment_behavior: 'error_if_incomplete' });
    expectError(res, 402, { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
    expect((await get(key, `${SUB}?status=all`)).body.data).toEqual([]);
    expect((await get(key, '/v1/invoices')).body.data).toEqual([]);
  });

  test('default_incomplete: incomplete, the invoice open and not attempted; paying it makes the subscription active', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], payment_behavior: 'default_incomplete' });
    expect(res.body.status).toBe('incomplete');
    const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
    expect(invoice).toMatchObject({ status: 'open', attempt_count: 0 });
    const paid = await post(key, `/v1/invoices/${invoice.id}/pay`, {});
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'paid', amount_paid: 1000 });
    expect((await get(key, `${SUB}/${res.body.id}`)).body.status).toBe('active');
  });

  test('a trial: trialing, a zero invoice paid at once', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], trial_period_days: 7 });
    expect(res.body).toMatchObject({ status: 'trialing' });
    expect(res.body.trial_end - res.body.trial_start).toBe(7 * 86400);
    const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
    expect(invoice).toMatchObject({ status: 'paid', amount_due: 0, total: 0 });
    expect(invoice.lines.data[0].description).toBe('Trial period for Gold');
  });

  test('send_invoice: active, the invoice open with a due date', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id }], collection_method: 'send_invoice', days_until_due: 30 });
    expect(res.body.status).toBe('active');
    const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
    expect(invoice.status).toBe('open');
    expect(invoice.due_date - invoice.created).toBe(30 * 86400);
  });

  test('an exclusive and an inclusive tax rate', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const vat = await createTaxRate(t, key, { percentage: 20, inclusive: false });
    const included = await createTaxRate(t, key, { percentage: 25, inclusive: true });
    const res = await post(key, SUB, { customer: customer.id, items: [{ price: price.id, tax_rates: [included.id] }], default_tax_rates: [vat.id] });
    const invoice = (await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body;
    // 1000 with 25 % included: 200 of it is tax (1000 × 25 / 125); the default rate does not apply.
    expect(invoice).toMatchObject({ subtotal: 1000, total: 1000, total_excluding_tax: 800, amount_due: 1000 });
    expect(invoice.total_taxes).toEqual([expect.objectContaining({ amount: 200, tax_behavior: 'inclusive', taxable_amount: 800 })]);
    const other = await recurringPrice(t, key, 1000, 'Silver');
    const plain = await post(key, SUB, { customer: customer.id, items: [{ price: other.id }], default_tax_rates: [vat.id] });
    const taxed = (await get(key, `/v1/invoices/${plain.body.latest_invoice}`)).body;
    expect(taxed).toMatchObject({ subtotal: 1000, total: 1200, total_excluding_tax: 1000, amount_due: 1200 });
  });
});

describe('validation', () => {
  test('the public API refusals', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const oneTime = await createPrice(t, key);
    expectError(await post(key, SUB, { customer: customer.id, items: [{ price: oneTime.id }] }), 400, {
      message: 'The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.',
      param: 'items[0][price]',
    });
    expectError(await post(key, SUB, { customer: customer.id, items: [{ price: price.id }, { price: price.id }] }), 400, { param: 'items' });
    const euro = await recurringPrice(t, key, 1000, 'Euro', { currency: 'eur' });
    expectError(await post(key, SUB, { customer: customer.id, items: [{ price: price.id }, { price: euro.id }] }), 400, { param: 'items' });
    expectError(await post(key, SUB, { items: [{ price: price.id }] }), 400, { code: 'parameter_missing', param: 'customer' });
    expectError(await post(key, SUB, { customer: 'cus_nope', items: [{ price: price.id }] }), 400, { code: 'resource_missing', param: 'customer' });
    expectError(
      await post(key, SUB, { customer: customer.id, items: [{ price_data: { currency: 'usd', product: price.product, recurring: { interval: 'month' }, unit_amount: 5, unit_amount_decimal: '5' } }] }),
      400,
      { code: 'parameters_exclusive' },
    );
  });

  test('price_data makes an inline price', async () => {
    const key = newTestKey();
    const customer = await payingCustomer(t, key);
    const price = await recurringPrice(t, key, 1000);
    const res = await post(key, SUB, { customer: customer.id, items: [{ price_data: { currency: 'usd', product: price.product, recurring: { interval: 'month' }, unit_amount_decimal: '12.5' }, quantity: 3 }] });
    expect(res.status).toBe(200);
    expect(res.body.items.data[0].price).toMatchObject({ unit_amount_decimal: '12.5', product: price.product, type: 'recurring' });
    // 12.5 × 3 = 37.5, rounded half away from zero.
    expect((await get(key, `/v1/invoices/${res.body.latest_invoice}`)).body.amount_due).toBe(38);
  });
});
