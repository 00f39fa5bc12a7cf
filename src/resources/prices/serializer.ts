import type { Price } from '../../generated/prisma/client';
import type { ExpandableFields } from '../../kernel/expand';
import type { Metadata } from '../../kernel/metadata';
import type { RequestContext } from '../../kernel/route';
import { hasIdShape } from '../../lib/ids';
// The two serializers refer to each other only inside functions (the import cycle is resolved by then).
import { expandProduct } from '../products/serializer';

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

/** One of the caller's prices as its public object, or the id as it was (expand of `product.default_price`). */
export async function expandPrice(value: unknown, _parent: Record<string, unknown>, ctx: RequestContext): Promise<unknown> {
  if (typeof value !== 'string' || !hasIdShape('price', value)) return value ?? null;
  const row = await ctx.deps.prisma.price.findUnique({ where: { id: value, accountId: ctx.caller.accountId } });
  return row ? serializePrice(row) : value;
}

export const expandable: ExpandableFields = {
  product: { type: 'product', expand: (value, parent, ctx) => expandProduct(value, parent, ctx) },
  // Per-unit prices have no tiers: the expanded field is then absent, as the SDK types allow.
  tiers: {
    type: 'price.tiers',
    expand: async (_value, parent) => (parent as Record<symbol, unknown>)[TIERS] ?? undefined,
  },
};
