import { invalidRequest, parametersExclusive } from '../../kernel/errors';
import { renamed, without, type ParamNames, type Params, type RequestChange } from '../../kernel/requestVersions';

// The parameters billing's operations took at older versions, mapped onto today's (the request
// half of issue 24; how objects look at older versions is versions.ts).

/** Before 2025-09-30.clover a code named its coupon as `coupon`; now `promotion[coupon]` with `promotion[type]=coupon`. */
function promotionOfCoupon(params: Params, names: ParamNames): Params {
  if (params.coupon === undefined) {
    // Neither sent: the missing parameter is `coupon` at these versions.
    if (params.promotion === undefined) names.rename('promotion', 'coupon');
    return params;
  }
  // `promotion` came later; sent beside `coupon`, the two say the same thing twice.
  if (params.promotion !== undefined) throw parametersExclusive('coupon', 'promotion');
  names.rename('promotion', 'coupon');
  names.rename('promotion[coupon]', 'coupon');
  return { ...without(params, 'coupon'), promotion: { type: 'coupon', coupon: params.coupon } };
}

/**
 * Before 2025-03-31.basil a subscription took one discount as `coupon` or `promotion_code`; now a
 * list, `discounts`. The old single discount replaced the subscription's, as a one-entry list does.
 */
function discountsOfCoupon(params: Params, names: ParamNames): Params {
  const given = (['coupon', 'promotion_code'] as const).filter((name) => params[name] !== undefined);
  if (given.length === 0) return params;
  if (given.length > 1) throw parametersExclusive('coupon', 'promotion_code');
  const [name] = given;
  if (params.discounts !== undefined) throw parametersExclusive(name, 'discounts');
  names.rename('discounts', name);
  names.rename(`discounts[0][${name}]`, name);
  return { ...without(params, name), discounts: [{ [name]: params[name] }] };
}

/** The upcoming invoice's flat `subscription_…` parameters, as `subscription_details` names them. */
const UPCOMING_FLAT = [
  ['subscription_items', 'items'],
  ['subscription_proration_date', 'proration_date'],
  ['subscription_proration_behavior', 'proration_behavior'],
  ['subscription_billing_cycle_anchor', 'billing_cycle_anchor'],
  ['subscription_trial_end', 'trial_end'],
] as const;

/**
 * `GET /v1/invoices/upcoming` took the change it previews as flat `subscription_…` parameters
 * (`subscription_details` came later and says the same); it lived only before 2025-03-31.basil,
 * so every request that reaches it is upgraded.
 */
function upcomingDetails(params: Params, names: ParamNames): Params {
  const given = UPCOMING_FLAT.filter(([flat]) => params[flat] !== undefined);
  if (given.length === 0) return params;
  if (params.subscription_details !== undefined) throw parametersExclusive(given[0][0], 'subscription_details');
  const details: Params = {};
  for (const [flat, inner] of given) {
    details[inner] = params[flat];
    names.rename(`subscription_details[${inner}]`, flat);
  }
  return { ...without(params, ...given.map(([flat]) => flat)), subscription_details: details };
}

const UPCOMING_REMOVED = 'Removes `GET /v1/invoices/upcoming` and `GET /v1/invoices/upcoming/lines` in favor of `POST /v1/invoices/create_preview`.';

/**
 * Before 2022-08-01 a manual invoice took the customer's pending invoice items unless told not to
 * (`include_and_require`, the default then, also refused an invoice of nothing: taken here as
 * `include`).
 */
function pendingItemsIncluded(params: Params): Params {
  const behavior = params.pending_invoice_items_behavior;
  if (behavior !== undefined && behavior !== 'include_and_require') return params;
  return { ...params, pending_invoice_items_behavior: 'include' };
}

/**
 * Before 2025-03-31.basil an invoice item took a whole-unit `unit_amount` beside
 * `unit_amount_decimal`; basil kept only the decimal, which says the same for an integer.
 */
function decimalOfUnitAmount(params: Params, names: ParamNames): Params {
  if (params.unit_amount === undefined) return params;
  if (params.unit_amount_decimal !== undefined) throw parametersExclusive('unit_amount', 'unit_amount_decimal');
  const value = params.unit_amount;
  if (typeof value !== 'string' || !/^-?\d{1,15}$/.test(value)) {
    throw invalidRequest(`Invalid integer: ${typeof value === 'string' ? value : 'unit_amount'}`, 'parameter_invalid_integer', 'unit_amount');
  }
  names.rename('unit_amount_decimal', 'unit_amount');
  return { ...without(params, 'unit_amount'), unit_amount_decimal: String(Number(value)) };
}

const BASIL_UNIT_AMOUNT = 'Removes `unit_amount` from invoice items in favor of `unit_amount_decimal` (and `pricing`).';

/** Before 2024-04-10 an invoice's rendering settings were `rendering_options` (`amount_tax_display` only); now `rendering`. */
function renderingOfOptions(params: Params, names: ParamNames): Params {
  const options = params.rendering_options;
  if (options === undefined) return params;
  if (params.rendering !== undefined) throw parametersExclusive('rendering_options', 'rendering');
  names.rename('rendering', 'rendering_options');
  // `rendering_options=` unset them, as an empty `rendering[amount_tax_display]` does.
  const rendering = options === '' ? { amount_tax_display: '' } : options;
  return { ...without(params, 'rendering_options'), rendering };
}

const RENDERING = 'Renames the `rendering_options` parameter and attribute of invoices to `rendering`.';

const BASIL_DISCOUNTS = 'Removes the singular `coupon` and `promotion_code` parameters in favor of `discounts` (stackable discounts).';

// What each upgrade reads: moved or compared as sent, so today's schemas validate them after (under their old names).
const FEATURES_TAKEN = { features: {} } as const;
const COUPON_TAKEN = { coupon: {}, promotion: {} } as const;
const DISCOUNTS_TAKEN = { coupon: {}, promotion_code: {}, discounts: {} } as const;
const UPCOMING_TAKEN = { ...Object.fromEntries(UPCOMING_FLAT.map(([flat]) => [flat, {}])), subscription_details: {} } as const;
const PENDING_TAKEN = { pending_invoice_items_behavior: {} } as const;
// `unit_amount` is checked as a whole number by the upgrade itself; `rendering_options` moves as sent.
const UNIT_AMOUNT_TAKEN = { unit_amount: {}, unit_amount_decimal: {} } as const;
const RENDERING_TAKEN = { rendering_options: {}, rendering: {} } as const;

const MARKETING_FEATURES = 'Renames `features` to `marketing_features` on products.';

const FEATURES_REPLACED = { features: '`marketing_features`' };
const DISCOUNTS_REPLACED = { coupon: '`discounts[][coupon]`', promotion_code: '`discounts[][promotion_code]`' };

export const requestChanges: readonly RequestChange[] = [
  { version: '2024-04-10', operation: 'PostProducts', description: MARKETING_FEATURES, takes: FEATURES_TAKEN, upgrade: renamed('features', 'marketing_features'), replaced: FEATURES_REPLACED },
  { version: '2024-04-10', operation: 'PostProductsProduct', description: MARKETING_FEATURES, takes: FEATURES_TAKEN, upgrade: renamed('features', 'marketing_features'), replaced: FEATURES_REPLACED },
  {
    version: '2025-09-30.clover',
    operation: 'PostPromotionCodes',
    description: 'Promotion codes reference their coupon as `promotion[coupon]` (with `promotion[type]=coupon`) instead of `coupon`.',
    takes: COUPON_TAKEN,
    upgrade: promotionOfCoupon,
    replaced: { coupon: '`promotion[coupon]` with `promotion[type]=coupon`' },
  },
  { version: '2025-03-31.basil', operation: 'PostInvoiceitems', description: BASIL_UNIT_AMOUNT, takes: UNIT_AMOUNT_TAKEN, upgrade: decimalOfUnitAmount, replaced: { unit_amount: '`unit_amount_decimal`' } },
  { version: '2025-03-31.basil', operation: 'PostInvoiceitemsInvoiceitem', description: BASIL_UNIT_AMOUNT, takes: UNIT_AMOUNT_TAKEN, upgrade: decimalOfUnitAmount, replaced: { unit_amount: '`unit_amount_decimal`' } },
  { version: '2024-04-10', operation: 'PostInvoices', description: RENDERING, takes: RENDERING_TAKEN, upgrade: renderingOfOptions, replaced: { rendering_options: '`rendering`' } },
  { version: '2024-04-10', operation: 'PostInvoicesInvoice', description: RENDERING, takes: RENDERING_TAKEN, upgrade: renderingOfOptions, replaced: { rendering_options: '`rendering`' } },
  { version: '2025-03-31.basil', operation: 'GetInvoicesUpcoming', description: UPCOMING_REMOVED, takes: UPCOMING_TAKEN, upgrade: upcomingDetails },
  { version: '2025-03-31.basil', operation: 'GetInvoicesUpcomingLines', description: UPCOMING_REMOVED, takes: UPCOMING_TAKEN, upgrade: upcomingDetails },
  {
    version: '2022-08-01',
    operation: 'PostInvoices',
    description: 'The default `pending_invoice_items_behavior` of an invoice changes from `include_and_require` to `exclude`.',
    takes: PENDING_TAKEN,
    upgrade: pendingItemsIncluded,
  },
  { version: '2025-03-31.basil', operation: 'PostSubscriptions', description: BASIL_DISCOUNTS, takes: DISCOUNTS_TAKEN, upgrade: discountsOfCoupon, replaced: DISCOUNTS_REPLACED },
  { version: '2025-03-31.basil', operation: 'PostSubscriptionsSubscriptionExposedId', description: BASIL_DISCOUNTS, takes: DISCOUNTS_TAKEN, upgrade: discountsOfCoupon, replaced: DISCOUNTS_REPLACED },
];
