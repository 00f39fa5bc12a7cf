import { unixSeconds } from '../../../lib/clock';
import { invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginate } from '../../../kernel/list';
import type { RequestContext } from '../../../kernel/route';
import type { WebhookAttempt } from '../../../generated/prisma/client';
import { newDeliveryId } from '../../../events/delivery';
import { queueDeliveries } from '../../../events/jobs';
import { hasIdShape } from '../../../lib/ids';
import { findOwned as findOwnedEndpoint } from '../webhook_endpoints/service';
import { serializeAttempt, serializeDelivery } from './serializer';

/** Every attempt to one of the caller's endpoints (of one event, with `event`), newest first. */
export async function listDeliveryAttempts(ctx: RequestContext) {
  const endpointId = (await findOwnedEndpoint(ctx, ctx.pathParams.webhook_endpoint)).id;
  const event = ctx.params.event as string | undefined;
  return paginate<WebhookAttempt>({
    params: ctx.params,
    url: `/sandbox/v1/webhook_endpoints/${endpointId}/deliveries`,
    where: event === undefined ? { endpointId } : { endpointId, eventId: event },
    model: ctx.deps.prisma.webhookAttempt as any,
    objectName: 'webhook delivery attempt',
    serialize: serializeAttempt,
  });
}

const RESEND_WINDOW_SECONDS = 30 * 86400;

/**
 * Queues one more delivery of an event to one endpoint, as `stripe events resend` does. The event
 * must be the caller's, or a connected account's when the endpoint is a connect endpoint.
 */
export async function resendEvent(ctx: RequestContext) {
  const { prisma } = ctx.deps;
  const eventId = ctx.pathParams.id;
  const endpointId: string = ctx.params.webhook_endpoint;
  const endpoint = await findOwnedEndpoint(ctx, endpointId, 'webhook_endpoint');
  if (!hasIdShape('evt', eventId)) throw resourceMissing('event', eventId);
  const event = await prisma.event.findFirst({
    where: endpoint.connect ? { id: eventId, account: { parentAccountId: ctx.caller.accountId } } : { id: eventId, accountId: ctx.caller.accountId },
    select: { id: true, created: true },
  });
  if (!event) throw resourceMissing('event', eventId);
  // As in the public API, only events from the last 30 days can be resent (retention may be longer).
  if (event.created < unixSeconds(ctx.deps.clock) - RESEND_WINDOW_SECONDS) {
    throw invalidRequest(`The event ${eventId} is more than 30 days old; only events from the last 30 days can be resent.`, 'resource_invalid_state', 'id');
  }
  if (endpoint.status !== 'enabled') {
    throw invalidRequest(`The webhook endpoint ${endpointId} is disabled; enable it before resending events to it.`, 'resource_invalid_state', 'webhook_endpoint');
  }
  const delivery = await prisma.$transaction(async (tx) => {
    // Serialises resends of one event, so each gets its own resend number.
    await tx.$queryRaw`SELECT id FROM events WHERE id = ${eventId} FOR UPDATE`;
    const previous = await tx.webhookDelivery.aggregate({ where: { eventId, endpointId }, _max: { resendNumber: true } });
    const created = await tx.webhookDelivery.create({
      data: {
        id: newDeliveryId(),
        eventId,
        endpointId,
        resendNumber: (previous._max.resendNumber ?? -1) + 1,
        status: 'pending',
        nextAttemptAt: new Date(ctx.deps.clock.nowMs()),
      },
    });
    await tx.event.update({ where: { id: eventId }, data: { pendingWebhooks: { increment: 1 } } });
    return created;
  });
  await queueDeliveries(ctx.deps.queues, [{ id: delivery.id, attempts: 0 }]);
  return serializeDelivery(delivery);
}
