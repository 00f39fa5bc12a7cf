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

/** A discount as subscriptions store it (a coupon redeemed, maybe through a promotion code). */
export interface DiscountRecord {
  id: string;
  /** The coupon's row key (ids can be taken again once a coupon is deleted). */
  coupon_seq: string;
  promotion_code: string | null;
  start: number;
  end: number | null;
}

/**
 * The public `discount` object, which Sandbank shows nowhere but inside older versions' `discount`
 * of subscriptions and invoices (see billing/versions); with its coupon beside it, by id.
 */
export function discountObjects(
  record: DiscountRecord,
  coupon: CouponRow,
  owner: { customer: string; subscription: string | null; subscriptionItem: string | null },
  now: number,
): Record<string, unknown> {
  const discount = {
    id: record.id,
    object: 'discount',
    checkout_session: null,
    customer: owner.customer,
    customer_account: null,
    end: record.end,
    invoice: null,
    invoice_item: null,
    promotion_code: record.promotion_code,
    source: { coupon: coupon.id, type: 'coupon' },
    start: record.start,
    subscription: owner.subscription,
    subscription_item: owner.subscriptionItem,
  };
  return { [record.id]: discount, [coupon.id]: serializeCoupon(coupon, now) };
}
