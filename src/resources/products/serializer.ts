import type { Product } from '../../generated/prisma/client';
import type { ExpandableFields } from '../../kernel/expand';
import type { Metadata } from '../../kernel/metadata';
import type { RequestContext } from '../../kernel/route';
// The two serializers refer to each other only inside functions (the import cycle is resolved by then).
import { expandPrice } from '../prices/serializer';

export const OBJECT = 'product';

export type ProductRow = Omit<Product, 'seq' | 'accountId'>;

export function serializeProduct(row: ProductRow) {
  return {
    id: row.id,
    object: OBJECT,
    active: row.active,
    created: row.created,
    default_price: row.defaultPrice,
    description: row.description,
    images: row.images,
    livemode: false,
    marketing_features: row.marketingFeatures as { name: string }[],
    metadata: row.metadata as Metadata,
    name: row.name,
    package_dimensions: row.packageDimensions as Record<string, number> | null,
    shippable: row.shippable,
    statement_descriptor: row.statementDescriptor,
    tax_code: row.taxCode,
    // Stripe Tax's computed details; nothing here computes tax.
    tax_details: null,
    // Products made through the Prices API are services; goods belong to the legacy Orders API.
    type: 'service' as const,
    unit_label: row.unitLabel,
    updated: row.updated,
    url: row.url,
  };
}

export const serializeDeletedProduct = (id: string) => ({ id, object: OBJECT, deleted: true as const });

/** One of the caller's products as its public object, or the id as it was (expand of `price.product`). */
export async function expandProduct(value: unknown, _parent: Record<string, unknown>, ctx: RequestContext): Promise<unknown> {
  if (typeof value !== 'string') return value ?? null;
  const row = await ctx.deps.prisma.product.findUnique({ where: { id: value, accountId: ctx.caller.accountId } });
  return row ? serializeProduct(row) : value;
}

export const expandable: ExpandableFields = {
  default_price: { type: 'price', expand: (value, parent, ctx) => expandPrice(value, parent, ctx) },
};
