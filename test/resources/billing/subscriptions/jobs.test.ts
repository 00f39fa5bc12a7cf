import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { requestsOf } from '../../../helpers/requests';
import { invoicesQueue } from '../../../../src/resources/billing/invoices/jobs';

// A real-clock subscription that bills by email (`send_invoice`): each invoice it opens (its
// first, a renewal, a cancel's `invoice_now`) gets its overdue job when it is made, not from the
// reconciler, whose timer is off here (a pass runs only as the workers start).

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('subscription_jobs', { RECONCILE_INTERVAL_MS: '600000' }, { workers: false });
});
afterAll(() => e.close());

const { post, get, del, eventsOf } = requestsOf(() => e.t);
const queue = () => e.queues.producer.of(invoicesQueue);
const overdueJob = (invoice: any) => queue().getJob(`overdue-${invoice.id}-${invoice.due_date}`);
const overdueIds = async (key: string): Promise<string[]> => (await eventsOf(key, 'invoice.overdue')).map((ev: any) => ev.data.object.id).sort();

async function emailedSubscription(key: string, params: Record<string, unknown>) {
  const customer = (await post(key, '/v1/customers', {})).body.id;
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body.id;
  const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }], collection_method: 'send_invoice', ...params })).body;
  expect(sub.status).toBe('active');
  return { customer, price, sub };
}

test('the first invoice and a cancel`s invoice_now invoice get their overdue job after the commit', async () => {
  const key = newTestKey();
  const { sub, customer } = await emailedSubscription(key, { days_until_due: 30 });
  const first = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  expect(first).toMatchObject({ status: 'open', collection_method: 'send_invoice', due_date: first.created + 30 * 86_400 });
  const job = await overdueJob(first);
  expect(job?.data).toEqual({ step: 'overdue', id: first.id });
  expect(await job!.getState()).toBe('delayed');

  // A proration left pending, invoiced by the cancel.
  const other = (await post(key, '/v1/prices', { product_data: { name: 'Platinum' }, currency: 'usd', unit_amount: 5000, recurring: { interval: 'month' } })).body.id;
  const item = sub.items.data[0].id;
  expect((await post(key, `/v1/subscriptions/${sub.id}`, { items: [{ id: item, price: other }], proration_behavior: 'create_prorations' })).status).toBe(200);
  const canceled = await del(key, `/v1/subscriptions/${sub.id}?invoice_now=true`);
  expect(canceled.status).toBe(200);
  const last = (await get(key, `/v1/invoices/${canceled.body.latest_invoice}`)).body;
  expect(last.id).not.toBe(first.id);
  expect(last).toMatchObject({ status: 'open', collection_method: 'send_invoice', customer });
  expect(await overdueJob(last)).toBeDefined();
});

test('with the workers running and no reconciler pass, the first invoice and a renewal due at once get invoice.overdue', async () => {
  await e.startWorkers();
  const key = newTestKey();
  const anchor = Math.floor(Date.now() / 1000) + 3;
  const { sub } = await emailedSubscription(key, { days_until_due: 0, billing_cycle_anchor: anchor });
  await until(async () => (await overdueIds(key)).includes(sub.latest_invoice), 30000, 'the first invoice overdue');
  await until(async () => (await get(key, `/v1/subscriptions/${sub.id}`)).body.latest_invoice !== sub.latest_invoice, 30000, 'the renewal');
  const renewal = (await get(key, `/v1/subscriptions/${sub.id}`)).body.latest_invoice;
  expect((await get(key, `/v1/invoices/${renewal}`)).body).toMatchObject({ billing_reason: 'subscription_cycle', collection_method: 'send_invoice', status: 'open' });
  await until(async () => (await overdueIds(key)).includes(renewal), 30000, 'the renewal overdue');
  expect(await overdueIds(key)).toEqual([sub.latest_invoice, renewal].sort());
});
