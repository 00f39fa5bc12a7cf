import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { currencyOf } from '../../../lib/currencies';
import { hasIdShape, randomBase62 } from '../../../lib/ids';
import { lockName } from '../../../lib/prisma';
import { invalidRequest, parameterMissing, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { emit, previousAttributes, requestEventOptions, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { currencyOptionsOf, serializeCoupon, serializeDeletedCoupon, type CouponRow } from './serializer';
import { isProductId } from '../products/serializer';

const NAME = 'coupon';

/** Generated ids are 8 random letters and digits, as the public API's (`jMT0WJUD`). */
const ID_LENGTH = 8;

/** The public API takes `redeem_by` at most five years ahead. */
const MAX_REDEEM_AHEAD_SECONDS = Math.round(5 * 365.25 * 24 * 3600);

export type StoredCoupon = CouponRow & { seq: bigint };

/**
 * Whether `id` could name a coupon. Ids are the caller's own strings, so there is no prefix to
 * check; a NUL (which PostgreSQL text can't hold) or an id longer than any we take can't exist.
 */
const canBeCouponId = (id: string): boolean => id.length > 0 && id.length <= 5000 && !id.includes('\u0000');

/** The caller's live coupon `id`: 404 on the path's id, or (with `param`) 400 on that body parameter. */
export async function findCoupon(ctx: RequestContext, id: string, param?: string, tx: Tx = ctx.deps.prisma): Promise<StoredCoupon> {
  const missing = () => (param === undefined ? resourceMissing(NAME, id) : resourceMissing(NAME, id, param, 400));
  if (!canBeCouponId(id)) throw missing();
  const row = await tx.coupon.findFirst({ where: { accountId: ctx.caller.accountId, id, deleted: false } });
  if (!row) throw missing();
  return row;
}

/** The caller's live coupon `id`, locked until the transaction ends (concurrent edits wait). */
async function lockCoupon(ctx: RequestContext, tx: Tx, id: string): Promise<StoredCoupon> {
  if (!canBeCouponId(id)) throw resourceMissing(NAME, id);
  const locked = await tx.$queryRaw<{ seq: bigint }[]>`
    SELECT seq FROM coupons WHERE account_id = ${ctx.caller.accountId} AND id = ${id} AND NOT deleted FOR UPDATE`;
  if (locked.length === 0) throw resourceMissing(NAME, id);
  return tx.coupon.findUniqueOrThrow({ where: { seq: locked[0].seq } });
}

/**
 * A `currency_options` parameter (`{eur: {amount_off: 900}}`, `field` naming the amount) merged
 * into stored options (`{eur: 900}`). `base` is the currency the object's own amount is in: it
 * has that amount already, so it can't be an option too. `param` names the parameter in errors.
 */
export function mergeCurrencyOptions(
  options: Record<string, Record<string, number>> | undefined,
  field: string,
  base: string,
  param: string,
  stored: unknown = {},
): Record<string, number> {
  const out: Record<string, number> = { ...(stored as Record<string, number>) };
  for (const [key, option] of Object.entries(options ?? {})) {
    const currency = currencyOf(key, `${param}[${key}]`);
    if (currency === base) {
      throw invalidRequest(`Invalid ${param}[${key}]: ${currency} is the currency of the object's own amount, so it can't be one of its currency options.`, 'parameter_invalid', `${param}[${key}]`);
    }
    out[currency] = option[field];
  }
  return out;
}

/** `percent_off` xor `amount_off` (with `currency`, and `currency_options` for other currencies). */
function discountOf(params: Record<string, any>) {
  const percent: number | undefined = params.percent_off;
  const amount: number | undefined = params.amount_off;
  if (percent !== undefined && amount !== undefined) throw parametersExclusive('amount_off', 'percent_off');
  if (percent !== undefined) {
    if (percent <= 0) throw invalidRequest('Invalid percent_off: must be greater than 0 and at most 100.', 'parameter_invalid', 'percent_off');
    if (Number(percent.toFixed(2)) !== percent) throw invalidRequest(`Invalid percent_off: ${percent} has more than 2 decimal places.`, 'parameter_invalid', 'percent_off');
    for (const name of ['currency', 'currency_options']) {
      if (params[name] !== undefined) throw invalidRequest(`\`${name}\` can only be set on a coupon with \`amount_off\`.`, 'parameter_invalid', name);
    }
    return { percentOff: percent, amountOff: null, currency: null, currencyOptions: {} };
  }
  if (amount === undefined) throw invalidRequest('A coupon needs `percent_off`, or `amount_off` with `currency`.', 'parameter_missing', 'percent_off');
  if (params.currency === undefined) throw parameterMissing('currency');
  const currency = currencyOf(params.currency);
  return { percentOff: null, amountOff: BigInt(amount), currency, currencyOptions: mergeCurrencyOptions(params.currency_options, 'amount_off', currency, 'currency_options') };
}

/** `duration` (default `once`); `duration_in_months` goes with `repeating` and only with it. */
function durationOf(params: Record<string, any>) {
  const duration: string = params.duration ?? 'once';
  if (duration === 'repeating') {
    if (params.duration_in_months === undefined) throw parameterMissing('duration_in_months');
    return { duration, durationInMonths: params.duration_in_months as number };
  }
  if (params.duration_in_months !== undefined) {
    throw invalidRequest('`duration_in_months` can only be set when `duration` is `repeating`.', 'parameter_invalid', 'duration_in_months');
  }
  return { duration, durationInMonths: null };
}

function checkRedeemBy(redeemBy: number | undefined, now: number): void {
  if (redeemBy === undefined) return;
  if (redeemBy <= now) throw invalidRequest('Invalid redeem_by: must be a time in the future.', 'parameter_invalid', 'redeem_by');
  if (redeemBy > now + MAX_REDEEM_AHEAD_SECONDS) throw invalidRequest('Invalid redeem_by: can be at most five years in the future.', 'parameter_invalid', 'redeem_by');
}

/** `applies_to[products]`: products of the caller's account, each once. */
async function productsOf(ctx: RequestContext, tx: Tx, ids: string[] | undefined): Promise<string[]> {
  if (ids === undefined) return [];
  const wanted = ids.filter((id) => isProductId(id));
  const found = new Set((await tx.product.findMany({ where: { accountId: ctx.caller.accountId, id: { in: wanted } }, select: { id: true } })).map((p) => p.id));
  const missing = ids.findIndex((id) => !found.has(id));
  if (missing !== -1) throw resourceMissing('product', ids[missing], `applies_to[products][${missing}]`, 400);
  return [...new Set(ids)];
}

/** `wanted` (or a generated id) for a new coupon: refused while a live coupon of the account has it. */
async function claimCouponId(ctx: RequestContext, tx: Tx, wanted: string | undefined): Promise<string> {
  for (;;) {
    const id = wanted ?? randomBase62(ID_LENGTH);
    // Deleted coupons keep their rows, so no index can say "one live coupon per id": a lock does.
    await lockName(tx, `coupon:${ctx.caller.accountId}:${id}`);
    if ((await tx.coupon.count({ where: { accountId: ctx.caller.accountId, id, deleted: false } })) === 0) return id;
    if (wanted !== undefined) throw invalidRequest('Coupon already exists.', 'resource_already_exists', 'id');
  }
}

export async function createCoupon(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  const discount = discountOf(params);
  const duration = durationOf(params);
  checkRedeemBy(params.redeem_by, now);
  const { row, eventId } = await deps.prisma.$transaction(async (tx) => {
    const appliesToProducts = await productsOf(ctx, tx, params.applies_to?.products);
    const row = await tx.coupon.create({
      data: {
        id: await claimCouponId(ctx, tx, params.id || undefined),
        accountId: ctx.caller.accountId,
        created: now,
        name: params.name ?? null,
        ...discount,
        ...duration,
        maxRedemptions: params.max_redemptions ?? null,
        redeemBy: params.redeem_by ?? null,
        appliesToProducts,
        metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      },
    });
    return { row, eventId: await emit(tx, 'coupon.created', serializeCoupon(row, now), requestEventOptions(ctx, now)) };
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeCoupon(row, now);
}

export async function retrieveCoupon(ctx: RequestContext) {
  return serializeCoupon(await findCoupon(ctx, ctx.pathParams.coupon), unixSeconds(ctx.deps.clock));
}

/** The coupon with its currency options shown, so `previous_attributes` can say how they changed. */
const comparable = (row: CouponRow, now: number) => ({ ...serializeCoupon(row, now), currency_options: currencyOptionsOf(row.currencyOptions, 'amount_off') });

export async function updateCoupon(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const current = await lockCoupon(ctx, tx, ctx.pathParams.coupon);
    if (params.currency_options !== undefined && current.currency === null) {
      throw invalidRequest('`currency_options` can only be set on a coupon with `amount_off`.', 'parameter_invalid', 'currency_options');
    }
    const given: Partial<CouponRow> = {
      name: params.name,
      metadata: params.metadata === undefined ? undefined : applyMetadata(current.metadata as Metadata, params.metadata),
      currencyOptions:
        params.currency_options === undefined ? undefined : mergeCurrencyOptions(params.currency_options, 'amount_off', current.currency!, 'currency_options', current.currencyOptions),
    };
    const fields = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<CouponRow>;
    const changed = previousAttributes(comparable(current, now), comparable({ ...current, ...fields }, now));
    if (Object.keys(changed).length === 0) return { coupon: serializeCoupon(current, now), eventId: undefined };
    const coupon = serializeCoupon(await tx.coupon.update({ where: { seq: current.seq }, data: fields as Prisma.CouponUpdateInput }), now);
    const eventId = await emit(tx, 'coupon.updated', coupon, { ...requestEventOptions(ctx, now), previousAttributes: changed });
    return { coupon, eventId };
  });
  if (result.eventId) await handOffEvents(deps.queues, [result.eventId]);
  return result.coupon;
}

/** The coupon stays (its promotion codes still show it, no longer valid); its id is free again. */
export async function deleteCoupon(ctx: RequestContext) {
  const { deps } = ctx;
  const id = ctx.pathParams.coupon;
  const now = unixSeconds(deps.clock);
  const eventId = await deps.prisma.$transaction(async (tx) => {
    const current = await lockCoupon(ctx, tx, id);
    const row = await tx.coupon.update({ where: { seq: current.seq }, data: { deleted: true } });
    return emit(tx, 'coupon.deleted', serializeCoupon(row, now), requestEventOptions(ctx, now));
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeDeletedCoupon(id);
}

export async function listCoupons(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  const coupons = deps.prisma.coupon;
  return paginate<StoredCoupon>({
    params,
    url: '/v1/coupons',
    where: { accountId: ctx.caller.accountId, deleted: false, created: rangeWhere(params.created) },
    // An id names one live coupon, not one row, so the cursor's row is found with findFirst.
    model: { findUnique: (args: any) => coupons.findFirst(args), findMany: (args: any) => coupons.findMany(args) } as any,
    objectName: NAME,
    serialize: (row) => serializeCoupon(row, now),
  });
}
