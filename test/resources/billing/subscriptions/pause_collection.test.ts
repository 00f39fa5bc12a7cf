import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { expectError, requestsOf } from '../../../helpers/requests';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';
import { addInterval } from '../../../../src/resources/billing/invoices/amounts';

// `pause_collection` on update: renewal invoices are made but not collected (`keep_as_draft`,
// `mark_uncollectible`, `void`) until it is cleared (`''`) or its `resumes_at` comes, on test
// clocks and on the real clock.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('subpause', { RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const START = Date.UTC(2027, 0, 15, 9) / 1000;
const RENEWAL = addInterval(START, 'month', 1);

async function active(key: string) {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body.id as string;
  const customer = (await post(key, '/v1/customers', { test_clock: clock, payment_method: 'pm_card_visa' })).body;
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body;
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  expect(sub.status).toBe('active');
  return { clock, customer, sub };
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
}

const invoicesOf = async (key: string, sub: string) => (await get(key, `/v1/invoices?subscription=${sub}&limit=100`)).body.data.reverse();

test.each([
  ['keep_as_draft', 'draft', null],
  ['mark_uncollectible', 'uncollectible', 'invoice.marked_uncollectible'],
  ['void', 'void', 'invoice.voided'],
] as const)('pause_collection[behavior]=%s: the renewal invoice is made but left %s, uncollected; the subscription stays active', async (behavior, status, eventType) => {
  const key = newTestKey();
  const { clock, sub } = await active(key);
  const res = await post(key, `/v1/subscriptions/${sub.id}`, { pause_collection: { behavior } });
  expect(res.status).toBe(200);
  expectMatchesResponseSchema('PostSubscriptionsSubscriptionExposedId', 200, res.body);
  expectMatchesSdkTypes(res.body);
  expect(res.body).toMatchObject({ status: 'active', pause_collection: { behavior, resumes_at: null } });
  expect((await eventsOf(key, 'customer.subscription.updated'))[0].data.previous_attributes).toEqual({ pause_collection: null });

  await advance(key, clock, RENEWAL + 60);
  const invoices = await invoicesOf(key, sub.id);
  expect(invoices).toHaveLength(2);
  expect(invoices[1]).toMatchObject({ billing_reason: 'subscription_cycle', status, amount_due: 1000, amount_paid: 0, attempt_count: 0 });
  expect(invoices[1].auto_advance).toBe(false);
  const invoice = await get(key, `/v1/invoices/${invoices[1].id}`);
  expectMatchesResponseSchema('GetInvoicesInvoice', 200, invoice.body);
  expectMatchesSdkTypes(invoice.body);
  if (status === 'draft') {
    expect(invoices[1]).toMatchObject({ number: null, status_transitions: { finalized_at: null } });
    // An item added to the kept draft joins its period's line: 1000 + 250, both kept at finalization.
    expect((await post(key, '/v1/invoiceitems', { customer: invoices[1].customer, invoice: invoices[1].id, amount: 250, currency: 'usd' })).status).toBe(200);
    const draft = (await get(key, `/v1/invoices/${invoices[1].id}`)).body;
    expect(draft).toMatchObject({ status: 'draft', amount_due: 1250 });
    expect(draft.lines.data.map((l: any) => l.amount).sort()).toEqual([1000, 250].sort());
    expect(draft.lines.data.find((l: any) => l.amount === 1000).parent?.subscription_item_details?.subscription ?? draft.lines.data.find((l: any) => l.amount === 1000).subscription).toBe(sub.id);
  } else expect(invoices[1].status_transitions.finalized_at).toBe(RENEWAL);
  if (status === 'void') expect(invoices[1]).toMatchObject({ amount_remaining: 0, status_transitions: { voided_at: RENEWAL } });
  if (eventType) {
    const events = await eventsOf(key, eventType);
    expect(events).toHaveLength(1);
    expect(events[0].data.object).toMatchObject({ id: invoices[1].id, status });
    expectMatchesSdkTypes(events[0], eventType);
  }
  expect(await eventsOf(key, 'invoice.paid')).toHaveLength(1);
  const after = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(after).toMatchObject({ status: 'active', latest_invoice: invoices[1].id, pause_collection: { behavior } });
  expect(after.items.data[0]).toMatchObject({ current_period_start: RENEWAL, current_period_end: addInterval(START, 'month', 2) });

  // `''` clears it (with the SDK): the next renewal is charged.
  const cleared = await e.t.stripe(key).subscriptions.update(sub.id, { pause_collection: '' });
  expect(cleared.pause_collection).toBeNull();
  await advance(key, clock, addInterval(START, 'month', 2) + 60);
  expect((await invoicesOf(key, sub.id))[2]).toMatchObject({ status: 'paid', amount_paid: 1000 });
});

test('pause_collection[resumes_at]: cleared when its time comes on the clock (customer.subscription.updated); renewals after it are charged', async () => {
  const key = newTestKey();
  const { clock, sub } = await active(key);
  const resumesAt = RENEWAL + 10 * 86400;
  const paused = await e.t.stripe(key).subscriptions.update(sub.id, { pause_collection: { behavior: 'void', resumes_at: resumesAt } });
  expect(paused.pause_collection).toEqual({ behavior: 'void', resumes_at: resumesAt });
  await advance(key, clock, RENEWAL + 60);
  expect((await invoicesOf(key, sub.id))[1].status).toBe('void');
  await advance(key, clock, resumesAt - 60);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.pause_collection).toEqual({ behavior: 'void', resumes_at: resumesAt });
  await advance(key, clock, resumesAt + 60);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.pause_collection).toBeNull();
  const event = (await eventsOf(key, 'customer.subscription.updated'))[0];
  expect(event.data.object.pause_collection).toBeNull();
  expect(event.data.previous_attributes).toEqual({ pause_collection: { behavior: 'void', resumes_at: resumesAt } });
  await advance(key, clock, addInterval(START, 'month', 2) + 60);
  expect((await invoicesOf(key, sub.id)).map((i: any) => i.status)).toEqual(['paid', 'void', 'paid']);

  // A resumes_at that is not ahead of the clock, and a behavior that is not one.
  expectError(await post(key, `/v1/subscriptions/${sub.id}`, { pause_collection: { behavior: 'void', resumes_at: START } }), 400, { param: 'pause_collection[resumes_at]' });
  expectError(await post(key, `/v1/subscriptions/${sub.id}`, { pause_collection: { behavior: 'later' } }), 400, { type: 'invalid_request_error' });
  expectError(await post(key, `/v1/subscriptions/${sub.id}`, { pause_collection: { resumes_at: addInterval(START, 'month', 3) } }), 400, { type: 'invalid_request_error' });
});

test('pause_collection[resumes_at] on the real clock: the worker clears it when it comes', async () => {
  const key = newTestKey();
  const customer = (await post(key, '/v1/customers', { payment_method: 'pm_card_visa' })).body;
  const pm = (await get(key, `/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await post(key, `/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: pm } });
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body;
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  const resumesAt = Math.floor(Date.now() / 1000) + 2;
  const res = await post(key, `/v1/subscriptions/${sub.id}`, { pause_collection: { behavior: 'keep_as_draft', resumes_at: resumesAt } });
  expect(res.body.pause_collection).toEqual({ behavior: 'keep_as_draft', resumes_at: resumesAt });
  await until(async () => (await get(key, `/v1/subscriptions/${sub.id}`)).body.pause_collection === null, 20000, 'pause_collection cleared');
  expect((await eventsOf(key, 'customer.subscription.updated'))[0].data.previous_attributes).toEqual({ pause_collection: { behavior: 'keep_as_draft', resumes_at: resumesAt } });
});
