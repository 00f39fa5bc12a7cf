import type { PromotionCode } from '../../../generated/prisma/client';
import { pathField, ref, withheldField, withhold, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { embed, embeddedOf } from '../../../kernel/versions';
import { OBJECT as COUPON_OBJECT, currencyOptionsOf, isCouponValid, serializeCoupon, type CouponRow } from '../coupons/serializer';

export const OBJECT = 'promotion_code';
/** The types of `promotion` and `restrictions`, so expand paths can go through them. */
const PROMOTION_OBJECT = `${OBJECT}.promotion`;
const RESTRICTIONS_OBJECT = `${OBJECT}.restrictions`;

export type PromotionCodeRow = Omit<PromotionCode, 'seq' | 'accountId' | 'couponSeq'> & { coupon: CouponRow };

/** Active as the public object says: switched on, its coupon valid, not expired, not used up. */
export const isPromotionCodeActive = (row: PromotionCodeRow, now: number): boolean =>
  row.active &&
  isCouponValid(row.coupon, now) &&
  (row.expiresAt === null || now < row.expiresAt) &&
  (row.maxRedemptions === null || row.timesRedeemed < row.maxRedemptions);

/**
 * The public object at `now`. `promotion.coupon` is the coupon's id, and the coupon itself rides
 * along (`embed`): expanding `promotion.coupon` shows it, and versions before 2025-09-30.clover
 * show it whole as `coupon`. `restrictions.currency_options` appears only when expanded.
 */
export function serializePromotionCode(row: PromotionCodeRow, now: number) {
  const coupon = serializeCoupon(row.coupon, now);
  const embedded = { [coupon.id]: coupon };
  const restrictions = {
    first_time_transaction: row.firstTimeTransaction,
    minimum_amount: row.minimumAmount === null ? null : Number(row.minimumAmount),
    minimum_amount_currency: row.minimumAmountCurrency,
  };
  const options = currencyOptionsOf(row.currencyOptions, 'minimum_amount');
  return embed(
    {
      id: row.id,
      object: OBJECT,
      active: isPromotionCodeActive(row, now),
      code: row.code,
      created: row.created,
      customer: row.customerId as string | Record<string, unknown> | null,
      // Customers that are Accounts (v2) don't exist here.
      customer_account: null,
      expires_at: row.expiresAt,
      livemode: false,
      max_redemptions: row.maxRedemptions,
      metadata: row.metadata as Metadata,
      promotion: embed({ coupon: coupon.id as string | Record<string, unknown>, type: 'coupon' as const }, embedded),
      restrictions: withhold(restrictions, { currency_options: Object.keys(options).length > 0 ? options : undefined }),
      times_redeemed: row.timesRedeemed,
    },
    embedded,
  );
}

export const expandable: Readonly<Record<string, ExpandableFields>> = {
  [OBJECT]: {
    customer: ref('customer'),
    promotion: pathField(PROMOTION_OBJECT),
    restrictions: pathField(RESTRICTIONS_OBJECT),
  },
  // The coupon is already at hand: the one this code was made for, deleted or not.
  [PROMOTION_OBJECT]: {
    coupon: { type: COUPON_OBJECT, expand: async (value, parent) => (typeof value === 'string' ? embeddedOf(parent)?.[value] : undefined) ?? value },
  },
  [RESTRICTIONS_OBJECT]: { currency_options: withheldField(`${RESTRICTIONS_OBJECT}.currency_options`) },
};
