import { hashKey } from '../../../../src/kernel/auth';
import { addInterval } from '../../../../src/resources/billing/invoices/amounts';
import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { deleteQueueKeys } from '../../../helpers/isolation';
import { until } from '../../../helpers/queues';
import { requestsOf } from '../../../helpers/requests';
import { expectMatchesSdkTypes } from '../../../helpers/sdkTypes';

// Dunning through the real worker: a declined subscription invoice is retried on the platform's
// schedule (BILLING_RETRY_SCHEDULE) on test clocks and on the real clock; a new default card pays
// the next retry; paying ends the schedule; after the last retry the policy's outcome applies.

const DAY = 86_400;
const START = Date.UTC(2027, 0, 15, 9) / 1000;
// Platforms with their own schedules (their accounts are made before their first request).
const UNPAID = 'acct_DunningUnpaid01';
const PAST_DUE = 'acct_DunningPastDue1';
const REAL_CLOCK = 'acct_DunningRealClk1';

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('dunning', {
    RECONCILE_INTERVAL_MS: '300',
    BILLING_RETRY_SCHEDULE: JSON.stringify({
      [UNPAID]: { days: [1, 1], subscription: 'unpaid', invoice: 'uncollectible' },
      [PAST_DUE]: { days: [0.5], subscription: 'past_due' },
      // Two seconds: a real-clock retry the test can wait for.
      [REAL_CLOCK]: { days: [0.00002] },
    }),
  });
});
afterAll(() => e.close());

const { post, get } = requestsOf(() => e.t);

/** A key of the platform account with a fixed id (the one BILLING_RETRY_SCHEDULE names). */
async function platformKey(accountId: string): Promise<string> {
  const key = newTestKey();
  // One account, a new key of it each time.
  await e.t.runtime.prisma.account.upsert({ where: { id: accountId }, create: { id: accountId, created: Math.floor(Date.now() / 1000) }, update: {} });
  await e.t.runtime.prisma.apiKey.create({ data: { keyHash: hashKey(key), hint: 'sk_test_…', accountId, origin: 'open' } });
  return key;
}

const eventsOf = async (key: string, type: string, invoice?: string) =>
  ((await get(key, `/v1/events?type=${type}&limit=100`)).body.data as any[]).reverse().filter((ev) => invoice === undefined || ev.data.object.id === invoice);

/** A card of the customer made from its number and set as the customer's default. */
async function defaultCard(key: string, customer: string, number: string): Promise<string> {
  const pm = (await post(key, '/v1/payment_methods', { type: 'card', card: { number, exp_month: 12, exp_year: 2040, cvc: '123' } })).body;
  expect((await post(key, `/v1/payment_methods/${pm.id}/attach`, { customer })).status).toBe(200);
  expect((await post(key, `/v1/customers/${customer}`, { invoice_settings: { default_payment_method: pm.id } })).status).toBe(200);
  return pm.id;
}

async function onClock(key: string) {
  const clock = (await post(key, '/v1/test_helpers/test_clocks', { frozen_time: START })).body;
  const customer = (await post(key, '/v1/customers', { test_clock: clock.id })).body;
  await defaultCard(key, customer.id, '4242424242424242');
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body;
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  expect(sub.status).toBe('active');
  return { clock, customer, sub };
}

async function advance(key: string, clock: string, to: number): Promise<void> {
  expect((await post(key, `/v1/test_helpers/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
  await until(async () => (await get(key, `/v1/test_helpers/test_clocks/${clock}`)).body.status === 'ready', 60000, `${clock} ready`);
}

/** A clock whose subscription's first renewal (month 1) declines. */
async function declinedRenewal(key: string) {
  const { clock, customer, sub } = await onClock(key);
  await defaultCard(key, customer.id, '4000000000000341');
  const renewal = addInterval(START, 'month', 1);
  await advance(key, clock.id, renewal + 60);
  const invoice = (await get(key, `/v1/invoices/${(await get(key, `/v1/subscriptions/${sub.id}`)).body.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'open', billing_reason: 'subscription_cycle', attempt_count: 1, attempted: true });
  return { clock, customer, sub, invoice, renewal };
}

const chargesOf = async (key: string, invoice: string) => {
  const [payment] = (await get(key, `/v1/invoice_payments?invoice=${invoice}`)).body.data;
  return (await get(key, `/v1/charges?payment_intent=${payment.payment.payment_intent}&limit=100`)).body.data as any[];
};

test('a year on a test clock: the card fails at month 3 and is retried on the schedule; a new default card pays the next retry, and every later renewal is paid', async () => {
  const key = newTestKey();
  const { clock, customer, sub } = await onClock(key);
  await advance(key, clock.id, addInterval(START, 'month', 2));
  await defaultCard(key, customer.id, '4000000000000341');
  const m3 = addInterval(START, 'month', 3);
  await advance(key, clock.id, m3 + 60);
  const failed = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(failed.status).toBe('past_due');
  const invoiceId = failed.latest_invoice;
  expect((await get(key, `/v1/invoices/${invoiceId}`)).body).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: m3 + DAY });

  // Two retries (day 1 and day 3), both declined; the third is due on day 5.
  await advance(key, clock.id, m3 + 4 * DAY);
  const stripe = e.t.stripe(key);
  const read = await stripe.invoices.retrieve(invoiceId);
  expect({ attempt_count: read.attempt_count, next_payment_attempt: read.next_payment_attempt, status: read.status }).toEqual({ attempt_count: 3, next_payment_attempt: m3 + 5 * DAY, status: 'open' });
  expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('past_due');
  const failures = await eventsOf(key, 'invoice.payment_failed', invoiceId);
  expect(failures.map((ev) => [ev.data.object.attempt_count, ev.data.object.next_payment_attempt])).toEqual([
    [1, m3 + DAY],
    [2, m3 + 3 * DAY],
    [3, m3 + 5 * DAY],
  ]);
  for (const ev of failures) expectMatchesSdkTypes(ev, ev.type);

  // A good card becomes the default between retries: the day-5 retry charges it and pays the invoice.
  const good = await defaultCard(key, customer.id, '4242424242424242');
  await advance(key, clock.id, m3 + 5 * DAY + 60);
  const paid = (await get(key, `/v1/invoices/${invoiceId}`)).body;
  expect(paid).toMatchObject({ status: 'paid', attempt_count: 4, next_payment_attempt: null, amount_paid: 1000, status_transitions: { paid_at: m3 + 5 * DAY } });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  const charges = await chargesOf(key, invoiceId);
  expect(charges.map((c) => [c.status, c.payment_method === good])).toEqual([
    ['succeeded', true],
    ['failed', false],
    ['failed', false],
    ['failed', false],
  ]);
  expect((await eventsOf(key, 'invoice.paid', invoiceId)).map((ev) => ev.data.object.next_payment_attempt)).toEqual([null]);

  // No retry runs after the payment; the rest of the year renews on the good card.
  for (const months of [5, 7, 9, 11, 12]) await advance(key, clock.id, addInterval(START, 'month', months));
  expect((await get(key, `/v1/invoices/${invoiceId}`)).body.attempt_count).toBe(4);
  expect(await chargesOf(key, invoiceId)).toHaveLength(4);
  const invoices = ((await get(key, `/v1/invoices?subscription=${sub.id}&limit=100`)).body.data as any[]).reverse();
  expect(invoices).toHaveLength(13);
  expect(invoices.every((i) => i.status === 'paid' && i.next_payment_attempt === null)).toBe(true);
  expect(invoices.map((i) => i.attempt_count)).toEqual([1, 1, 1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  expect((await eventsOf(key, 'invoice.payment_failed')).length).toBe(3);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
});

test('the default schedule runs out: 8 retries in 14 days, then the subscription is canceled (payment_failed) and the invoice left open', async () => {
  const key = newTestKey();
  const { clock, sub, invoice, renewal } = await declinedRenewal(key);
  await advance(key, clock.id, renewal + 13 * DAY + 60);
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ attempt_count: 8, next_payment_attempt: renewal + 14 * DAY });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
  await advance(key, clock.id, renewal + 20 * DAY);
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'open', attempt_count: 9, next_payment_attempt: null });
  const ended = (await get(key, `/v1/subscriptions/${sub.id}`)).body;
  expect(ended).toMatchObject({ status: 'canceled', canceled_at: renewal + 14 * DAY, ended_at: renewal + 14 * DAY, cancellation_details: { reason: 'payment_failed' } });
  const failures = await eventsOf(key, 'invoice.payment_failed', invoice.id);
  const due = [1, 3, 5, 7, 9, 11, 13, 14].map((d) => renewal + d * DAY);
  expect(failures.map((ev) => ev.data.object.next_payment_attempt)).toEqual([...due, null]);
  expect((await eventsOf(key, 'customer.subscription.deleted')).map((ev) => ev.data.object.id)).toEqual([sub.id]);
  expect(await eventsOf(key, 'invoice.marked_uncollectible')).toEqual([]);
  expect(await chargesOf(key, invoice.id)).toHaveLength(9);
});

test('a platform`s own schedule: two retries a day apart, then the subscription is unpaid and the invoice uncollectible', async () => {
  const key = await platformKey(UNPAID);
  const { clock, sub, invoice, renewal } = await declinedRenewal(key);
  expect(invoice.next_payment_attempt).toBe(renewal + DAY);
  await advance(key, clock.id, renewal + 5 * DAY);
  const closed = (await get(key, `/v1/invoices/${invoice.id}`)).body;
  expect(closed).toMatchObject({ status: 'uncollectible', attempt_count: 3, next_payment_attempt: null });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('unpaid');
  expect((await eventsOf(key, 'invoice.marked_uncollectible')).map((ev) => [ev.data.object.id, ev.data.object.status])).toEqual([[invoice.id, 'uncollectible']]);
  const updated = (await eventsOf(key, 'customer.subscription.updated')).filter((ev) => ev.data.object.status === 'unpaid');
  expect(updated).toHaveLength(1);
  expect(updated[0].data.previous_attributes).toMatchObject({ status: 'past_due' });
  expect(updated[0].data.object).toMatchObject({ id: sub.id });
  expect(await eventsOf(key, 'customer.subscription.deleted')).toEqual([]);
  expect((await eventsOf(key, 'invoice.payment_failed', invoice.id)).map((ev) => ev.data.object.next_payment_attempt)).toEqual([renewal + DAY, renewal + 2 * DAY, null]);
});

test('an unpaid subscription`s next invoices are drafts, nothing attempted; a new card, the latest finalized and paid, makes it active', async () => {
  const key = await platformKey(UNPAID);
  const { clock, customer, sub, renewal } = await declinedRenewal(key);
  await advance(key, clock.id, renewal + 5 * DAY);
  const next = addInterval(START, 'month', 2);
  await advance(key, clock.id, next + 60);
  const draft = (await get(key, `/v1/invoices/${(await get(key, `/v1/subscriptions/${sub.id}`)).body.latest_invoice}`)).body;
  expect(draft).toMatchObject({ status: 'draft', billing_reason: 'subscription_cycle', auto_advance: false, attempt_count: 0, amount_due: 1000, period_end: next });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('unpaid');
  expect(await eventsOf(key, 'invoice.payment_failed', draft.id)).toEqual([]);
  expect((await get(key, `/v1/invoice_payments?invoice=${draft.id}`)).body.data).toEqual([]);

  await defaultCard(key, customer.id, '4242424242424242');
  expect((await post(key, `/v1/invoices/${draft.id}/finalize`, {})).body.status).toBe('open');
  expect((await post(key, `/v1/invoices/${draft.id}/pay`, {})).body).toMatchObject({ status: 'paid', amount_paid: 1000 });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
});

test('past_due after the last retry: one retry half a day on, then both stay as they are and nothing more runs', async () => {
  const key = await platformKey(PAST_DUE);
  const { clock, sub, invoice, renewal } = await declinedRenewal(key);
  expect(invoice.next_payment_attempt).toBe(renewal + DAY / 2);
  await advance(key, clock.id, renewal + 10 * DAY);
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'open', attempt_count: 2, next_payment_attempt: null });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('past_due');
  expect(await eventsOf(key, 'customer.subscription.deleted')).toEqual([]);
  expect(await eventsOf(key, 'invoice.marked_uncollectible')).toEqual([]);
  expect(await chargesOf(key, invoice.id)).toHaveLength(2);
});

test('paying the invoice between retries (POST /v1/invoices/{id}/pay) ends the schedule', async () => {
  const key = newTestKey();
  const { clock, sub, invoice, renewal } = await declinedRenewal(key);
  await advance(key, clock.id, renewal + 2 * DAY);
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ attempt_count: 2, next_payment_attempt: renewal + 3 * DAY });
  const paid = (await post(key, `/v1/invoices/${invoice.id}/pay`, { payment_method: 'pm_card_visa' })).body;
  expect(paid).toMatchObject({ status: 'paid', attempt_count: 3, next_payment_attempt: null });
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  await advance(key, clock.id, renewal + 20 * DAY);
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', attempt_count: 3 });
  expect(await chargesOf(key, invoice.id)).toHaveLength(3);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  expect(await eventsOf(key, 'invoice.payment_failed', invoice.id)).toHaveLength(2);
});

test('on the real clock: a declined first invoice is retried by the worker at its due time (the reconciler re-adds a lost job) with the new default card', async () => {
  const key = await platformKey(REAL_CLOCK);
  const customer = (await post(key, '/v1/customers', {})).body;
  await defaultCard(key, customer.id, '4000000000000341');
  const price = (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body;
  await e.stopWorkers();
  const sub = (await post(key, '/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  expect(sub.status).toBe('incomplete');
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'open', attempt_count: 1 });
  expect(invoice.next_payment_attempt).toBeGreaterThanOrEqual(sub.created + 2);
  expect(invoice.next_payment_attempt).toBeLessThanOrEqual(sub.created + 3);
  // Redis loses the retry's job; a good card becomes the default before it is due.
  await deleteQueueKeys(e.t.config.redisUrl, e.t.config.queuePrefix);
  const good = await defaultCard(key, customer.id, '4242424242424242');
  await e.startWorkers();
  await until(async () => (await get(key, `/v1/invoices/${invoice.id}`)).body.status === 'paid', 30000, 'the retry paid');
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ attempt_count: 2, next_payment_attempt: null });
  expect(Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(invoice.next_payment_attempt);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  expect((await chargesOf(key, invoice.id)).map((c) => [c.status, c.payment_method === good])).toEqual([
    ['succeeded', true],
    ['failed', false],
  ]);
});

test('the customer confirming the invoice`s PaymentIntent between retries (publishable key, client secret) ends the schedule', async () => {
  const key = newTestKey();
  const { clock, sub, invoice, renewal } = await declinedRenewal(key);
  expect(invoice.next_payment_attempt).toBe(renewal + DAY);
  const [payment] = (await get(key, `/v1/invoice_payments?invoice=${invoice.id}`)).body.data;
  const intent = (await get(key, `/v1/payment_intents/${payment.payment.payment_intent}`)).body;
  const confirmed = await post(key.replace(/^sk_/, 'pk_'), `/v1/payment_intents/${intent.id}/confirm`, { client_secret: intent.client_secret, payment_method: 'pm_card_visa' });
  expect(confirmed.body.status).toBe('succeeded');
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', next_payment_attempt: null });
  await advance(key, clock.id, renewal + 20 * DAY);
  expect((await get(key, `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', attempt_count: 1 });
  expect(await chargesOf(key, invoice.id)).toHaveLength(2);
  expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  expect(await eventsOf(key, 'invoice.payment_failed', invoice.id)).toHaveLength(1);
});

test('a connected account follows its platform`s schedule; a card asking for 3-D Secure starts none', async () => {
  const key = await platformKey(UNPAID);
  const account = (await post(key, '/v1/accounts', { type: 'custom', country: 'US', capabilities: { card_payments: { requested: true }, transfers: { requested: true } } })).body;
  expect(account.id).toMatch(/^acct_/);
  const on = { 'Stripe-Account': account.id };
  const p = (path: string, body: Record<string, unknown> = {}) => post(key, path, body as any, on);
  const g = (path: string) => get(key, path, on);
  const clock = (await p('/v1/test_helpers/test_clocks', { frozen_time: START })).body;
  const customer = (await p('/v1/customers', { test_clock: clock.id, payment_method: 'pm_card_visa' })).body;
  const visa = (await g(`/v1/payment_methods?customer=${customer.id}`)).body.data[0].id;
  await p(`/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: visa } });
  const price = (await p('/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body;
  const sub = (await p('/v1/subscriptions', { customer: customer.id, items: [{ price: price.id }] })).body;
  const asking = (await p('/v1/payment_methods/pm_card_authenticationRequired/attach', { customer: customer.id })).body.id;
  const other = (await p('/v1/subscriptions', { customer: customer.id, items: [{ price: (await p('/v1/prices', { product_data: { name: 'Silver' }, currency: 'usd', unit_amount: 500, recurring: { interval: 'month' } })).body.id }], default_payment_method: asking })).body;
  expect(other.status).toBe('incomplete');
  expect((await g(`/v1/invoices/${other.latest_invoice}`)).body).toMatchObject({ status: 'open', next_payment_attempt: null });
  const declining = (await p('/v1/payment_methods/pm_card_chargeCustomerFail/attach', { customer: customer.id })).body.id;
  await p(`/v1/customers/${customer.id}`, { invoice_settings: { default_payment_method: declining } });
  const renewal = addInterval(START, 'month', 1);
  expect((await p(`/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: renewal + 60 })).status).toBe(200);
  await until(async () => (await g(`/v1/test_helpers/test_clocks/${clock.id}`)).body.status === 'ready', 60000, 'ready');
  const invoice = (await g(`/v1/invoices/${(await g(`/v1/subscriptions/${sub.id}`)).body.latest_invoice}`)).body;
  // The platform's days [1, 1]: a day, then another; then unpaid and uncollectible.
  expect(invoice).toMatchObject({ status: 'open', attempt_count: 1, next_payment_attempt: renewal + DAY });
  expect((await p(`/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: renewal + 3 * DAY })).status).toBe(200);
  await until(async () => (await g(`/v1/test_helpers/test_clocks/${clock.id}`)).body.status === 'ready', 60000, 'ready');
  expect((await g(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'uncollectible', attempt_count: 3, next_payment_attempt: null });
  expect((await g(`/v1/subscriptions/${sub.id}`)).body.status).toBe('unpaid');
});
