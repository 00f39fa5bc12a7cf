import type { ForwardingRequest } from '../../../generated/prisma/client';
import type { ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const OBJECT = 'forwarding.request';

export type ForwardingRow = Pick<
  ForwardingRequest,
  'id' | 'created' | 'metadata' | 'paymentMethod' | 'replacements' | 'url' | 'requestDetails' | 'responseDetails' | 'requestContext'
>;

export const ROW = {
  id: true,
  created: true,
  metadata: true,
  paymentMethod: true,
  replacements: true,
  url: true,
  requestDetails: true,
  responseDetails: true,
  requestContext: true,
} as const;

/** The public object. Card data in both details is masked and credentials redacted when stored. */
export const serializeForwardingRequest = (row: ForwardingRow) => ({
  id: row.id,
  object: OBJECT,
  created: row.created,
  livemode: false,
  metadata: row.metadata as Metadata,
  payment_method: row.paymentMethod,
  replacements: row.replacements,
  request_context: row.requestContext as { destination_duration: number; destination_ip_address: string } | null,
  request_details: row.requestDetails as { body: string; headers: { name: string; value: string }[]; http_method: 'POST' },
  response_details: row.responseDetails as { body: string; headers: { name: string; value: string }[]; status: number } | null,
  url: row.url,
});

export const expandable: ExpandableFields = {};
