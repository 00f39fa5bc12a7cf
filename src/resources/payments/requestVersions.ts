import { parametersExclusive } from '../../kernel/errors';
import { renamed, type Params, type RequestChange } from '../../kernel/requestVersions';

// The parameters payments' operations took at older versions (the request half of issue 24; how
// objects look at older versions is each serializer's and the areas' versions.ts).

/** One discount at a time: `coupon` or `promotion_code`. Today's model names neither, so they are kept as sent. */
function oneDiscount(params: Params): Params {
  if (params.coupon !== undefined && params.promotion_code !== undefined) throw parametersExclusive('coupon', 'promotion_code');
  return params;
}

const BASIL_DISCOUNTS = 'Removes the singular `coupon` and `promotion_code` parameters in favor of `discounts` (stackable discounts).';
const DISCOUNT_PARAMS = ['coupon', 'promotion_code'] as const;

const ENDIVE_ALLOWED_TYPES = 'Replaces `payment_method_types` with `allowed_payment_method_types` on PaymentIntents, SetupIntents and Checkout Sessions.';

export const requestChanges: readonly RequestChange[] = [
  { version: '2026-09-30.endive', operation: 'PostSetupIntents', description: ENDIVE_ALLOWED_TYPES, upgrade: renamed('payment_method_types', 'allowed_payment_method_types') },
  { version: '2026-09-30.endive', operation: 'PostSetupIntentsIntent', description: ENDIVE_ALLOWED_TYPES, upgrade: renamed('payment_method_types', 'allowed_payment_method_types') },
  { version: '2025-03-31.basil', operation: 'PostCustomers', description: BASIL_DISCOUNTS, upgrade: oneDiscount, kept: DISCOUNT_PARAMS },
  { version: '2025-03-31.basil', operation: 'PostCustomersCustomer', description: BASIL_DISCOUNTS, upgrade: oneDiscount, kept: DISCOUNT_PARAMS },
];
