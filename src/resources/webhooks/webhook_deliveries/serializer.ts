import type { WebhookAttempt, WebhookDelivery } from '../../../generated/prisma/client';
import type { ExpandableFields } from '../../../kernel/expand';

// Sandbox-only objects: what the public API's dashboard shows about webhook deliveries.

export const DELIVERY_OBJECT = 'webhook_delivery';
export const ATTEMPT_OBJECT = 'webhook_delivery_attempt';

const seconds = (date: Date | null): number | null => (date ? Math.floor(date.getTime() / 1000) : null);

export function serializeDelivery(row: Pick<WebhookDelivery, 'id' | 'eventId' | 'endpointId' | 'status' | 'attempts' | 'nextAttemptAt' | 'createdAt'>) {
  return {
    id: row.id,
    object: DELIVERY_OBJECT,
    created: seconds(row.createdAt)!,
    event: row.eventId,
    webhook_endpoint: row.endpointId,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? seconds(row.nextAttemptAt) : null,
  };
}

export function serializeAttempt(row: WebhookAttempt) {
  return {
    id: row.id,
    object: ATTEMPT_OBJECT,
    created: seconds(row.attemptedAt)!,
    delivery: row.deliveryId,
    event: row.eventId,
    webhook_endpoint: row.endpointId,
    attempt: row.attempt,
    duration_ms: row.durationMs,
    status_code: row.statusCode,
    error: row.error,
    response_body: row.responseExcerpt,
    succeeded: row.succeeded,
    outcome: row.outcome,
  };
}

export const deliveryExpandable: ExpandableFields = {};
export const attemptExpandable: ExpandableFields = {};
