import type { Event } from '../generated/prisma/client';

// The public event object. Objects are rendered alike for every API version today, so rendering
// at a version only sets `api_version`; version-specific shapes go here when they are needed.

export type EventRow = Pick<
  Event,
  'id' | 'accountId' | 'created' | 'type' | 'apiVersion' | 'data' | 'requestId' | 'idempotencyKey' | 'pendingWebhooks'
>;

export interface EventData {
  object: Record<string, unknown>;
  previous_attributes?: Record<string, unknown>;
}

/** `connected`: the event belongs to a connected account, so it names the account. */
export function renderEvent(row: EventRow, options: { connected: boolean; apiVersion?: string | null }) {
  return {
    id: row.id,
    object: 'event' as const,
    ...(options.connected ? { account: row.accountId } : {}),
    api_version: options.apiVersion ?? row.apiVersion,
    created: row.created,
    data: row.data as unknown as EventData,
    livemode: false,
    pending_webhooks: row.pendingWebhooks,
    request: { id: row.requestId, idempotency_key: row.idempotencyKey },
    type: row.type,
  };
}
