import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createCustomer } from '../../../helpers/fixtures';
import { payingCustomer } from '../../../helpers/billing';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// Drafts paid or sent directly: the public API finalizes them first, as the Stripe CLI's
// invoice.paid, invoice.payment_failed, invoice.payment_action_required and invoice.sent
// fixtures rely on (customer with a card, an invoice item, a draft, then pay or send).

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);
const IN = '/v1/invoices';

/** The account's invoice events, oldest first. */
async function invoiceEvents(key: string): Promise<{ type: string; id: string; status: string }[]> {
  const events = (await get(key, '/v1/events?limit=100')).body.data as any[];
  return events
    .filter((e) => e.type.startsWith('invoice.'))
    .reverse()
    .map((e) => ({ type: e.type, id: e.data.object.id, status: e.data.object.status }));
}

/** What the CLI's fixtures do: a customer paying with `card`, an item of 2000 on a new draft. */
async function fixtureDraft(key: string, card: string, params: Record<string, unknown> = {}) {
  const { id: customer } = await payingCustomer(t, key, card);
  const draft = (await post(key, IN, { customer, ...params })).body;
  expect(draft.status).toBe('draft');
  const item = await post(key, '/v1/invoiceitems', { customer, amount: 2000, currency: 'usd', invoice: draft.id });
  expect(item.status).toBe(200);
  return { customer, draft };
}

describe('POST /v1/invoices/{id}/pay on a draft', () => {
  test('finalized, then paid: invoice.finalized, invoice.paid, invoice.payment_succeeded in order', async () => {
    const key = newTestKey();
    const { draft } = await fixtureDraft(key, 'pm_card_visa');
    const res = await post(key, `${IN}/${draft.id}/pay`, {});
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesInvoicePay', 200, res.body);
    expectMatchesSdkTypes(res.body);
    expect(res.body).toMatchObject({ id: draft.id, status: 'paid', amount_due: 2000, amount_paid: 2000, amount_remaining: 0, attempt_count: 1 });
    expect(res.body.number).toMatch(/^[A-Z0-9]{8}-0001$/);
    expect(res.body.status_transitions.finalized_at).toEqual(expect.any(Number));
    expect(res.body.hosted_invoice_url).toEqual(expect.any(String));
    expect((await invoiceEvents(key)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_succeeded']);
    const finalized = (await invoiceEvents(key)).find((e) => e.type === 'invoice.finalized')!;
    expect(finalized.status).toBe('open');
    expect((await get(key, `${IN}/${draft.id}`)).body).toEqual(res.body);
  });

  test('a declining card: finalized, then the decline (402, invoice.payment_failed), the invoice open', async () => {
    const key = newTestKey();
    const { draft } = await fixtureDraft(key, 'pm_card_chargeCustomerFail');
    const res = await post(key, `${IN}/${draft.id}/pay`, {});
    expectError(res, 402, { type: 'card_error', code: 'card_declined' });
    expect((await invoiceEvents(key)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.payment_failed']);
    expect((await get(key, `${IN}/${draft.id}`)).body).toMatchObject({ status: 'open', attempt_count: 1, amount_paid: 0 });
  });

  test('a card asking for 3-D Secure: finalized, then invoice.payment_action_required, the intent waiting', async () => {
    const key = newTestKey();
    const { draft } = await fixtureDraft(key, 'pm_card_authenticationRequired');
    const res = await post(key, `${IN}/${draft.id}/pay`, {});
    expectError(res, 402, { type: 'card_error', code: 'authentication_required' });
    expect((await invoiceEvents(key)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.payment_action_required']);
    const invoice = (await get(key, `${IN}/${draft.id}`, { 'Stripe-Version': '2024-06-20' })).body;
    expect(invoice.status).toBe('open');
    expect((await get(key, `/v1/payment_intents/${invoice.payment_intent}`)).body.status).toBe('requires_action');
  });

  test('a draft with no lines: finalized and paid by its finalization (amount 0), as the public API answers', async () => {
    const key = newTestKey();
    const { id: customer } = await payingCustomer(t, key);
    const draft = (await post(key, IN, { customer })).body;
    const res = await post(key, `${IN}/${draft.id}/pay`, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 0, attempt_count: 0 });
    expect((await invoiceEvents(key)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_succeeded']);
    expectError(await post(key, `${IN}/${draft.id}/pay`, {}), 400, { code: 'invoice_already_paid' });
  });

  test('a customer without a payment method: finalized, then the public 400; the invoice stays open', async () => {
    const key = newTestKey();
    const customer = (await createCustomer(t, key)).id;
    const draft = (await post(key, IN, { customer })).body;
    await post(key, '/v1/invoiceitems', { customer, amount: 500, currency: 'usd', invoice: draft.id });
    expectError(await post(key, `${IN}/${draft.id}/pay`, {}), 400, { code: 'invoice_no_payment_method_types' });
    expect((await get(key, `${IN}/${draft.id}`)).body).toMatchObject({ status: 'open', number: expect.any(String) });
  });

  test('another key never sees the draft; unknown invoices and payment methods are refused, the draft left as it was', async () => {
    const key = newTestKey();
    const { draft } = await fixtureDraft(key, 'pm_card_visa');
    expectError(await post(newTestKey(), `${IN}/${draft.id}/pay`, {}), 404, { code: 'resource_missing' });
    expectError(await post(newTestKey(), `${IN}/${draft.id}/send`, {}), 404, { code: 'resource_missing' });
    expect((await get(key, `${IN}/${draft.id}`)).body.status).toBe('draft');
    expectError(await post(key, `${IN}/in_nope/pay`, {}), 404, { code: 'resource_missing' });
    expectError(await post(key, `${IN}/${draft.id}/pay`, { payment_method: 'pm_nope' }), 400, {});
    expect((await get(key, `${IN}/${draft.id}`)).body.status).toBe('draft');
  });

  test('the SDK pays a draft', async () => {
    const key = newTestKey();
    const { draft } = await fixtureDraft(key, 'pm_card_visa');
    const paid = await t.stripe(key).invoices.pay(draft.id);
    expectMatchesSdkTypes(paid);
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 2000 });
  });
});

describe('POST /v1/invoices/{id}/send on a draft', () => {
  test('finalized, then sent: invoice.finalized, invoice.sent; the invoice open (raw HTTP and the SDK)', async () => {
    const key = newTestKey();
    const { draft } = await fixtureDraft(key, 'pm_card_visa', { collection_method: 'send_invoice', days_until_due: 30 });
    const res = await post(key, `${IN}/${draft.id}/send`, {});
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostInvoicesInvoiceSend', 200, res.body);
    expect(res.body).toMatchObject({ status: 'open', amount_due: 2000, number: expect.any(String) });
    expect((await invoiceEvents(key)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.finalized', 'invoice.sent']);
    const { draft: other } = await fixtureDraft(key, 'pm_card_visa', { collection_method: 'send_invoice', days_until_due: 30 });
    const sent = await t.stripe(key).invoices.sendInvoice(other.id);
    expectMatchesSdkTypes(sent);
    expect(sent.status).toBe('open');
  });

  test('a charge_automatically draft is refused before anything is finalized', async () => {
    const key = newTestKey();
    const { draft } = await fixtureDraft(key, 'pm_card_visa');
    expectError(await post(key, `${IN}/${draft.id}/send`, {}), 400, { code: 'invoice_not_editable' });
    expect((await get(key, `${IN}/${draft.id}`)).body.status).toBe('draft');
    expect((await invoiceEvents(key)).map((e) => e.type)).toEqual(['invoice.created']);
  });
});
