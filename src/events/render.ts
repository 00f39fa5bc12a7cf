import type { Event } from '../generated/prisma/client';
import { alreadyRendered, type Embedded, type VersionRenderer } from '../kernel/versions';

// The public event object. `data` is stored in the newest shape and rendered for the event's
// version: the endpoint's `api_version` when it has one, else the version the event was
// written at (the account's default then). The envelope is left in the newest shape: whoever
// sends it renders it for the reader (the kernel for a request's version, delivery for the
// endpoint's). `versions` holds every area's version changes (`deps.versions`).

export type EventRow = Pick<
  Event,
  'id' | 'accountId' | 'created' | 'type' | 'apiVersion' | 'data' | 'requestId' | 'idempotencyKey' | 'pendingWebhooks'
> & { readonly connectedAccountId?: string | null };

export interface EventData {
  object: Record<string, unknown>;
  previous_attributes?: Record<string, unknown>;
  /** Objects older versions show whole in `object` (see `embed`); never shown themselves. */
  embedded?: Embedded;
}

/** `connected`: the event belongs to a connected account, so it names the account. */
export function renderEvent(row: EventRow, versions: VersionRenderer, options: { connected: boolean; apiVersion?: string | null }) {
  const version = options.apiVersion ?? row.apiVersion;
  const stored = row.data as unknown as EventData;
  const data: EventData = { object: versions.render(stored.object, version, undefined, stored.embedded) };
  if (stored.previous_attributes) {
    // Old values of the object's fields: rendered as a part of an object of its type.
    const type = typeof stored.object?.object === 'string' ? stored.object.object : undefined;
    data.previous_attributes = versions.render(stored.previous_attributes, version, type, stored.embedded);
  }
  return {
    id: row.id,
    object: 'event' as const,
    // A platform's event about a connected account that is gone names that account.
    ...(row.connectedAccountId ? { account: row.connectedAccountId } : options.connected ? { account: row.accountId } : {}),
    api_version: version,
    created: row.created,
    // Frozen at the event's version: a request's Stripe-Version doesn't re-render it.
    data: alreadyRendered(data),
    livemode: false,
    pending_webhooks: row.pendingWebhooks,
    request: { id: row.requestId, idempotency_key: row.idempotencyKey },
    type: row.type,
  };
}

/** The event as a webhook carries it: wholly at its version, the envelope included. */
export function renderDelivery(row: EventRow, versions: VersionRenderer, options: { connected: boolean; apiVersion?: string | null }) {
  const event = renderEvent(row, versions, options);
  return versions.render(event, event.api_version);
}
