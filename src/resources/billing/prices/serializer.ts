import type { Price } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const OBJECT = 'price';

export type PriceRow = Omit<Price, 'seq' | 'accountId'>;

export interface Tier {
  flat_amount: number | null;
  flat_amount_decimal: string | null;
  unit_amount: number | null;
  unit_amount_decimal: string | null;
  up_to: number | null;
}

/** `tiers` is shown only when named in `expand[]`, as in the public API; the object carries it out of sight. */
const TIERS = Symbol('tiers');

export function serializePrice(row: PriceRow) {
  const out = {
    id: row.id,
    object: OBJECT,
    active: row.active,
    billing_scheme: row.billingScheme,
    created: row.created,
    currency: row.currency,
    custom_unit_amount: row.customUnitAmount as { maximum: number | null; minimum: number | null; preset: number | null } | null,
    livemode: false,
    lookup_key: row.lookupKey,
    metadata: row.metadata as Metadata,
    nickname: row.nickname,
    product: row.productId as string | Record<string, unknown>,
    recurring: row.recurring as Record<string, unknown> | null,
    tax_behavior: row.taxBehavior,
    tiers_mode: row.tiersMode,
    transform_quantity: row.transformQuantity as { divide_by: number; round: string } | null,
    type: row.type,
    unit_amount: row.unitAmount === null ? null : Number(row.unitAmount),
    unit_amount_decimal: row.unitAmountDecimal,
  };
  Object.defineProperty(out, TIERS, { enumerable: false, value: (row.tiers as Tier[] | null) ?? null });
  return out;
}

export const expandable: ExpandableFields = {
  product: ref('product'),
  // Per-unit prices have no tiers: the expanded field is then absent, as the SDK types allow.
  tiers: {
    type: 'price.tiers',
    expand: async (_value, parent) => (parent as Record<symbol, unknown>)[TIERS] ?? undefined,
  },
};
