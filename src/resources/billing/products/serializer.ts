import type { Product } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const OBJECT = 'product';

/**
 * What a product id can be: the generated `prod_…` or one its create named, of letters, digits and
 * `_ - . :` (up to 255). Anything else names no product, without a lookup.
 */
export const PRODUCT_ID = /^[A-Za-z0-9_.:-]{1,255}$/;
export const isProductId = (id: string): boolean => PRODUCT_ID.test(id);

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
    // `service` unless create said `good` (the legacy Orders API's kind, which nothing here treats apart).
    type: row.type as 'good' | 'service',
    unit_label: row.unitLabel,
    updated: row.updated,
    url: row.url,
  };
}

export const serializeDeletedProduct = (id: string) => ({ id, object: OBJECT, deleted: true as const });

export const expandable: ExpandableFields = {
  default_price: ref('price'),
};
