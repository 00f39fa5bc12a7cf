import { bearer, type TestApp } from './app';
import qs from 'qs';
import { newId, randomBase62 } from '../../src/lib/ids';
import { hashKey } from '../../src/kernel/auth';

const form = (params: Record<string, unknown>): string => qs.stringify(params, { arrayFormat: 'indices' });

// Payments that have been made, for the resources that start from one (refunds).
//
// `insertPayment` STANDS IN for PaymentIntents until they exist: it writes a PaymentIntent and its
// charge straight into the tables, in the state asked for, for the key's account (or the connected
// account named). The card is a real payment method made through the API (`tok_<name>`), so its
// test outcome (4000000000005126: refunds fail) is the card's own. Once `POST /v1/payment_intents`
// exists, flows that can reach a state through the API take it there; this stays for the states
// they can't reach (a refund left `pending`, say).

export type PaymentState = 'succeeded' | 'uncaptured' | 'failed' | 'canceled';

export interface Payment {
  readonly paymentIntent: string;
  readonly charge: string;
  readonly paymentMethod: string;
  readonly accountId: string;
}

async function accountOf(app: TestApp, key: string, stripeAccount?: string): Promise<string> {
  if (stripeAccount) return stripeAccount;
  const row = await app.runtime.prisma.apiKey.findUnique({ where: { keyHash: hashKey(key) }, select: { accountId: true } });
  if (!row) throw new Error('this key has not been used yet');
  return row.accountId;
}

const CARD_DETAILS = {
  amount_authorized: null,
  authorization_code: null,
  brand: 'visa',
  checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: null },
  country: 'US',
  electronic_commerce_indicator: null,
  exp_month: 12,
  exp_year: 2034,
  funding: 'credit',
  installments: null,
  last4: '4242',
  mandate: null,
  network: 'visa',
  network_transaction_id: null,
  regulated_status: 'unregulated',
  three_d_secure: null,
  transaction_link_id: null,
  wallet: null,
};

/**
 * A PaymentIntent and its charge in `state` (default: succeeded and captured), `amount` in usd,
 * paid with a card made from `tok_<card>` (default `tok_visa`).
 */
export async function insertPayment(
  app: TestApp,
  key: string,
  options: { amount?: number; state?: PaymentState; card?: string; stripeAccount?: string; customer?: string } = {},
): Promise<Payment> {
  const headers = { ...bearer(key), ...(options.stripeAccount ? { 'Stripe-Account': options.stripeAccount } : {}) };
  const created = await app.http().post('/v1/payment_methods').set(headers).type('form').send(form({ type: 'card', card: { token: `tok_${options.card ?? 'visa'}` } }));
  if (created.status !== 200) throw new Error(`creating a payment method failed: ${created.status} ${JSON.stringify(created.body)}`);
  const accountId = await accountOf(app, key, options.stripeAccount);
  const state = options.state ?? 'succeeded';
  const amount = options.amount ?? 2000;
  const paymentIntent = newId('pi');
  const charge = newId('ch');
  const now = Math.floor(app.runtime.clock.nowMs() / 1000);
  const succeeded = state !== 'failed';
  const captured = state === 'succeeded';
  const prisma = app.runtime.prisma;
  await prisma.$transaction(async (tx) => {
    await tx.paymentIntent.create({
      data: {
        id: paymentIntent,
        accountId,
        created: now,
        amount,
        currency: 'usd',
        status: { succeeded: 'succeeded', uncaptured: 'requires_capture', failed: 'requires_payment_method', canceled: 'canceled' }[state],
        captureMethod: captured ? 'automatic' : 'manual',
        confirmationMethod: 'automatic',
        customerId: options.customer ?? null,
        paymentMethodId: state === 'failed' ? null : created.body.id,
        paymentMethodTypes: ['card'],
        amountCapturable: state === 'uncaptured' ? amount : 0,
        amountReceived: captured ? amount : 0,
        latestChargeId: charge,
        clientSecret: `${paymentIntent}_secret_${randomBase62(25)}`,
        canceledAt: state === 'canceled' ? now : null,
        cancellationReason: state === 'canceled' ? 'requested_by_customer' : null,
      },
    });
    await tx.charge.create({
      data: {
        id: charge,
        accountId,
        created: now,
        amount,
        amountCaptured: captured ? amount : 0,
        // A canceled PaymentIntent's authorization went back whole.
        amountRefunded: state === 'canceled' ? amount : 0,
        currency: 'usd',
        status: succeeded ? 'succeeded' : 'failed',
        captured,
        paid: succeeded,
        paymentIntentId: paymentIntent,
        customerId: options.customer ?? null,
        paymentMethodId: created.body.id,
        paymentMethodDetails: { card: CARD_DETAILS, type: 'card' },
        billingDetails: { address: null, email: null, name: null, phone: null, tax_id: null },
        failureCode: succeeded ? null : 'card_declined',
        failureMessage: succeeded ? null : 'Your card was declined.',
      },
    });
  });
  return { paymentIntent, charge, paymentMethod: created.body.id, accountId };
}

/**
 * A refund left `pending` (what a bank-transfer refund is until it settles): no card refund of
 * this sandbox stays pending, so only this reaches the state a cancel takes. Its amount is on the
 * charge's `amount_refunded`, as a pending refund's is.
 */
export async function insertPendingRefund(app: TestApp, payment: Payment, amount: number): Promise<string> {
  const id = newId('re');
  const now = Math.floor(app.runtime.clock.nowMs() / 1000);
  await app.runtime.prisma.$transaction(async (tx) => {
    await tx.refund.create({
      data: { id, accountId: payment.accountId, created: now, amount, currency: 'usd', chargeId: payment.charge, paymentIntentId: payment.paymentIntent, status: 'pending' },
    });
    await tx.charge.update({ where: { id: payment.charge }, data: { amountRefunded: { increment: amount } } });
  });
  return id;
}

/** `n` refunds (of one cent each) of one new payment, made through the API; ids oldest first. */
export async function createRefunds(app: TestApp, key: string, n: number): Promise<string[]> {
  const payment = await insertPayment(app, key, { amount: Math.max(n, 1) * 100 });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await app.http().post('/v1/refunds').set(bearer(key)).type('form').send(form({ charge: payment.charge, amount: 1 }));
    if (res.status !== 200) throw new Error(`creating a refund failed: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.id);
  }
  return ids;
}
