import type { TaxRate } from '../../../generated/prisma/client';
import type { ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const OBJECT = 'tax_rate';

export type TaxRateRow = Omit<TaxRate, 'seq' | 'accountId'>;

export function serializeTaxRate(row: TaxRateRow) {
  return {
    id: row.id,
    object: OBJECT,
    active: row.active,
    country: row.country,
    created: row.created,
    description: row.description,
    display_name: row.displayName,
    // Stripe Tax's rates can differ from `percentage`; a rate made here is what it says.
    effective_percentage: row.percentage,
    flat_amount: null,
    inclusive: row.inclusive,
    jurisdiction: row.jurisdiction,
    jurisdiction_level: null,
    livemode: false,
    metadata: row.metadata as Metadata,
    percentage: row.percentage,
    rate_type: 'percentage' as const,
    state: row.state,
    tax_type: row.taxType,
  };
}

/** A tax rate has nothing to expand. */
export const expandable: ExpandableFields = {};
