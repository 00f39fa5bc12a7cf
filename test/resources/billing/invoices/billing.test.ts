import { newTestKey } from '../../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../../helpers/eventsApp';
import { requestsOf } from '../../../helpers/requests';
import { billingWorker } from '../../../../src/resources/billing/subscriptions/pipeline';
import { INCOMPLETE_SECONDS } from '../../../../src/resources/billing/subscriptions/service';

// Billing's lock order (invoices/billing.ts: the customer, its subscription, the invoice): a
// payment retry due at the same moment as `POST /v1/invoices/{id}/pay`, or as the expiry of the
// unpaid first invoice, waits for the other instead of deadlocking; each round ends in one of
// the states either order gives. The jobs run by hand (no workers), both made due in the database.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('billing_locks', { RECONCILE_INTERVAL_MS: '600000' }, { workers: false });
});
afterAll(() => e.close());

const { post, get } = requestsOf(() => e.t);
const ROUNDS = 20;

async function card(key: string, customer: string, number: string): Promise<string> {
  const pm = (await post(key, '/v1/payment_methods', { type: 'card', card: { number, exp_month: 12, exp_year: 2040, cvc: '123' } })).body;
  expect((await post(key, `/v1/payment_methods/${pm.id}/attach`, { customer })).status).toBe(200);
  expect((await post(key, `/v1/customers/${customer}`, { invoice_settings: { default_payment_method: pm.id } })).status).toBe(200);
  return pm.id;
}

/** An `incomplete` subscription whose first invoice was declined, its retry scheduled. */
async function declinedFirstInvoice(key: string, price: string) {
  const customer = (await post(key, '/v1/customers', {})).body.id;
  await card(key, customer, '4000000000000341');
  const sub = (await post(key, '/v1/subscriptions', { customer, items: [{ price }] })).body;
  expect(sub.status).toBe('incomplete');
  const invoice = (await get(key, `/v1/invoices/${sub.latest_invoice}`)).body;
  expect(invoice).toMatchObject({ status: 'open', attempt_count: 1 });
  expect(invoice.next_payment_attempt).not.toBeNull();
  return { customer, sub, invoice };
}

const retryDueNow = (invoice: string) =>
  e.t.runtime.prisma.$executeRaw`UPDATE invoice_payment_retries SET next_attempt_at = ${Math.floor(Date.now() / 1000) - 1} WHERE invoice_id = ${invoice}`;

async function chargesOf(key: string, invoice: string): Promise<any[]> {
  const payments = (await get(key, `/v1/invoice_payments?invoice=${invoice}`)).body.data as any[];
  const intents = [...new Set(payments.map((p) => p.payment.payment_intent))];
  const lists = await Promise.all(intents.map(async (pi) => (await get(key, `/v1/charges?payment_intent=${pi}&limit=100`)).body.data as any[]));
  return lists.flat();
}

async function price(key: string): Promise<string> {
  return (await post(key, '/v1/prices', { product_data: { name: 'Gold' }, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } })).body.id;
}

test(`${ROUNDS} rounds of a retry and POST /v1/invoices/{id}/pay at the same moment: no 500, one successful charge, attempt_count as charged`, async () => {
  const key = newTestKey();
  const gold = await price(key);
  for (let round = 0; round < ROUNDS; round++) {
    const { sub, invoice } = await declinedFirstInvoice(key, gold);
    await retryDueNow(invoice.id);
    const [paid, retried] = await Promise.all([
      post(key, `/v1/invoices/${invoice.id}/pay`, { payment_method: 'pm_card_visa' }),
      billingWorker.run(e.t.runtime, { kind: 'invoice_retry', id: invoice.id }),
    ]);
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('paid');
    const after = (await get(key, `/v1/invoices/${invoice.id}`)).body;
    const charges = await chargesOf(key, invoice.id);
    expect(charges.filter((c) => c.status === 'succeeded')).toHaveLength(1);
    // The first decline, the retry's when it ran first, the payment.
    expect(after).toMatchObject({ status: 'paid', attempt_count: charges.length, next_payment_attempt: null });
    expect([2, 3]).toContain(charges.length);
    // The retry wrote events only when it charged, before the payment.
    expect(retried.length > 0).toBe(charges.length === 3);
    expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  }
});

test(`${ROUNDS} rounds of a retry (now with a good card) and the first invoice's expiry at the same moment: either paid and active, or voided and expired`, async () => {
  const key = newTestKey();
  const gold = await price(key);
  for (let round = 0; round < ROUNDS; round++) {
    const { customer, sub, invoice } = await declinedFirstInvoice(key, gold);
    await card(key, customer, '4242424242424242');
    await retryDueNow(invoice.id);
    // The subscription made 23 hours ago: its expiry is due.
    const now = Math.floor(Date.now() / 1000);
    await e.t.runtime.prisma.$executeRaw`UPDATE subscriptions SET created = ${now - INCOMPLETE_SECONDS - 1}, next_action_at = ${now - 1} WHERE id = ${sub.id}`;
    await Promise.all([billingWorker.run(e.t.runtime, { kind: 'invoice_retry', id: invoice.id }), billingWorker.run(e.t.runtime, { kind: 'subscription', id: sub.id })]);
    const after = (await get(key, `/v1/invoices/${invoice.id}`)).body;
    const status = (await get(key, `/v1/subscriptions/${sub.id}`)).body.status;
    const succeeded = (await chargesOf(key, invoice.id)).filter((c) => c.status === 'succeeded');
    if (after.status === 'paid') {
      expect(status).toBe('active');
      expect(succeeded).toHaveLength(1);
      expect(after.attempt_count).toBe(2);
    } else {
      expect(after.status).toBe('void');
      expect(status).toBe('incomplete_expired');
      expect(succeeded).toHaveLength(0);
      expect(after.attempt_count).toBe(1);
    }
    expect(after.next_payment_attempt).toBeNull();
  }
});

test(`${ROUNDS} rounds of a retry and the customer confirming the invoice's PaymentIntent at the same moment: one successful charge, every decline counted once`, async () => {
  const key = newTestKey();
  const gold = await price(key);
  for (let round = 0; round < ROUNDS; round++) {
    const { sub, invoice } = await declinedFirstInvoice(key, gold);
    await retryDueNow(invoice.id);
    const [payment] = (await get(key, `/v1/invoice_payments?invoice=${invoice.id}`)).body.data;
    const intent = (await get(key, `/v1/payment_intents/${payment.payment.payment_intent}`)).body;
    const [confirmed] = await Promise.all([
      post(key.replace(/^sk_/, 'pk_'), `/v1/payment_intents/${intent.id}/confirm`, { client_secret: intent.client_secret, payment_method: 'pm_card_visa' }),
      billingWorker.run(e.t.runtime, { kind: 'invoice_retry', id: invoice.id }),
    ]);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.status).toBe('succeeded');
    const after = (await get(key, `/v1/invoices/${invoice.id}`)).body;
    const charges = await chargesOf(key, invoice.id);
    expect(charges.filter((c) => c.status === 'succeeded')).toHaveLength(1);
    // Billing's attempts are the declines (the first charge, the retry's when it ran first); the customer's own confirmation is not one.
    expect(after).toMatchObject({ status: 'paid', attempt_count: charges.filter((c) => c.status === 'failed').length, next_payment_attempt: null });
    expect((await get(key, `/v1/subscriptions/${sub.id}`)).body.status).toBe('active');
  }
});
