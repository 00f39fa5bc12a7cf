import { unixSeconds } from '../../../lib/clock';
import type { CustomerDiscounts } from '../../payments';
import { discountRefs, requestScope } from '../invoices/billing';
import { billingNow } from './service';
import { redeemDiscount } from '../invoices/billing';

// A customer's discount (its `coupon` or `promotion_code` at versions before 2025-03-31.basil):
// redeemed as a subscription's are, shown as theirs are, and applied to the customer's
// subscriptions' invoices when they have none of their own (`customerFallback`, ./billing.ts).

export const customerDiscounts: CustomerDiscounts = {
  async redeem(tx, ctx, customer, sent) {
    const eventTime = unixSeconds(ctx.deps.clock);
    const now = await billingNow(tx, customer.testClockId, eventTime);
    // Errors name what the request sent: `coupon` or `promotion_code`.
    return redeemDiscount(requestScope(ctx, tx, now, eventTime), sent, (name) => name);
  },
  objects: (tx, owned, now) =>
    discountRefs(
      tx,
      owned.map((o) => ({ record: o.discount, customer: o.customer, subscription: null, subscriptionItem: null })),
      now,
    ),
};
