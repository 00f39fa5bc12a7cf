import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { until } from '../../../helpers/queues';
import { requestsOf } from '../../../helpers/requests';

// auto_advance through the real worker: a draft finalizes itself an hour after it was made, on a
// test clock as the clock advances past that time, on the real clock when its job (or the
// reconciler) finds it due.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('invoices', { RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const { post, get, eventsOf } = requestsOf(() => e.t);
const START = Date.UTC(2027, 2, 1, 9) / 1000;

async function clockAt(key: string, frozen: number): Promise<string> {
  return (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: frozen })).body.id;
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 30000, `${clock} ready`);
}

test('on a test clock: the draft finalizes at its creation + 3600 as the clock passes it, not before', async () => {
  const key = newTestKey();
  const clock = await clockAt(key, START);
  const customer = (await post(key, '/v1/customers', { test_clock: clock })).body.id;
  await post(key, '/v1/invoiceitems', { customer, amount: 1500, currency: 'usd' });
  const draft = (await post(key, '/v1/invoices', { customer, auto_advance: true, pending_invoice_items_behavior: 'include' })).body;
  expect(draft).toMatchObject({ created: START, test_clock: clock, automatically_finalizes_at: START + 3600 });
  const off = (await post(key, '/v1/invoices', { customer })).body;

  await advance(key, clock, START + 3599);
  expect((await get(key, `/v1/invoices/${draft.id}`)).body.status).toBe('draft');
  await advance(key, clock, START + 7200);
  const done = (await get(key, `/v1/invoices/${draft.id}`)).body;
  expect(done).toMatchObject({ status: 'open', amount_due: 1500, automatically_finalizes_at: null, effective_at: START + 3600, number: `${customer.slice(4, 12).toUpperCase()}-0001` });
  const [event] = await eventsOf(key, 'invoice.finalized');
  expect(event.data.object).toMatchObject({ id: draft.id, status: 'open' });
  expect(event.request).toEqual({ id: null, idempotency_key: null });
  // Without auto_advance a draft waits.
  expect((await get(key, `/v1/invoices/${off.id}`)).body.status).toBe('draft');
});

test('on the real clock: the worker finalizes a draft once its time has come (the reconciler finds it)', async () => {
  const key = newTestKey();
  const customer = (await post(key, '/v1/customers', {})).body.id;
  await post(key, '/v1/invoiceitems', { customer, amount: 800, currency: 'usd' });
  const draft = (await post(key, '/v1/invoices', { customer, auto_advance: true, pending_invoice_items_behavior: 'include' })).body;
  expect(draft.automatically_finalizes_at).toBe(draft.created + 3600);
  // Its job waits an hour; a moment later it is still a draft.
  await new Promise((r) => setTimeout(r, 500));
  expect((await get(key, `/v1/invoices/${draft.id}`)).body.status).toBe('draft');
  // As if the hour had passed.
  await e.t.runtime.prisma.$executeRaw`UPDATE invoice_details SET finalize_at = finalize_at - 3600 WHERE invoice_id = ${draft.id}`;
  await until(async () => (await get(key, `/v1/invoices/${draft.id}`)).body.status === 'open', 30000, 'the finalization');
  expect((await get(key, `/v1/invoices/${draft.id}`)).body).toMatchObject({ amount_due: 800, automatically_finalizes_at: null });
  expect((await eventsOf(key, 'invoice.finalized')).map((ev: any) => ev.data.object.id)).toEqual([draft.id]);
});
