import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { deleteQueueKeys } from '../../../helpers/isolation';
import { until } from '../../../helpers/queues';
import { requestsOf } from '../../../helpers/requests';
import { invoicesWorker } from '../../../../src/resources/billing/invoices/pipeline';

// invoice.overdue: an open send_invoice invoice gets one when its due_date passes, on a test clock
// as the clock's advance crosses it, on the real clock by its job (or the reconciler's); none for
// an invoice paid, voided or marked uncollectible first, and never two.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('overdue', { RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const START = Date.UTC(2027, 2, 1, 9) / 1000;
const DAY = 86400;

const overdueIds = async (key: string): Promise<string[]> => (await eventsOf(key, 'invoice.overdue')).map((ev: any) => ev.data.object.id).sort();

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
}

/** A finalized send_invoice invoice of `amount` for `customer`. */
async function openInvoice(key: string, customer: string, terms: Record<string, unknown>, amount = 1200): Promise<any> {
  const draft = (await post(key, '/v1/invoices', { customer, collection_method: 'send_invoice', ...terms })).body;
  expect(draft.id).toMatch(/^in_/);
  await post(key, '/v1/invoiceitems', { customer, amount, currency: 'usd', invoice: draft.id });
  const open = (await post(key, `/v1/invoices/${draft.id}/finalize`, {})).body;
  expect(open.status).toBe('open');
  return open;
}

test('on a test clock: one invoice.overdue at the due date as the advance crosses it; none for invoices paid, voided or uncollectible first', async () => {
  const key = newTestKey();
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body.id;
  const customer = (await post(key, '/v1/customers', { test_clock: clock, payment_method: 'pm_card_visa' })).body.id;
  const pm = (await get(key, `/v1/payment_methods?customer=${customer}`)).body.data[0].id;
  const due = await openInvoice(key, customer, { days_until_due: 2 });
  expect(due.due_date).toBe(START + 2 * DAY);
  const later = await openInvoice(key, customer, { days_until_due: 5 });
  const voided = await openInvoice(key, customer, { days_until_due: 1 });
  const uncollectible = await openInvoice(key, customer, { days_until_due: 1 });
  const paid = await openInvoice(key, customer, { days_until_due: 1 });
  expect((await post(key, `/v1/invoices/${voided.id}/void`, {})).body.status).toBe('void');
  expect((await post(key, `/v1/invoices/${uncollectible.id}/mark_uncollectible`, {})).body.status).toBe('uncollectible');
  expect((await post(key, `/v1/invoices/${paid.id}/pay`, { payment_method: pm })).body.status).toBe('paid');
  const charged = await openInvoice(key, customer, {});
  expect(charged.due_date).toBe(START + 30 * DAY);

  await advance(key, clock, START + 2 * DAY - 1);
  expect(await overdueIds(key)).toEqual([]);
  await advance(key, clock, START + 3 * DAY);
  expect(await overdueIds(key)).toEqual([due.id]);
  const [event] = await eventsOf(key, 'invoice.overdue');
  expect(event.data.object).toMatchObject({ id: due.id, status: 'open', due_date: START + 2 * DAY, amount_remaining: 1200 });
  expect(event.request).toEqual({ id: null, idempotency_key: null });
  // Still open, it is not sent again; the next one comes at its own due date.
  await advance(key, clock, START + 6 * DAY);
  expect(await overdueIds(key)).toEqual([due.id, later.id].sort());
  expect((await get(key, `/v1/invoices/${due.id}`)).body.status).toBe('open');
});

test('on a test clock: an invoice finalized by its auto-advance goes overdue in the same advance', async () => {
  const key = newTestKey();
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body.id;
  const customer = (await post(key, '/v1/customers', { test_clock: clock })).body.id;
  await post(key, '/v1/invoiceitems', { customer, amount: 700, currency: 'usd' });
  const draft = (await post(key, '/v1/invoices', { customer, collection_method: 'send_invoice', days_until_due: 1, auto_advance: true, pending_invoice_items_behavior: 'include' })).body;
  await advance(key, clock, START + 3 * DAY);
  expect((await get(key, `/v1/invoices/${draft.id}`)).body).toMatchObject({ status: 'open', due_date: START + 3600 + DAY });
  expect(await overdueIds(key)).toEqual([draft.id]);
  const types = (await get(key, '/v1/events?limit=100')).body.data.map((ev: any) => ev.type).reverse();
  expect(types.indexOf('invoice.finalized')).toBeLessThan(types.indexOf('invoice.overdue'));
});

test('on the real clock: the worker sends invoice.overdue once its due time has passed, not before', async () => {
  const key = newTestKey();
  const customer = (await post(key, '/v1/customers', {})).body.id;
  const now = Math.floor(Date.now() / 1000);
  const invoice = await openInvoice(key, customer, { due_date: now + 3 });
  const voided = await openInvoice(key, customer, { due_date: now + 3 });
  await post(key, `/v1/invoices/${voided.id}/void`, {});
  expect(await overdueIds(key)).toEqual([]);
  await until(async () => (await overdueIds(key)).length > 0, 30000, 'the overdue event');
  expect(Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(invoice.due_date);
  // A while later: still the one, none for the voided invoice.
  await new Promise((r) => setTimeout(r, 1500));
  expect(await overdueIds(key)).toEqual([invoice.id]);
});

test('on the real clock: a job Redis lost is re-added by the reconciler, and a job run twice sends one', async () => {
  const key = newTestKey();
  const customer = (await post(key, '/v1/customers', {})).body.id;
  await e.stopWorkers();
  const invoice = await openInvoice(key, customer, { due_date: Math.floor(Date.now() / 1000) + 2 });
  // Every queue key goes, the overdue job with them.
  await deleteQueueKeys(e.t.config.redisUrl, e.t.config.queuePrefix);
  await new Promise((r) => setTimeout(r, 2500));
  // Run as if twice at once and again afterwards: the database lets one through.
  const runs = await Promise.all([1, 2].map(() => invoicesWorker.run(e.t.runtime, { step: 'overdue', id: invoice.id })));
  expect(runs.map((r) => r.length).sort()).toEqual([0, 1]);
  expect(await invoicesWorker.run(e.t.runtime, { step: 'overdue', id: invoice.id })).toEqual([]);
  expect(await overdueIds(key)).toEqual([invoice.id]);

  // Another one lost from Redis with no one running it by hand: the reconciler re-adds it.
  const second = await openInvoice(key, customer, { due_date: Math.floor(Date.now() / 1000) + 2 });
  await deleteQueueKeys(e.t.config.redisUrl, e.t.config.queuePrefix);
  await e.startWorkers();
  await until(async () => (await overdueIds(key)).includes(second.id), 30000, 'the re-added overdue job');
  await new Promise((r) => setTimeout(r, 1000));
  expect(await overdueIds(key)).toEqual([invoice.id, second.id].sort());
});
