import type { Coupon } from '../../../generated/prisma/client';
import { withheldField, withhold, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const OBJECT = 'coupon';

export type CouponRow = Omit<Coupon, 'seq' | 'accountId'>;

/** Whether a coupon can still be redeemed at `now`: not deleted, not past `redeem_by`, not used up. */
export const isCouponValid = (row: CouponRow, now: number): boolean =>
  !row.deleted && (row.redeemBy === null || now < row.redeemBy) && (row.maxRedemptions === null || row.timesRedeemed < row.maxRedemptions);

/** `{eur: 900}` as the public API shows currency options: `{eur: {[field]: 900}}`. */
export function currencyOptionsOf(stored: unknown, field: string): Record<string, Record<string, number>> {
  return Object.fromEntries(Object.entries(stored as Record<string, number>).map(([currency, amount]) => [currency, { [field]: amount }]));
}

/** The public object at `now` (`valid` depends on it). `applies_to` and `currency_options` appear only when expanded. */
export function serializeCoupon(row: CouponRow, now: number) {
  const amountOff = row.amountOff === null ? null : Number(row.amountOff);
  const out = {
    id: row.id,
    object: OBJECT,
    amount_off: amountOff,
    created: row.created,
    currency: row.currency,
    duration: row.duration,
    duration_in_months: row.durationInMonths,
    livemode: false,
    max_redemptions: row.maxRedemptions,
    metadata: row.metadata as Metadata,
    name: row.name,
    percent_off: row.percentOff,
    redeem_by: row.redeemBy,
    times_redeemed: row.timesRedeemed,
    valid: isCouponValid(row, now),
  };
  // Absent when there is nothing to show (the SDK types make both optional, not nullable).
  return withhold(out, {
    applies_to: row.appliesToProducts.length > 0 ? { products: row.appliesToProducts } : undefined,
    currency_options:
      row.currency === null ? undefined : { [row.currency]: { amount_off: amountOff! }, ...currencyOptionsOf(row.currencyOptions, 'amount_off') },
  });
}

export const serializeDeletedCoupon = (id: string) => ({ id, object: OBJECT, deleted: true as const });

export const expandable: ExpandableFields = {
  applies_to: withheldField(`${OBJECT}.applies_to`),
  currency_options: withheldField(`${OBJECT}.currency_options`),
};
