import { invalidRequest, parametersExclusive } from '../../kernel/errors';
import { formEntries, renamed, type Params, type RequestChange } from '../../kernel/requestVersions';

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

/**
 * `payment_method_types` before 2026-09-30.endive: the types the PaymentIntent may use, each one
 * refused when unavailable (cards are the only ones here); today's `allowed_payment_method_types`
 * holds them.
 */
function explicitTypes(params: Params, names: Parameters<RequestChange['upgrade']>[1]): Params {
  for (const [, type] of formEntries(params.payment_method_types)) {
    if (type !== 'card') {
      throw invalidRequest(
        // Parsed objects have no prototype (String() of one throws): a non-string is shown as JSON.
        `The payment method type provided: ${typeof type === 'string' ? type.slice(0, 100) : JSON.stringify(type).slice(0, 100)} is invalid. Please ensure the provided type is activated in your dashboard (https://dashboard.stripe.com/account/payments/settings) and your account is enabled for any preview features that you are trying to use.`,
        'payment_intent_invalid_parameter',
        'payment_method_types',
      );
    }
  }
  return renamed('payment_method_types', 'allowed_payment_method_types')(params, names);
}

const ALLOWED_REPLACED = { payment_method_types: '`allowed_payment_method_types`' };

const ENDIVE_TYPES = 'Removes `payment_method_types` as a writable parameter of PaymentIntents (use dynamic payment methods, `excluded_payment_method_types` or `allowed_payment_method_types`).';

/** Before 2024-04-10 a PaymentIntent that named no `capture_method` captured at once (`automatic`), its charge settled with it. */
function automaticCapture(params: Params): Params {
  return params.capture_method === undefined ? { ...params, capture_method: 'automatic' } : params;
}

export const requestChanges: readonly RequestChange[] = [
  {
    version: '2024-04-10',
    operation: 'PostPaymentIntents',
    description: 'The default `capture_method` of a PaymentIntent changes from `automatic` to `automatic_async`.',
    upgrade: automaticCapture,
  },
  { version: '2026-09-30.endive', operation: 'PostPaymentIntents', description: ENDIVE_TYPES, upgrade: explicitTypes },
  { version: '2026-09-30.endive', operation: 'PostPaymentIntentsIntent', description: ENDIVE_TYPES, upgrade: explicitTypes },
  { version: '2026-09-30.endive', operation: 'PostSetupIntents', description: ENDIVE_ALLOWED_TYPES, upgrade: renamed('payment_method_types', 'allowed_payment_method_types'), replaced: ALLOWED_REPLACED },
  { version: '2026-09-30.endive', operation: 'PostSetupIntentsIntent', description: ENDIVE_ALLOWED_TYPES, upgrade: renamed('payment_method_types', 'allowed_payment_method_types'), replaced: ALLOWED_REPLACED },
  { version: '2025-03-31.basil', operation: 'PostCustomers', description: BASIL_DISCOUNTS, upgrade: oneDiscount, kept: DISCOUNT_PARAMS },
  { version: '2025-03-31.basil', operation: 'PostCustomersCustomer', description: BASIL_DISCOUNTS, upgrade: oneDiscount, kept: DISCOUNT_PARAMS },
];
