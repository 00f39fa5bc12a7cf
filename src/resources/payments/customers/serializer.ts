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
  const customer = {
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
  };
  // Only a discount has objects older versions show whole (its coupon).
  return row.discounts.length > 0 ? embed(customer, discounts) : customer;
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

/**
 * A list a customer shows only when expanded (`sources`; its `tax_ids`, in tax_ids/; billing's `subscriptions`):
 * its first ten, as the public API embeds them.
 */
export function customerList(customerId: string, what: string, items: readonly unknown[]) {
  return { object: 'list', data: items.slice(0, 10), has_more: items.length > 10, total_count: items.length, url: `/v1/customers/${customerId}/${what}` };
}

/** What a source expands to; Sandbank keeps no sources (cards are PaymentMethods). */
const SOURCE_OBJECT = 'customer_source';

export const expandable: ExpandableFields = {
  // Already an object: expansion only goes through it.
  invoice_settings: { type: INVOICE_SETTINGS_OBJECT, expand: async (value) => value },
  // No sources here: `default_source` is null, `sources` an empty list.
  default_source: { type: SOURCE_OBJECT, expand: async (value) => value },
  sources: { type: SOURCE_OBJECT, list: true, expand: async (_value, customer) => customerList(String(customer.id), 'sources', []) },
  test_clock: ref('test_helpers.test_clock'),
};

export const invoiceSettingsExpandable: ExpandableFields = {
  default_payment_method: ref('payment_method'),
};
