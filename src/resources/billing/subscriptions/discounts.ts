import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import type { RequestContext } from '../../../kernel/route';
import { embed } from '../../../kernel/versions';
import { handOffEvents } from '../../../events/jobs';
import { noActiveDiscount, serializeDeletedDiscount } from '../../payments';
import { emitIn, requestScope } from '../invoices/billing';
import type { StoredDiscount } from './serializer';
import { billingNow, lockSubscription, saveSubscriptionRow } from './service';

/**
 * `DELETE /v1/subscriptions/{id}/discount`: the subscription's own discounts end now (its items'
 * stay); from then on its invoices bill its customer's discount, if any, as for any subscription
 * without one. `customer.discount.deleted` for each, `customer.subscription.updated`; answers the
 * first deleted (the one older versions showed as `discount`).
 */
export async function deleteSubscriptionDiscount(ctx: RequestContext) {
  const { deps } = ctx;
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const view = await lockSubscription(tx, ctx, ctx.pathParams.subscription_exposed_id);
    const own = view.row.discounts as unknown as StoredDiscount[];
    if (own.length === 0) throw noActiveDiscount('subscription', view.row.id);
    const scope = requestScope(ctx, tx, await billingNow(tx, view.row.testClockId, eventTime), eventTime);
    const embedded = view.discounts ?? {};
    await saveSubscriptionRow(scope, view, { ...view, row: { ...view.row, discounts: [] as unknown as Prisma.JsonValue } });
    for (const d of own) await emitIn(scope, 'customer.discount.deleted', embed({ ...(embedded[d.id] as Record<string, unknown>) }, embedded));
    return { deleted: serializeDeletedDiscount(embedded[own[0].id] as Record<string, unknown>, embedded), events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  return result.deleted;
}
