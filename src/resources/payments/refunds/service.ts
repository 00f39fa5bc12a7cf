import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { ApiError, resourceMissing } from '../../../kernel/errors';
import type { ExpandableField } from '../../../kernel/expand';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { emit, requestEventOptions, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { listedRefunds, selectOwnedRefund } from './queries';
import { chargeObject, emitRefundUpdated, endRefund, loadRefund, lockCharge, queueRefundJobs, settleJob } from './pipeline';
import { REFUND_LIST_OBJECT, serializeRefund, type RefundRow } from './serializer';

// Refunds of a charge (named directly or through its PaymentIntent's latest charge). Every
// change of a charge's refunded amount locks the charge row first, so concurrent refunds of one
// charge run one after another and their total never passes what was captured.

const NAME = 'refund';

/** A state error: the request was well formed, the objects it named can't take it (the key keeps it). */
const stateError = (message: string, code: string | undefined, param?: string): ApiError =>
  new ApiError({ status: 400, message, code, param, kind: 'state' });

const SYMBOLS: Readonly<Record<string, string>> = { usd: '$', eur: '€', gbp: '£', jpy: '¥' };
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);

/** An amount as the public API's refund errors show it: `$20.00`, or `20.00 CAD` without a symbol of its own. */
export function formatAmount(amount: number, currency: string): string {
  const value = ZERO_DECIMAL.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  const symbol = SYMBOLS[currency];
  return symbol === undefined ? `${value} ${currency.toUpperCase()}` : `${symbol}${value}`;
}

const noSuccessfulCharge = (paymentIntentId: string): ApiError =>
  stateError(`This PaymentIntent (${paymentIntentId}) does not have a successful charge to refund.`, undefined, 'payment_intent');

// The public API's guidance: an uncaptured charge can't be refunded, its PaymentIntent is canceled instead.
const uncaptured = (chargeId: string, paymentIntentId: string | null): ApiError =>
  stateError(
    paymentIntentId === null
      ? `Charge ${chargeId} has not been captured and can't be refunded.`
      : `Charge ${chargeId} has not been captured and can't be refunded. To release the uncaptured funds, cancel the PaymentIntent (${paymentIntentId}) instead.`,
    'charge_not_refundable',
  );

/** The charge a create names (`charge`, or `payment_intent`'s latest charge; both must agree), of the caller's account. */
async function chargeToRefund(tx: Tx, ctx: RequestContext): Promise<string> {
  const { params, caller } = ctx;
  const chargeParam: string | undefined = params.charge;
  const intentParam: string | undefined = params.payment_intent;
  if (chargeParam === undefined && intentParam === undefined) {
    throw new ApiError({ status: 400, message: 'You must provide either `charge` or `payment_intent` to create a refund.', code: 'parameter_missing', param: 'charge' });
  }
  let fromIntent: string | undefined;
  if (intentParam !== undefined) {
    const intent = hasIdShape('pi', intentParam)
      ? await tx.paymentIntent.findFirst({ where: { id: intentParam, accountId: caller.accountId }, select: { id: true, status: true, latestChargeId: true } })
      : null;
    if (!intent) throw resourceMissing('payment_intent', intentParam, 'payment_intent', 400);
    if (intent.status === 'requires_capture' && intent.latestChargeId) throw uncaptured(intent.latestChargeId, intent.id);
    if (intent.status !== 'succeeded' || !intent.latestChargeId) throw noSuccessfulCharge(intent.id);
    fromIntent = intent.latestChargeId;
  }
  if (chargeParam === undefined) return fromIntent!;
  const charge = hasIdShape('ch', chargeParam)
    ? await tx.charge.findFirst({ where: { id: chargeParam, accountId: caller.accountId }, select: { id: true, paymentIntentId: true } })
    : null;
  if (!charge) throw resourceMissing('charge', chargeParam, 'charge', 400);
  if (intentParam !== undefined && charge.paymentIntentId !== intentParam) {
    throw stateError(`Charge ${charge.id} does not belong to PaymentIntent ${intentParam}.`, undefined, 'charge');
  }
  return charge.id;
}

export async function createRefund(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const { row, eventIds, jobs } = await deps.prisma.$transaction(async (tx) => {
    const chargeId = await chargeToRefund(tx, ctx);
    const charge = (await lockCharge(tx, chargeId, caller.accountId))!;
    if (charge.status !== 'succeeded') {
      if (charge.paymentIntentId) throw noSuccessfulCharge(charge.paymentIntentId);
      throw stateError(`Charge ${charge.id} has failed and can't be refunded.`, 'charge_not_refundable', 'charge');
    }
    if (!charge.captured) {
      // A canceled PaymentIntent's authorization was released: there is nothing left to refund.
      const intent = charge.paymentIntentId ? await tx.paymentIntent.findUnique({ where: { id: charge.paymentIntentId }, select: { status: true } }) : null;
      if (intent?.status === 'canceled') throw noSuccessfulCharge(charge.paymentIntentId!);
      throw uncaptured(charge.id, charge.paymentIntentId);
    }
    // What a partial capture released is already in `amount_refunded` (as the public API counts it).
    const remaining = charge.amount - charge.amountRefunded;
    if (remaining <= 0) throw stateError(`Charge ${charge.id} has already been refunded.`, 'charge_already_refunded');
    const amount: number = params.amount ?? remaining;
    if (amount > remaining) {
      throw stateError(
        `Refund amount (${formatAmount(amount, charge.currency)}) is greater than unrefunded amount on charge (${formatAmount(remaining, charge.currency)})`,
        'amount_too_large',
        'amount',
      );
    }
    const nowMs = deps.clock.nowMs();
    const now = Math.floor(nowMs / 1000);
    // The card whose refunds fail: `succeeded` now, failed once due (pipeline.ts).
    const [method] = charge.paymentMethodId
      ? await tx.$queryRaw<{ outcome: string }[]>`SELECT outcome FROM payment_methods WHERE id = ${charge.paymentMethodId}`
      : [];
    const dueAt = method?.outcome === 'refund_fails' ? Math.ceil((nowMs + deps.config.refundFailureDelayMs) / 1000) : null;
    const row: RefundRow = {
      id: newId('re'),
      accountId: caller.accountId,
      created: now,
      amount,
      currency: charge.currency,
      chargeId: charge.id,
      paymentIntentId: charge.paymentIntentId,
      status: 'succeeded',
      reason: params.reason ?? null,
      failureReason: null,
      metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      dueAt,
      customerId: charge.customerId,
      paymentMethodId: charge.paymentMethodId,
    };
    const { customerId: _c, paymentMethodId: _p, metadata, ...columns } = row;
    await tx.refund.create({ data: { ...columns, metadata: metadata as Metadata }, select: { id: true } });
    await tx.charge.update({ where: { id: charge.id }, data: { amountRefunded: charge.amountRefunded + amount }, select: { id: true } });
    const options = requestEventOptions(ctx, now);
    const eventIds = [
      await emit(tx, 'refund.created', serializeRefund(row), options),
      await emit(tx, 'charge.refunded', await chargeObject(tx, charge.id, options.apiVersion), options),
    ];
    return { row, eventIds, jobs: dueAt === null ? [] : [settleJob(row.id, dueAt, nowMs)] };
  });
  await queueRefundJobs(deps.queues, jobs);
  await handOffEvents(deps.queues, eventIds);
  return serializeRefund(row);
}

export async function retrieveRefund(ctx: RequestContext) {
  const id = ctx.pathParams.refund;
  const refund = hasIdShape('re', id) ? await retrieveRefundObject(ctx, id) : null;
  if (!refund) throw resourceMissing(NAME, id);
  return refund;
}

/** The public object of one of the caller's refunds (for expansion), or null. */
export async function retrieveRefundObject(ctx: RequestContext, id: string) {
  const [row] = await ctx.deps.sql.query<RefundRow>(selectOwnedRefund(id, ctx.caller.accountId));
  return row ? serializeRefund(row) : null;
}

/** One of the caller's refunds, read for a change: `resource_missing` otherwise. */
async function ownedRefund(tx: Tx, ctx: RequestContext, id: string): Promise<RefundRow> {
  const row = hasIdShape('re', id) ? await loadRefund(tx, id, ctx.caller.accountId) : null;
  if (!row) throw resourceMissing(NAME, id);
  return row;
}

/** Locks the refund `id` (after its charge: see pipeline.ts) and reads it afresh. */
async function lockRefund(tx: Tx, ctx: RequestContext, id: string): Promise<RefundRow> {
  await tx.$queryRaw`SELECT id FROM refunds WHERE id = ${id} FOR UPDATE`;
  return (await loadRefund(tx, id, ctx.caller.accountId))!;
}

export async function updateRefund(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.refund;
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    await ownedRefund(tx, ctx, id);
    const before = await lockRefund(tx, ctx, id);
    const metadata = applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined);
    const row: RefundRow = { ...before, metadata };
    await tx.refund.update({ where: { id }, data: { metadata }, select: { id: true } });
    const eventIds = await emitRefundUpdated(tx, before, row, requestEventOptions(ctx, unixSeconds(deps.clock)));
    return { row, eventIds };
  });
  if (eventIds.length > 0) await handOffEvents(deps.queues, eventIds);
  return serializeRefund(row);
}

/** Only a refund still waiting (`pending`, `requires_action`) can be canceled. */
const CANCELABLE = new Set(['pending', 'requires_action']);

/** Ends a refund still waiting in one of `from` as `canceled` (its amount back on the charge), or the public 400 naming `verb`. */
async function endWaitingRefund(ctx: RequestContext, from: ReadonlySet<string>, verb: string, failureReason: string) {
  const { deps, caller } = ctx;
  const id = ctx.pathParams.refund;
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const found = await ownedRefund(tx, ctx, id);
    await lockCharge(tx, found.chargeId, caller.accountId);
    const before = await lockRefund(tx, ctx, id);
    if (!from.has(before.status)) {
      throw stateError(
        `You can't ${verb} refund ${id} because it has a status of ${before.status}. Only a refund with a status of ${[...from].join(' or ')} can be ${verb === 'cancel' ? 'canceled' : `${verb}d`}.`,
        undefined,
      );
    }
    return endRefund(tx, before, { status: 'canceled', failureReason }, requestEventOptions(ctx, unixSeconds(deps.clock)));
  });
  await handOffEvents(deps.queues, eventIds);
  return serializeRefund(row);
}

export const cancelRefund = (ctx: RequestContext) => endWaitingRefund(ctx, CANCELABLE, 'cancel', 'merchant_request');

/** A refund waiting on its customer (`requires_action`) past its time: canceled, its amount back on the charge. */
const EXPIRABLE = new Set(['requires_action']);

/**
 * `POST /v1/test_helpers/refunds/{refund}/expire`: what the customer's 45 days without an answer do
 * to a refund that waits on them (a `customer_balance` refund's bank details): the public API cancels
 * it and its funds return. Card refunds never wait, so only such a refund can be expired. The
 * public failure reasons name none for this, so it is `unknown`.
 */
export const expireRefund = (ctx: RequestContext) => endWaitingRefund(ctx, EXPIRABLE, 'expire', 'unknown');

export async function listRefunds(ctx: RequestContext) {
  const { params, caller, deps } = ctx;
  // A filter naming a charge or PaymentIntent the caller doesn't have is refused, not an empty list.
  if (params.charge !== undefined) {
    const found = hasIdShape('ch', params.charge) ? await deps.prisma.charge.findFirst({ where: { id: params.charge, accountId: caller.accountId }, select: { id: true } }) : null;
    if (!found) throw resourceMissing('charge', params.charge, 'charge', 400);
  }
  if (params.payment_intent !== undefined) {
    const found = hasIdShape('pi', params.payment_intent)
      ? await deps.prisma.paymentIntent.findFirst({ where: { id: params.payment_intent, accountId: caller.accountId }, select: { id: true } })
      : null;
    if (!found) throw resourceMissing('payment_intent', params.payment_intent, 'payment_intent', 400);
  }
  return paginateSql<RefundRow & { seq: bigint }>({
    params,
    url: '/v1/refunds',
    rows: listedRefunds(caller.accountId, { charge: params.charge, paymentIntent: params.payment_intent, created: rangeConditions('created', params.created) }),
    db: deps.sql,
    objectName: NAME,
    serialize: (row: RefundRow) => serializeRefund(row),
  });
}

/**
 * A charge's `refunds` (its ten newest, as a list), which the public API shows on a charge only
 * when expanded (`expand[]=refunds`): the charge object's expandable field.
 */
export const chargeRefundsField: ExpandableField = {
  type: REFUND_LIST_OBJECT,
  expand: async (_value, charge, ctx) =>
    paginateSql<RefundRow & { seq: bigint }>({
      params: { limit: 10 },
      url: `/v1/charges/${String(charge.id)}/refunds`,
      rows: listedRefunds(ctx.caller.accountId, { charge: String(charge.id), created: [] }),
      db: ctx.deps.sql,
      objectName: NAME,
      serialize: (row: RefundRow) => serializeRefund(row),
    }),
};
