import type { WebhookEndpoint } from '../../../generated/prisma/client';
import type { ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const OBJECT = 'webhook_endpoint';

export type WebhookEndpointRow = Pick<
  WebhookEndpoint,
  'id' | 'created' | 'url' | 'enabledEvents' | 'apiVersion' | 'description' | 'metadata' | 'status'
>;

/** The public object; `secret` is shown only in the create response (rows keep it sealed). */
export function serializeWebhookEndpoint(row: WebhookEndpointRow, extra: { secret?: string } = {}) {
  return {
    id: row.id,
    object: OBJECT,
    api_version: row.apiVersion,
    application: null,
    created: row.created,
    description: row.description,
    enabled_events: row.enabledEvents,
    livemode: false,
    metadata: row.metadata as Metadata,
    ...(extra.secret !== undefined ? { secret: extra.secret } : {}),
    status: row.status,
    url: row.url,
  };
}

export const serializeDeletedWebhookEndpoint = (id: string) => ({ id, object: OBJECT, deleted: true as const });

/** A webhook endpoint has nothing to expand. */
export const expandable: ExpandableFields = {};
