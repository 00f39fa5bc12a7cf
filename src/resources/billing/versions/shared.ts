import { isJsonObject, type Embedded } from '../../../kernel/versions';

// What the billing areas' downgrades share: reading partial objects, and the older forms of
// objects a downgrade puts back whole (a price, its plan, a discount), which the renderer doesn't
// walk again, so they are given here as the older versions showed them.

export type Json = Record<string, any>;

/** A whole object (it says what it is), not an event's `previous_attributes`, which has only what changed. */
export const isWhole = (object: Json): boolean => typeof object.object === 'string';

export const has = (object: Json, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

/** Sets the fields an older version showed on every object of the type, only on a whole object. */
export function withDefaults(object: Json, defaults: Json): Json {
  if (!isWhole(object)) return object;
  const out = { ...object };
  for (const [key, value] of Object.entries(defaults)) if (!has(out, key)) out[key] = value;
  return out;
}

export function without(object: Json, keys: readonly string[]): Json {
  const out = { ...object };
  for (const key of keys) delete out[key];
  return out;
}

/**
 * `aggregate_usage`, which prices' `recurring` (and plans) had until 2025-03-31.basil: `sum` for
 * a metered price (the default of the legacy usage-based prices, which metered prices without a
 * meter are), null for a licensed one.
 */
export const aggregateUsageOf = (usageType: unknown): string | null => (usageType === 'metered' ? 'sum' : null);

/** A price as versions before 2025-03-31.basil showed it (with `recurring.aggregate_usage`). */
export function olderPrice(price: Json): Json {
  if (!isJsonObject(price.recurring) || has(price.recurring, 'aggregate_usage')) return price;
  return { ...price, recurring: { ...price.recurring, aggregate_usage: aggregateUsageOf(price.recurring.usage_type) } };
}

/** The plan a recurring price was to versions before 2025-03-31.basil (the legacy view of it); null for a one-time price. */
export function planOf(price: Json): Json | null {
  const recurring = price.recurring;
  if (!isJsonObject(recurring)) return null;
  return {
    id: price.id,
    object: 'plan',
    active: price.active,
    aggregate_usage: aggregateUsageOf(recurring.usage_type),
    amount: price.unit_amount ?? null,
    amount_decimal: price.unit_amount_decimal ?? null,
    billing_scheme: price.billing_scheme,
    created: price.created,
    currency: price.currency,
    interval: recurring.interval,
    interval_count: recurring.interval_count,
    livemode: price.livemode,
    metadata: price.metadata,
    meter: recurring.meter ?? null,
    nickname: price.nickname ?? null,
    product: price.product,
    tiers_mode: price.tiers_mode ?? null,
    transform_usage: price.transform_quantity ?? null,
    trial_period_days: recurring.trial_period_days ?? null,
    usage_type: recurring.usage_type,
  };
}

/** The price `id` names, whole as older versions showed it, when it rides along (`embed`); else null. */
export function embeddedPrice(id: unknown, embedded: Embedded): Json | null {
  if (isJsonObject(id)) return olderPrice(id);
  const price = typeof id === 'string' ? embedded[id] : undefined;
  return isJsonObject(price) ? olderPrice(price) : null;
}

/** A discount as versions before 2025-09-30.clover showed it: its coupon whole as `coupon`, no `source`. */
export function olderDiscount(discount: Json, embedded: Embedded): Json {
  if (!isJsonObject(discount.source)) return discount;
  const { source, ...rest } = discount;
  const coupon = source.coupon;
  return { ...rest, coupon: typeof coupon === 'string' ? (embedded[coupon] ?? coupon) : coupon };
}

/**
 * The singular `discount` older versions showed beside `discounts`: the first of them, whole
 * when it rides along (`embed`), null when there is none.
 */
export function singularDiscount(discounts: unknown, embedded: Embedded): Json | null {
  if (!Array.isArray(discounts) || discounts.length === 0) return null;
  const first = discounts[0];
  const whole = typeof first === 'string' ? embedded[first] : first;
  return isJsonObject(whole) ? olderDiscount(whole, embedded) : null;
}

/** A decimal string with at most 12 places, as the API writes decimal amounts. */
export function decimalString(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(12).replace(/0+$/, '').replace(/\.$/, '');
}
