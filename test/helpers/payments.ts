import { bearer, type TestApp } from './app';
import qs from 'qs';
import { newId } from '../../src/lib/ids';
import { hashKey } from '../../src/kernel/auth';

const form = (params: Record<string, unknown>): string => qs.stringify(params, { arrayFormat: 'indices' });

// Payments that have been made, for the resources that start from one (refunds): through
// `POST /v1/payment_intents` (confirmed with a public test card), in the state asked for. Only a
// refund left `pending` can't be reached through the API (card refunds never are): that one is
// written into the table (`insertPendingRefund`).

export type PaymentState = 'succeeded' | 'uncaptured' | 'failed' | 'canceled';

export interface Payment {
  readonly paymentIntent: string;
  /** Its latest charge (the declined one, for a failed payment). */
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

/**
 * A PaymentIntent of `amount` usd (default 2000) confirmed with `pm_card_<card>` (default visa),
 * in `state`: succeeded, uncaptured (`capture_method=manual`), failed (declined: `card` defaults
 * to chargeDeclined) or canceled (an uncaptured one, canceled).
 */
export async function pay(
  app: TestApp,
  key: string,
  options: { amount?: number; state?: PaymentState; card?: string; stripeAccount?: string; customer?: string } = {},
): Promise<Payment> {
  const headers = { ...bearer(key), ...(options.stripeAccount ? { 'Stripe-Account': options.stripeAccount } : {}) };
  const post = (path: string, body: Record<string, unknown>) => app.http().post(path).set(headers).type('form').send(form(body));
  const state = options.state ?? 'succeeded';
  const card = options.card ?? (state === 'failed' ? 'chargeDeclined' : 'visa');
  const created = await post('/v1/payment_intents', {
    amount: options.amount ?? 2000,
    currency: 'usd',
    allowed_payment_method_types: ['card'],
    ...(options.customer ? { customer: options.customer } : {}),
    ...(state === 'uncaptured' || state === 'canceled' ? { capture_method: 'manual' } : {}),
  });
  if (created.status !== 200) throw new Error(`creating a PaymentIntent failed: ${created.status} ${JSON.stringify(created.body)}`);
  const id: string = created.body.id;
  const confirmed = await post(`/v1/payment_intents/${id}/confirm`, { payment_method: `pm_card_${card}` });
  if (confirmed.status !== (state === 'failed' ? 402 : 200)) throw new Error(`confirming a PaymentIntent failed: ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
  if (state === 'canceled') {
    const canceled = await post(`/v1/payment_intents/${id}/cancel`, {});
    if (canceled.status !== 200) throw new Error(`canceling a PaymentIntent failed: ${canceled.status} ${JSON.stringify(canceled.body)}`);
  }
  const intent = await app.runtime.prisma.paymentIntent.findUniqueOrThrow({ where: { id } });
  const charge = await app.runtime.prisma.charge.findUniqueOrThrow({ where: { id: intent.latestChargeId! } });
  return { paymentIntent: id, charge: charge.id, paymentMethod: charge.paymentMethodId!, accountId: await accountOf(app, key, options.stripeAccount) };
}

/**
 * A refund left `pending` (what a bank-transfer refund is until it settles): no card refund of
 * this sandbox stays pending, so only this reaches the state a cancel takes. Its amount is on the
 * charge's `amount_refunded`, as a pending refund's is.
 */
export async function insertPendingRefund(app: TestApp, chargeId: string, amount: number, status: 'pending' | 'requires_action' = 'pending'): Promise<string> {
  const id = newId('re');
  const now = Math.floor(app.runtime.clock.nowMs() / 1000);
  await app.runtime.prisma.$transaction(async (tx) => {
    const charge = await tx.charge.findUniqueOrThrow({ where: { id: chargeId } });
    await tx.refund.create({
      data: { id, accountId: charge.accountId, created: now, amount, currency: charge.currency, chargeId, paymentIntentId: charge.paymentIntentId, status },
    });
    await tx.charge.update({ where: { id: chargeId }, data: { amountRefunded: { increment: amount } } });
  });
  return id;
}

/** `n` refunds (of one cent each) of one new payment, made through the API; ids oldest first. */
export async function createRefunds(app: TestApp, key: string, n: number): Promise<string[]> {
  const payment = await pay(app, key, { amount: Math.max(n, 1) * 100 });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await app.http().post('/v1/refunds').set(bearer(key)).type('form').send(form({ charge: payment.charge, amount: 1 }));
    if (res.status !== 200) throw new Error(`creating a refund failed: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.id);
  }
  return ids;
}
