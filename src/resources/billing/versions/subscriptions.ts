import { isJsonObject, type VersionChange } from '../../../kernel/versions';
import { aggregateUsageOf, has, olderDiscount, singularDiscount, withDefaults } from './shared';

// Subscriptions, their items, and what prices and plans showed of legacy usage billing.

const BASIL = '2025-03-31.basil';

export const subscriptionChanges: readonly VersionChange[] = [
  {
    version: BASIL,
    object: 'subscription',
    description:
      'Adds subscription item-level billing periods and removes subscription-level periods: before, the subscription had ' +
      '`current_period_start` and `current_period_end` (its items share them here: the first item’s). In `previous_attributes`, ' +
      'a change of the items gives them too, from the items as they were.',
    downgrade: (subscription) => {
      const items = isJsonObject(subscription.items) && Array.isArray(subscription.items.data) ? subscription.items.data : [];
      const first = items.find((item: unknown) => isJsonObject(item) && typeof item.current_period_start === 'number');
      if (!first) return subscription;
      return { ...subscription, current_period_start: first.current_period_start, current_period_end: first.current_period_end };
    },
  },
  {
    version: BASIL,
    object: 'subscription',
    description:
      'Removes the singular `coupon` and `promotion_code` with stackable discounts: before, subscriptions had `discount`, the ' +
      'first of their `discounts`, whole (null without one).',
    downgrade: (subscription, _newest, embedded) =>
      has(subscription, 'discounts') ? { ...subscription, discount: singularDiscount(subscription.discounts, embedded) } : subscription,
  },
  {
    version: BASIL,
    object: 'plan',
    description: 'Removes legacy usage-based billing: before, plans had `aggregate_usage` (`sum` for a metered plan, null for a licensed one).',
    downgrade: (plan) => (has(plan, 'usage_type') ? { ...plan, aggregate_usage: aggregateUsageOf(plan.usage_type) } : plan),
  },
  {
    version: BASIL,
    object: 'price',
    description:
      'Removes legacy usage-based billing: before, a recurring price’s `recurring` had `aggregate_usage` (`sum` for a metered ' +
      'price, null for a licensed one).',
    downgrade: (price) =>
      isJsonObject(price.recurring) ? { ...price, recurring: { ...price.recurring, aggregate_usage: aggregateUsageOf(price.recurring.usage_type) } } : price,
  },
  {
    version: '2020-08-27',
    object: 'subscription',
    description: 'Removes the `tax_percent` attribute in favor of tax rates: before, subscriptions had it (null: taxes here are tax rates).',
    downgrade: (subscription) => withDefaults(subscription, { tax_percent: null }),
  },
  {
    version: '2025-09-30.clover',
    object: 'discount',
    description: 'Moves a discount’s `coupon` into `source` (`{type: \'coupon\', coupon}`); before, `coupon` was the whole coupon.',
    downgrade: (discount, _newest, embedded) => olderDiscount(discount, embedded),
  },
];
