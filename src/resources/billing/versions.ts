import { isJsonObject, type VersionChange } from '../../kernel/versions';
import { invoiceChanges } from './versions/invoices';
import { productChanges } from './versions/products';
import { subscriptionChanges } from './versions/subscriptions';

// Its objects' changes between API versions (see src/kernel/versions.ts for how they render, and
// docs/versions.md for the whole table). Serializers write the newest shape; each change here is
// undone, newest first, for a request or an event at an older version. Changes to the same
// object in the same version are undone in the order written. Each downgrade may get a part of
// an object (an event's previous_attributes): it moves what is there, and sets what every older
// object had only on a whole one. The changes of subscriptions, invoices and products are in
// versions/.

export const versionChanges: readonly VersionChange[] = [
  {
    version: '2025-09-30.clover',
    object: 'promotion_code',
    description:
      "Moves a promotion code's `coupon` into `promotion` (`{type: 'coupon', coupon}`), where it is the coupon's id unless expanded; " +
      'before, `coupon` was the whole coupon.',
    downgrade: (code, _newest, embedded) => {
      if (!isJsonObject(code.promotion)) return code;
      const { promotion, ...rest } = code;
      const coupon = promotion.coupon;
      return { ...rest, coupon: typeof coupon === 'string' ? (embedded[coupon] ?? coupon) : coupon };
    },
  },
  ...subscriptionChanges,
  ...invoiceChanges,
  ...productChanges,
];
