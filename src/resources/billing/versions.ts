import { isJsonObject, type VersionChange } from '../../kernel/versions';

// Its objects' changes between API versions (see src/kernel/versions.ts for how they render, and
// docs/versions.md for the whole table). Serializers write the newest shape; each change here is
// undone, newest first, for a request or an event at an older version.

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
];
