import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { requestsOf } from '../../../helpers/requests';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// A subscription's payment_settings are copied onto the invoices it makes (the first one and
// renewals on a test clock), as the public API shows them; a preview shows them too, and a
// subscription without any makes invoices with none.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('invpaysettings');
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const START = Date.UTC(2027, 2, 1, 9) / 1000;
const DAY = 86400;
const SETTINGS = { payment_method_types: ['card'], payment_method_options: { card: { request_three_d_secure: 'any' } } };
const NONE = { default_mandate: null, payment_method_options: null, payment_method_types: null };

async function onClock(key: string, subParams: Record<string, unknown>) {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body;
  const customer = (await post(key, '/v1/customers', { test_clock: clock.id, payment_method: 'pm_card_visa' })).body;
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 3100, recurring: { interval: 'month' } })).body;
  const res = await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }], expand: ['latest_invoice'], ...subParams });
  expect(res.status).toBe(200);
  return { clock: clock.id as string, customer, sub: res.body };
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
}

const invoicesOf = async (key: string, sub: string) => (await get(key, `/v1/invoices?subscription=${sub}&limit=100`)).body.data.reverse();

test('the first invoice and a renewal show the subscription payment_settings; so do their events and a preview', async () => {
  const key = newTestKey();
  const { clock, customer, sub } = await onClock(key, { payment_settings: { ...SETTINGS, save_default_payment_method: 'on_subscription' } });
  const nulls = Object.fromEntries(['acss_debit', 'bancontact', 'customer_balance', 'konbini', 'payto', 'pix', 'sepa_debit', 'upi', 'us_bank_account'].map((m) => [m, null]));
  // As the public API shows them: every method's options, null where none were given.
  const shown = { default_mandate: null, payment_method_types: ['card'], payment_method_options: { ...nulls, card: { request_three_d_secure: 'any' } } };
  expect(sub.payment_settings).toEqual({ ...SETTINGS, save_default_payment_method: 'on_subscription' });
  expect(sub.latest_invoice.payment_settings).toEqual(shown);

  const first = await get(key, `/v1/invoices/${sub.latest_invoice.id}`);
  expectMatchesResponseSchema('GetInvoicesInvoice', 200, first.body);
  expectMatchesSdkTypes(first.body);
  expect(first.body).toMatchObject({ status: 'paid', billing_reason: 'subscription_create', payment_settings: shown });
  for (const type of ['invoice.created', 'invoice.finalized', 'invoice.paid']) {
    const [event] = await eventsOf(key, type);
    expect(event.data.object).toMatchObject({ id: first.body.id, payment_settings: shown });
  }

  const preview = await post(key, '/v1/invoices/create_preview', { customer: customer.id, subscription: sub.id });
  expect(preview.status).toBe(200);
  expect(preview.body.payment_settings).toEqual(shown);

  await advance(key, clock, START + 31 * DAY + 60);
  const invoices = await invoicesOf(key, sub.id);
  expect(invoices.map((i: any) => [i.billing_reason, i.status])).toEqual([
    ['subscription_create', 'paid'],
    ['subscription_cycle', 'paid'],
  ]);
  expect(invoices[1].payment_settings).toEqual(shown);
  expectMatchesResponseSchema('GetInvoices', 200, (await get(key, `/v1/invoices?subscription=${sub.id}`)).body);
});

test('a subscription without payment_settings makes invoices with none', async () => {
  const key = newTestKey();
  const { clock, sub } = await onClock(key, {});
  expect(sub.latest_invoice.payment_settings).toEqual(NONE);
  await advance(key, clock, START + 31 * DAY + 60);
  const invoices = await invoicesOf(key, sub.id);
  expect(invoices).toHaveLength(2);
  for (const invoice of invoices) expect(invoice.payment_settings).toEqual(NONE);
});
