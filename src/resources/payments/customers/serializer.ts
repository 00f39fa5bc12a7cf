import type { Customer } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { embed, type Embedded } from '../../../kernel/versions';

export const OBJECT = 'customer';
/** The type of `invoice_settings`, so expand paths can go through it. */
export const INVOICE_SETTINGS_OBJECT = 'customer.invoice_settings';

export type CustomerRow = Pick<
  Customer,
  | 'id'
  | 'created'
  | 'email'
  | 'name'
  | 'phone'
  | 'description'
  | 'address'
  | 'shipping'
  | 'metadata'
  | 'preferredLocales'
  | 'taxExempt'
  | 'defaultPaymentMethod'
  | 'testClockId'
  | 'balance'
  | 'currency'
> & {
  /** Its discount, when it has one (a one-entry list, as subscriptions store theirs). */
  discounts: CustomerDiscount[];
};

/** A customer's discount as stored: a coupon redeemed (billing makes it, see `CustomerDiscounts`). */
export interface CustomerDiscount {
  id: string;
  coupon: string;
  /** The coupon's row key (ids can be taken again once a coupon is deleted). */
  coupon_seq: string;
  promotion_code: string | null;
  start: number;
  end: number | null;
}

/**
 * The public object; fields of areas not built here (sources, cash balances) have their empty values.
 * `discounts`: the `discount` objects (and their coupons, which older versions show whole) by id,
 * which billing gives (`CustomerDiscounts.objects`).
 */
export function serializeCustomer(row: CustomerRow, discounts: Embedded = {}) {
  const discount = row.discounts.length > 0 ? ((discounts[row.discounts[0].id] as Record<string, unknown> | undefined) ?? null) : null;
  return embed({
    id: row.id,
    object: OBJECT,
    address: row.address as Record<string, string | null> | null,
    // A BIGINT: a bigint from Prisma, a string from the pool.
    balance: Number(row.balance),
    created: row.created,
    currency: row.currency,
    default_source: null,
    delinquent: false,
    description: row.description,
    discount,
    email: row.email,
    invoice_prefix: row.id.slice(4, 12).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: row.defaultPaymentMethod, footer: null, rendering_options: null },
    livemode: false,
    metadata: row.metadata as Metadata,
    name: row.name,
    next_invoice_sequence: 1,
    phone: row.phone,
    preferred_locales: row.preferredLocales,
    shipping: row.shipping as Record<string, unknown> | null,
    tax_exempt: row.taxExempt,
    test_clock: row.testClockId,
  }, discounts);
}

export const serializeDeletedCustomer = (id: string) => ({ id, object: OBJECT, deleted: true as const });

/**
 * A discount as its deletion answers it (customers' and subscriptions'): the discount without
 * `end`, `deleted: true`, with what `embedded` holds beside it (its coupon, for older versions).
 */
export function serializeDeletedDiscount(discount: Record<string, unknown>, embedded: Embedded): Record<string, unknown> {
  const { end: _end, ...rest } = discount;
  return embed({ ...rest, deleted: true }, embedded);
}

export const expandable: ExpandableFields = {
  // Already an object: expansion only goes through it.
  invoice_settings: { type: INVOICE_SETTINGS_OBJECT, expand: async (value) => value },
};

export const invoiceSettingsExpandable: ExpandableFields = {
  default_payment_method: ref('payment_method'),
};
