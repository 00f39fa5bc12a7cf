import { LATEST_API_VERSION } from '../../../../src/kernel/versions';
import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCoupon, createCustomer, createTaxRate } from '../../../helpers/fixtures';
import { payingCustomer, recurringPrice } from '../../../helpers/billing';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// Manual invoices: a draft made, changed (its totals worked out again by hand below), deleted,
// finalized (numbered per customer), voided, marked uncollectible, sent and paid.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get, del, eventsOf } = requestsOf(() => t);
const IN = '/v1/invoices';
const II = '/v1/invoiceitems';

const prefixOf = (customer: string) => customer.slice(4, 12).toUpperCase();

async function setup(paying = false) {
  const key = newTestKey();
  const customer = paying ? (await payingCustomer(t, key)).id : ((await createCustomer(t, key)).id as string);
  return { key, customer };
}

const item = async (key: string, params: Record<string, unknown>) => {
  const res = await post(key, II, params);
  expect(res.status).toBe(200);
  return res.body;
};

describe('POST /v1/invoices', () => {
  test('a draft that excludes pending items (the default): nothing on it, invoice.created', async () => {
    const { key, customer } = await setup();
    const pending = await item(key, { customer, amount: 1000, currency: 'usd' });
    const res = await post(key, IN, { customer, description: 'Consulting', footer: 'Thanks', metadata: { po: '9' } });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoices', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body).toMatchObject({
      object: 'invoice',
      status: 'draft',
      billing_reason: 'manual',
      customer,
      currency: 'usd',
      auto_advance: false,
      automatically_finalizes_at: null,
      collection_method: 'charge_automatically',
      description: 'Consulting',
      footer: 'Thanks',
      metadata: { po: '9' },
      number: null,
      amount_due: 0,
      total: 0,
      lines: { data: [], total_count: 0 },
      parent: null,
    });
    expect((await get(key, `${II}/${pending.id}`)).body.invoice).toBeNull();
    const [event] = await eventsOf(key, 'invoice.created');
    expect(event.data.object).toEqual(res.body);
    expect((await get(key, `${IN}/${res.body.id}`)).body).toEqual(res.body);
  });

  test('include takes the pending items in its currency that no subscription owns: 1000 + 20 % tax, 2 × 250 → 1700', async () => {
    const { key, customer } = await setup(true);
    const rate = await createTaxRate(t, key, { percentage: 20, inclusive: false });
    // The subscription first: its first invoice takes the customer's pending items of its currency.
    const price = await recurringPrice(t, key, 1000);
    const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price: price.id }] })).body;
    const a = await item(key, { customer, amount: 1000, currency: 'usd', tax_rates: [rate.id], description: 'A' });
    const b = await item(key, { customer, unit_amount_decimal: '250', quantity: 2, currency: 'usd', description: 'B' });
    const eur = await item(key, { customer, amount: 900, currency: 'eur' });
    const subs = await item(key, { customer, amount: 300, currency: 'usd', subscription: sub.id });
    const res = await post(key, IN, { customer, pending_invoice_items_behavior: 'include' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ subtotal: 1500, total_excluding_tax: 1500, total: 1700, amount_due: 1700, amount_remaining: 1700 });
    expect(res.body.total_taxes).toEqual([expect.objectContaining({ amount: 200, taxable_amount: 1000, tax_rate_details: { tax_rate: rate.id } })]);
    expect(res.body.lines.data.map((l: any) => [l.description, l.amount, l.parent.invoice_item_details.invoice_item])).toEqual([
      ['A', 1000, a.id],
      ['B', 500, b.id],
    ]);
    expect((await get(key, `${II}/${a.id}`)).body.invoice).toBe(res.body.id);
    expect((await get(key, `${II}/${eur.id}`)).body.invoice).toBeNull();
    expect((await get(key, `${II}/${subs.id}`)).body.invoice).toBeNull();
  });

  test('a coupon: 25 % off 1000 and 500 (250 + 125), tax on what is left (20 % of 750) → 1275', async () => {
    const { key, customer } = await setup();
    const rate = await createTaxRate(t, key, { percentage: 20, inclusive: false });
    await item(key, { customer, amount: 1000, currency: 'usd', tax_rates: [rate.id] });
    await item(key, { customer, amount: 500, currency: 'usd' });
    const coupon = await createCoupon(t, key, { percent_off: 25, duration: 'once' });
    const res = await post(key, IN, { customer, pending_invoice_items_behavior: 'include', discounts: [{ coupon: coupon.id }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ subtotal: 1500, total: 1275, amount_due: 1275 });
    expect(res.body.discounts).toHaveLength(1);
    expect(res.body.total_discount_amounts).toEqual([{ amount: 375, discount: res.body.discounts[0] }]);
    expect(res.body.total_taxes[0]).toMatchObject({ amount: 150, taxable_amount: 750 });
    // Discounts go with `discounts=`: 1000 + 200 + 500.
    const cleared = await post(key, `${IN}/${res.body.id}`, { discounts: '' });
    expect(cleared.body).toMatchObject({ discounts: [], total: 1700 });
  });

  test('send_invoice: due in days_until_due (30 by default) or on due_date; charge_automatically takes neither', async () => {
    const { key, customer } = await setup();
    const res = await post(key, IN, { customer, collection_method: 'send_invoice', days_until_due: 10 });
    expect(res.body).toMatchObject({ collection_method: 'send_invoice', due_date: res.body.created + 10 * 86400 });
    const byDefault = await post(key, IN, { customer, collection_method: 'send_invoice' });
    expect(byDefault.body.due_date).toBe(byDefault.body.created + 30 * 86400);
    const due = Math.floor(Date.now() / 1000) + 5 * 86400;
    expect((await post(key, IN, { customer, collection_method: 'send_invoice', due_date: due })).body.due_date).toBe(due);
    expectError(await post(key, IN, { customer, days_until_due: 10 }), 400, { param: 'days_until_due' });
    expectError(await post(key, IN, { customer, collection_method: 'send_invoice', days_until_due: 1, due_date: due }), 400, { param: 'days_until_due' });
    expectError(await post(key, IN, { customer, collection_method: 'send_invoice', due_date: 1000 }), 400, { param: 'due_date' });
  });

  test('errors: no customer, unknown customer, another key', async () => {
    const { key, customer } = await setup();
    expectError(await post(key, IN, {}), 400, { code: 'parameter_missing', param: 'customer' });
    expectError(await post(key, IN, { customer: 'cus_nope' }), 400, { code: 'resource_missing', param: 'customer' });
    const other = newTestKey();
    expectError(await post(other, IN, { customer }), 400, { code: 'resource_missing', param: 'customer' });
    const draft = (await post(key, IN, { customer })).body;
    expectError(await get(other, `${IN}/${draft.id}`), 404, { code: 'resource_missing' });
    for (const path of ['', '/finalize', '/void', '/mark_uncollectible', '/send']) expectError(await post(other, `${IN}/${draft.id}${path}`, {}), 404, { code: 'resource_missing' });
    expectError(await del(other, `${IN}/${draft.id}`), 404, { code: 'resource_missing' });
    expectError(await post(other, II, { customer, amount: 1, currency: 'usd', invoice: draft.id }), 400, { code: 'resource_missing' });
    expect((await get(other, IN)).body.data).toEqual([]);
  });
});

describe('a draft follows its items', () => {
  test('an item added with `invoice`, changed and deleted: 400 → 400 + 3 × 150 = 850 → 400', async () => {
    const { key, customer } = await setup();
    const draft = (await post(key, IN, { customer })).body;
    const first = await item(key, { customer, amount: 400, currency: 'usd', invoice: draft.id });
    expect(first.invoice).toBe(draft.id);
    expect((await get(key, `${IN}/${draft.id}`)).body).toMatchObject({ subtotal: 400, amount_due: 400 });
    const second = await item(key, { customer, unit_amount_decimal: '150', currency: 'usd', invoice: draft.id });
    await post(key, `${II}/${second.id}`, { quantity: 3 });
    const now = (await get(key, `${IN}/${draft.id}`)).body;
    expect(now).toMatchObject({ subtotal: 850, total: 850, amount_due: 850 });
    expect(now.lines.data.map((l: any) => l.amount)).toEqual([400, 450]);
    await del(key, `${II}/${second.id}`);
    expect((await get(key, `${IN}/${draft.id}`)).body).toMatchObject({ subtotal: 400, amount_due: 400, lines: { total_count: 1 } });
    expect((await get(key, `${IN}/${draft.id}/lines`)).body.data.map((l: any) => l.amount)).toEqual([400]);
  });

  test('an item for another customer, another currency or a finalized invoice is refused', async () => {
    const { key, customer } = await setup();
    const draft = (await post(key, IN, { customer })).body;
    const stranger = (await createCustomer(t, key)).id;
    expectError(await post(key, II, { customer: stranger, amount: 1, currency: 'usd', invoice: draft.id }), 400, { param: 'invoice' });
    expectError(await post(key, II, { customer, amount: 1, currency: 'eur', invoice: draft.id }), 400, { param: 'currency' });
    await post(key, `${IN}/${draft.id}/finalize`, {});
    expectError(await post(key, II, { customer, amount: 1, currency: 'usd', invoice: draft.id }), 400, { code: 'invoice_already_finalized', param: 'invoice' });
  });
});

describe('POST /v1/invoices/{id}', () => {
  test('a draft changes, with invoice.updated and its previous attributes', async () => {
    const { key, customer } = await setup();
    const draft = (await post(key, IN, { customer, description: 'Old' })).body;
    const res = await post(key, `${IN}/${draft.id}`, { description: 'New', footer: 'F', metadata: { a: '1' }, collection_method: 'send_invoice', days_until_due: 7 });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesInvoice', 200, res.body);
    expect(res.body).toMatchObject({ description: 'New', footer: 'F', metadata: { a: '1' }, collection_method: 'send_invoice', due_date: draft.created + 7 * 86400 });
    const [event] = await eventsOf(key, 'invoice.updated');
    expect(event.data.object).toEqual(res.body);
    expect(event.data.previous_attributes).toMatchObject({ description: 'Old', footer: null, metadata: {}, collection_method: 'charge_automatically', due_date: null });
    // Nothing changed: no event.
    await post(key, `${IN}/${draft.id}`, { description: 'New' });
    expect(await eventsOf(key, 'invoice.updated')).toHaveLength(1);
  });

  test('once finalized: metadata, description and footer change; the terms do not', async () => {
    const { key, customer } = await setup();
    await item(key, { customer, amount: 100, currency: 'usd' });
    const draft = (await post(key, IN, { customer, pending_invoice_items_behavior: 'include' })).body;
    await post(key, `${IN}/${draft.id}/finalize`, {});
    const res = await post(key, `${IN}/${draft.id}`, { metadata: { b: '2' }, description: 'Later' });
    expect(res.body).toMatchObject({ status: 'open', metadata: { b: '2' }, description: 'Later' });
    expectError(await post(key, `${IN}/${draft.id}`, { collection_method: 'send_invoice' }), 400, { code: 'invoice_already_finalized', param: 'collection_method' });
    expectError(await post(key, `${IN}/${draft.id}`, { discounts: '' }), 400, { code: 'invoice_already_finalized', param: 'discounts' });
  });
});

describe('DELETE /v1/invoices/{id}', () => {
  test('a draft goes (invoice.deleted) and its items are pending again; a finalized one stays', async () => {
    const { key, customer } = await setup();
    const pending = await item(key, { customer, amount: 100, currency: 'usd' });
    const draft = (await post(key, IN, { customer, pending_invoice_items_behavior: 'include' })).body;
    const res = await del(key, `${IN}/${draft.id}`);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('DeleteInvoicesInvoice', 200, res.body);
    expect(res.body).toEqual({ id: draft.id, object: 'invoice', deleted: true });
    expectError(await get(key, `${IN}/${draft.id}`), 404, { code: 'resource_missing' });
    expect((await get(key, `${II}/${pending.id}`)).body.invoice).toBeNull();
    expect((await eventsOf(key, 'invoice.deleted'))[0].data.object).toMatchObject({ id: draft.id, status: 'draft' });
    const open = (await post(key, IN, { customer })).body;
    await post(key, `${IN}/${open.id}/finalize`, {});
    expectError(await del(key, `${IN}/${open.id}`), 400, { code: 'invoice_not_editable' });
  });
});

describe('POST /v1/invoices/{id}/finalize', () => {
  test('numbered per customer with its invoice prefix, open, invoice.finalized; its items are fixed', async () => {
    const { key, customer } = await setup();
    const pending = await item(key, { customer, amount: 1200, currency: 'usd' });
    const draft = (await post(key, IN, { customer, pending_invoice_items_behavior: 'include' })).body;
    const res = await post(key, `${IN}/${draft.id}/finalize`, {});
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesInvoiceFinalize', 200, res.body);
    const prefix = (await get(key, `/v1/customers/${customer}`)).body.invoice_prefix;
    expect(prefix).toBe(prefixOf(customer));
    expect(res.body).toMatchObject({ status: 'open', number: `${prefix}-0001`, amount_due: 1200, amount_remaining: 1200, ending_balance: 0 });
    expect(res.body.status_transitions.finalized_at).toBe(res.body.effective_at);
    expect((await eventsOf(key, 'invoice.finalized'))[0].data.object).toEqual(res.body);
    expectError(await post(key, `${IN}/${draft.id}/finalize`, {}), 400, { code: 'invoice_already_finalized' });
    expectError(await post(key, `${II}/${pending.id}`, { amount: 5 }), 400, { code: 'invoice_already_finalized' });
    expectError(await del(key, `${II}/${pending.id}`), 400, { code: 'invoice_already_finalized' });
    const next = (await post(key, IN, { customer })).body;
    expect((await post(key, `${IN}/${next.id}/finalize`, {})).body.number).toBe(`${prefix}-0002`);
  });

  test('an invoice of nothing is paid at once; a charge_automatically one is paid through pay', async () => {
    const { key, customer } = await setup(true);
    const empty = (await post(key, IN, { customer })).body;
    const paid = await post(key, `${IN}/${empty.id}/finalize`, {});
    expect(paid.body).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 0 });
    expect((await eventsOf(key, 'invoice.paid'))[0].data.object.id).toBe(empty.id);
    await item(key, { customer, amount: 2500, currency: 'usd' });
    const draft = (await post(key, IN, { customer, pending_invoice_items_behavior: 'include' })).body;
    await post(key, `${IN}/${draft.id}/finalize`, {});
    const res = await post(key, `${IN}/${draft.id}/pay`, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'paid', amount_paid: 2500, amount_remaining: 0 });
  });
});

describe('void, mark_uncollectible and send', () => {
  test('void: an open invoice (invoice.voided); a draft or a void one cannot', async () => {
    const { key, customer } = await setup();
    await item(key, { customer, amount: 700, currency: 'usd' });
    const draft = (await post(key, IN, { customer, pending_invoice_items_behavior: 'include' })).body;
    expectError(await post(key, `${IN}/${draft.id}/void`, {}), 400, { code: 'invoice_not_editable' });
    await post(key, `${IN}/${draft.id}/finalize`, {});
    const res = await post(key, `${IN}/${draft.id}/void`, {});
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesInvoiceVoid', 200, res.body);
    expect(res.body).toMatchObject({ status: 'void', amount_due: 700, amount_remaining: 0 });
    expect(res.body.status_transitions.voided_at).toEqual(expect.any(Number));
    expect((await eventsOf(key, 'invoice.voided'))[0].data.object).toEqual(res.body);
    expectError(await post(key, `${IN}/${draft.id}/void`, {}), 400, { code: 'invoice_not_editable' });
    expectError(await post(key, `${IN}/${draft.id}/pay`, {}), 400, {});
  });

  test('mark_uncollectible: an open invoice only; it can be voided then', async () => {
    const { key, customer } = await setup();
    await item(key, { customer, amount: 700, currency: 'usd' });
    const draft = (await post(key, IN, { customer, pending_invoice_items_behavior: 'include' })).body;
    expectError(await post(key, `${IN}/${draft.id}/mark_uncollectible`, {}), 400, { code: 'invoice_not_editable' });
    await post(key, `${IN}/${draft.id}/finalize`, {});
    const res = await post(key, `${IN}/${draft.id}/mark_uncollectible`, {});
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesInvoiceMarkUncollectible', 200, res.body);
    expect(res.body).toMatchObject({ status: 'uncollectible', amount_remaining: 700 });
    expect(res.body.status_transitions.marked_uncollectible_at).toEqual(expect.any(Number));
    expect((await eventsOf(key, 'invoice.marked_uncollectible'))[0].data.object).toEqual(res.body);
    expectError(await post(key, `${IN}/${draft.id}/mark_uncollectible`, {}), 400, { code: 'invoice_not_editable' });
    expect((await post(key, `${IN}/${draft.id}/void`, {})).body.status).toBe('void');
  });

  test('send: a finalized send_invoice invoice stays open, with invoice.sent; others are refused', async () => {
    const { key, customer } = await setup();
    await item(key, { customer, amount: 700, currency: 'usd' });
    const draft = (await post(key, IN, { customer, pending_invoice_items_behavior: 'include', collection_method: 'send_invoice' })).body;
    await post(key, `${IN}/${draft.id}/finalize`, {});
    const res = await post(key, `${IN}/${draft.id}/send`, {});
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesInvoiceSend', 200, res.body);
    expect(res.body).toMatchObject({ status: 'open', id: draft.id });
    expect((await eventsOf(key, 'invoice.sent'))[0].data.object.id).toBe(draft.id);
    const automatic = (await post(key, IN, { customer })).body;
    await post(key, `${IN}/${automatic.id}/finalize`, {});
    expectError(await post(key, `${IN}/${automatic.id}/send`, {}), 400, { code: 'invoice_not_editable' });
  });
});

test('auto_advance: the draft shows when it finalizes itself (an hour after it was made)', async () => {
  const { key, customer } = await setup();
  await item(key, { customer, amount: 100, currency: 'usd' });
  const res = await post(key, IN, { customer, auto_advance: true, pending_invoice_items_behavior: 'include' });
  expect(res.body).toMatchObject({ auto_advance: true, automatically_finalizes_at: res.body.created + 3600 });
  const off = await post(key, `${IN}/${res.body.id}`, { auto_advance: false });
  expect(off.body).toMatchObject({ auto_advance: false, automatically_finalizes_at: null });
  const finalized = await post(key, `${IN}/${res.body.id}/finalize`, { auto_advance: true });
  expect(finalized.body).toMatchObject({ status: 'open', auto_advance: true, automatically_finalizes_at: null });
});

test('the SDK makes, changes, finalizes, sends, voids and deletes invoices', async () => {
  const { key, customer } = await setup();
  const stripe = t.stripe(key);
  await stripe.invoiceItems.create({ customer, amount: 900, currency: 'usd' });
  const draft = await stripe.invoices.create({ customer, pending_invoice_items_behavior: 'include', collection_method: 'send_invoice', days_until_due: 3 });
  expectMatchesSdkTypes(draft);
  expect(draft.amount_due).toBe(900);
  expect((await stripe.invoices.update(draft.id!, { footer: 'SDK' })).footer).toBe('SDK');
  const open = await stripe.invoices.finalizeInvoice(draft.id!);
  expect(open.status).toBe('open');
  expect((await stripe.invoices.sendInvoice(draft.id!)).status).toBe('open');
  expect((await stripe.invoices.markUncollectible(draft.id!)).status).toBe('uncollectible');
  expect((await stripe.invoices.voidInvoice(draft.id!)).status).toBe('void');
  const other = await stripe.invoices.create({ customer });
  expect(await stripe.invoices.del(other.id!)).toMatchObject({ id: other.id, deleted: true });
});

test('before 2022-08-01 an invoice takes the pending items unless told not to', async () => {
  const { key, customer } = await setup();
  await item(key, { customer, amount: 600, currency: 'usd' });
  const old = { 'Stripe-Version': '2020-08-27' };
  const excluded = await post(key, IN, { customer, pending_invoice_items_behavior: 'exclude' }, old);
  expect(excluded.body).toMatchObject({ amount_due: 0 });
  const byDefault = await post(key, IN, { customer }, old);
  expect(byDefault.status).toBe(200);
  expect(byDefault.body.amount_due).toBe(600);
  await item(key, { customer, amount: 50, currency: 'usd' });
  expect((await post(key, IN, { customer, pending_invoice_items_behavior: 'include_and_require' }, old)).body.amount_due).toBe(50);
  // Today's default leaves them.
  await item(key, { customer, amount: 70, currency: 'usd' });
  expect((await post(key, IN, { customer }, { 'Stripe-Version': LATEST_API_VERSION })).body.amount_due).toBe(0);
});
