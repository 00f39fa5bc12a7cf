import { parametersExclusive } from '../../kernel/errors';
import type { Params, RequestChange } from '../../kernel/requestVersions';

// The parameters payments' operations took at older versions (the request half of issue 24; how
// objects look at older versions is each serializer's and the areas' versions.ts).

/** One discount at a time: `coupon` or `promotion_code`. Today's model names neither, so they are kept as sent. */
function oneDiscount(params: Params): Params {
  if (params.coupon !== undefined && params.promotion_code !== undefined) throw parametersExclusive('coupon', 'promotion_code');
  return params;
}

const BASIL_DISCOUNTS = 'Removes the singular `coupon` and `promotion_code` parameters in favor of `discounts` (stackable discounts).';
const DISCOUNT_PARAMS = ['coupon', 'promotion_code'] as const;

export const requestChanges: readonly RequestChange[] = [
  { version: '2025-03-31.basil', operation: 'PostCustomers', description: BASIL_DISCOUNTS, upgrade: oneDiscount, kept: DISCOUNT_PARAMS },
  { version: '2025-03-31.basil', operation: 'PostCustomersCustomer', description: BASIL_DISCOUNTS, upgrade: oneDiscount, kept: DISCOUNT_PARAMS },
];
