import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { currencyOf } from '../../../lib/currencies';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { lockName } from '../../../lib/prisma';
import { ApiError, invalidRequest, parameterMissing, resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { emit, previousAttributes, requestEventOptions, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { findCoupon, mergeCurrencyOptions } from '../coupons/service';
import { currencyOptionsOf, isCouponValid } from '../coupons/serializer';
import { isPromotionCodeActive, serializePromotionCode, type PromotionCodeRow } from './serializer';

const NAME = 'promotion code';

/** Generated codes are 8 upper-case letters and digits, as the public API's (`A1H1Q1MG`). */
const CODE_LENGTH = 8;

const WITH_COUPON = { coupon: true } as const;

/**
 * What a code can be (the schema's pattern). Prisma compares in any letter case with ILIKE, so
 * a code must hold none of its pattern characters (`%`, `_`, `\`) to be matched whole.
 */
const CODE_SHAPE = /^[a-zA-Z0-9-]+$/;

/** Codes equal to `code` in any letter case. */
const sameCode = (code: string): Prisma.StringFilter => (CODE_SHAPE.test(code) ? { equals: code, mode: 'insensitive' } : { in: [] });

/**
 * The coupon a create names: `promotion[coupon]` (an older version's `coupon` arrives as that,
 * requestVersions.ts).
 */
function couponParamOf(params: Record<string, any>): string {
  if (params.promotion === undefined) throw parameterMissing('promotion');
  if (params.promotion.coupon === undefined) throw parameterMissing('promotion[coupon]');
  return params.promotion.coupon;
}

/** The restriction columns of a new code; a minimum amount comes with its currency. */
function restrictionsOf(restrictions: Record<string, any> = {}) {
  const amount: number | undefined = restrictions.minimum_amount;
  if (amount !== undefined && restrictions.minimum_amount_currency === undefined) throw parameterMissing('restrictions[minimum_amount_currency]');
  if (amount === undefined && restrictions.minimum_amount_currency !== undefined) throw parameterMissing('restrictions[minimum_amount]');
  if (amount === undefined && restrictions.currency_options !== undefined) throw parameterMissing('restrictions[minimum_amount]');
  const currency = amount === undefined ? null : currencyOf(restrictions.minimum_amount_currency, 'restrictions[minimum_amount_currency]');
  return {
    firstTimeTransaction: restrictions.first_time_transaction ?? false,
    minimumAmount: amount === undefined ? null : BigInt(amount),
    minimumAmountCurrency: currency,
    currencyOptions: currency === null ? {} : mergeCurrencyOptions(restrictions.currency_options, 'minimum_amount', currency, 'restrictions[currency_options]'),
  };
}

/** The codes that are active at `now` (as `isPromotionCodeActive` says), for a Prisma filter. */
function activeWhere(tx: Tx, now: number): Prisma.PromotionCodeWhereInput {
  const notUsedUp = (fields: { maxRedemptions: any }) => ({ OR: [{ maxRedemptions: null }, { timesRedeemed: { lt: fields.maxRedemptions } }] });
  return {
    active: true,
    AND: [
      { OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
      notUsedUp(tx.promotionCode.fields),
      { coupon: { deleted: false, AND: [{ OR: [{ redeemBy: null }, { redeemBy: { gt: now } }] }, notUsedUp(tx.coupon.fields)] } },
    ],
  };
}

/**
 * `wanted` (or a generated code) for a code that is to be active: refused while another active
 * code of the account has it, whatever the letter case. `param` names the parameter in errors.
 */
async function claimCode(ctx: RequestContext, tx: Tx, wanted: string | undefined, now: number, param: string, self?: string): Promise<string> {
  for (;;) {
    const code = wanted ?? randomBase62(CODE_LENGTH).toUpperCase();
    // Only active codes must differ, which no index can say: a lock per code does.
    await lockName(tx, `promotion_code:${ctx.caller.accountId}:${code.toLowerCase()}`);
    const holder = await tx.promotionCode.findFirst({
      where: { accountId: ctx.caller.accountId, code: sameCode(code), ...(self ? { id: { not: self } } : {}), ...activeWhere(tx, now) },
      select: { id: true },
    });
    if (!holder) return code;
    if (wanted !== undefined) throw invalidRequest(`An active promotion code with the code \`${code}\` already exists.`, 'resource_already_exists', param);
  }
}

async function findCustomerId(ctx: RequestContext, tx: Tx, id: string): Promise<string> {
  const row = hasIdShape('cus', id) ? await tx.customer.findUnique({ where: { id, accountId: ctx.caller.accountId }, select: { deleted: true } }) : null;
  if (!row || row.deleted) throw resourceMissing('customer', id, 'customer', 400);
  return id;
}

export async function createPromotionCode(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  const couponId = couponParamOf(params);
  const restrictions = restrictionsOf(params.restrictions);
  if (params.expires_at !== undefined && params.expires_at <= now) throw invalidRequest('Invalid expires_at: must be a time in the future.', 'parameter_invalid', 'expires_at');
  const { row, eventId } = await deps.prisma.$transaction(async (tx) => {
    const coupon = await findCoupon(ctx, couponId, 'promotion[coupon]', tx);
    if (!isCouponValid(coupon, now)) throw invalidRequest(`The coupon \`${coupon.id}\` is no longer valid.`, 'coupon_expired', 'promotion[coupon]');
    if (params.expires_at !== undefined && coupon.redeemBy !== null && params.expires_at > coupon.redeemBy) {
      throw invalidRequest(`Invalid expires_at: it can't be after the coupon's redeem_by (${coupon.redeemBy}).`, 'parameter_invalid', 'expires_at');
    }
    if (params.max_redemptions !== undefined && coupon.maxRedemptions !== null && params.max_redemptions > coupon.maxRedemptions) {
      throw invalidRequest(`Invalid max_redemptions: it can't be more than the coupon's (${coupon.maxRedemptions}).`, 'parameter_invalid', 'max_redemptions');
    }
    const active: boolean = params.active ?? true;
    const row = await tx.promotionCode.create({
      data: {
        id: newId('promo'),
        accountId: ctx.caller.accountId,
        couponSeq: coupon.seq,
        created: now,
        // An inactive code holds no code, so it needs no claim.
        code: active ? await claimCode(ctx, tx, params.code, now, 'code') : (params.code ?? randomBase62(CODE_LENGTH).toUpperCase()),
        active,
        customerId: params.customer === undefined ? null : await findCustomerId(ctx, tx, params.customer),
        expiresAt: params.expires_at ?? null,
        maxRedemptions: params.max_redemptions ?? null,
        ...restrictions,
        metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      },
      include: WITH_COUPON,
    });
    return { row, eventId: await emit(tx, 'promotion_code.created', serializePromotionCode(row, now), requestEventOptions(ctx, now)) };
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializePromotionCode(row, now);
}

async function findPromotionCode(ctx: RequestContext, id: string, tx: Tx = ctx.deps.prisma): Promise<PromotionCodeRow> {
  if (!hasIdShape('promo', id)) throw resourceMissing(NAME, id);
  const row = await tx.promotionCode.findUnique({ where: { id, accountId: ctx.caller.accountId }, include: WITH_COUPON });
  if (!row) throw resourceMissing(NAME, id);
  return row;
}

export async function retrievePromotionCode(ctx: RequestContext) {
  return serializePromotionCode(await findPromotionCode(ctx, ctx.pathParams.promotion_code), unixSeconds(ctx.deps.clock));
}

/** The code with its restrictions' currency options shown, so `previous_attributes` can say how they changed. */
function comparable(row: PromotionCodeRow, now: number) {
  const code = serializePromotionCode(row, now);
  return { ...code, restrictions: { ...code.restrictions, currency_options: currencyOptionsOf(row.currencyOptions, 'minimum_amount') } };
}

export async function updatePromotionCode(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.promotion_code;
  if (!hasIdShape('promo', id)) throw resourceMissing(NAME, id);
  const now = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM promotion_codes WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE`;
    if (locked.length === 0) throw resourceMissing(NAME, id);
    const current = await findPromotionCode(ctx, id, tx);
    if (params.active === true && !isPromotionCodeActive(current, now)) {
      if (!isPromotionCodeActive({ ...current, active: true }, now)) {
        throw new ApiError({
          status: 400,
          param: 'active',
          kind: 'state',
          message: 'A promotion code can only be reactivated when its coupon is still valid and the code has neither expired nor been used up.',
        });
      }
      await claimCode(ctx, tx, current.code, now, 'active', id);
    }
    const options: Record<string, Record<string, number>> | undefined = params.restrictions?.currency_options;
    if (options !== undefined && current.minimumAmountCurrency === null) throw parameterMissing('restrictions[minimum_amount]');
    const given: Partial<PromotionCodeRow> = {
      active: params.active,
      metadata: params.metadata === undefined ? undefined : applyMetadata(current.metadata as Metadata, params.metadata),
      currencyOptions:
        options === undefined ? undefined : mergeCurrencyOptions(options, 'minimum_amount', current.minimumAmountCurrency!, 'restrictions[currency_options]', current.currencyOptions),
    };
    const fields = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<PromotionCodeRow>;
    const changed = previousAttributes(comparable(current, now), comparable({ ...current, ...fields }, now));
    // Switching off a code that has expired shows nothing new, yet it must stay off if it could come back.
    const stored = Object.entries(fields).some(([k, v]) => JSON.stringify(v) !== JSON.stringify(current[k as keyof PromotionCodeRow]));
    if (!stored) return { code: serializePromotionCode(current, now), eventId: undefined };
    const row = await tx.promotionCode.update({ where: { id }, data: fields as Prisma.PromotionCodeUpdateInput, include: WITH_COUPON });
    const code = serializePromotionCode(row, now);
    const noticed = Object.keys(changed).length > 0;
    const eventId = noticed ? await emit(tx, 'promotion_code.updated', code, { ...requestEventOptions(ctx, now), previousAttributes: changed }) : undefined;
    return { code, eventId };
  });
  if (result.eventId) await handOffEvents(deps.queues, [result.eventId]);
  return result.code;
}

export async function listPromotionCodes(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  const codes = deps.prisma.promotionCode;
  const active = activeWhere(deps.prisma, now);
  const where: Prisma.PromotionCodeWhereInput = {
    accountId: ctx.caller.accountId,
    created: rangeWhere(params.created),
    customerId: params.customer,
    ...(params.code !== undefined ? { code: sameCode(params.code) } : {}),
    // Every coupon that had this id: a deleted one's codes included.
    ...(params.coupon !== undefined ? { coupon: { id: params.coupon } } : {}),
    ...(params.active === undefined ? {} : params.active ? active : { NOT: active }),
  };
  return paginate<PromotionCodeRow & { seq: bigint }>({
    params,
    url: '/v1/promotion_codes',
    where: where as Record<string, unknown>,
    // Every code is shown with its coupon.
    model: { findUnique: (args: any) => codes.findUnique(args), findMany: (args: any) => codes.findMany({ ...args, include: WITH_COUPON }) } as any,
    objectName: NAME,
    serialize: (row) => serializePromotionCode(row, now),
  });
}
