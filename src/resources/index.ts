import type { ExpandableFields } from '../kernel/expand';
import type { Route } from '../kernel/route';
import { API_VERSIONS } from '../kernel/versions';
import { EVENT_TYPES } from '../events/types';
import * as webhookEndpoints from './webhook_endpoints/routes';
import * as webhookEndpointSerializer from './webhook_endpoints/serializer';

// The registry app.ts mounts: every resource's routes and expandable fields, in order.

export interface Resource {
  readonly routes: readonly Route[];
  readonly object: string;
  readonly expandable: ExpandableFields;
}

export const resources: readonly Resource[] = [
  { routes: webhookEndpoints.routes, object: webhookEndpointSerializer.OBJECT, expandable: webhookEndpointSerializer.expandable },
];

/** Component schemas whose one list lives in code; the OpenAPI document takes them from here. */
export const generatedSchemas = {
  event_type_selector: { type: 'string', enum: ['*', ...EVENT_TYPES] },
  api_version: { type: 'string', enum: [...API_VERSIONS] },
};
