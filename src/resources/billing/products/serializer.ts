import type { Product } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

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

export const expandable: ExpandableFields = {
  default_price: ref('price'),
};
