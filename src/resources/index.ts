import type { ExpandableFields } from '../kernel/expand';
import type { Route } from '../kernel/route';
import type { HostedPage } from '../hosted/pages';
import { API_VERSIONS } from '../kernel/versions';
import { EVENT_TYPES } from '../events/types';
import * as webhookEndpoints from './webhook_endpoints/routes';
import * as webhookEndpointSerializer from './webhook_endpoints/serializer';
import * as events from './events/routes';
import * as eventSerializer from './events/serializer';
import * as webhookDeliveries from './webhook_deliveries/routes';
import * as webhookDeliverySerializer from './webhook_deliveries/serializer';
import * as accounts from './accounts/routes';
import * as accountSerializer from './accounts/serializer';
import * as accountSessions from './account_sessions/routes';
import * as accountSessionSerializer from './account_sessions/serializer';
import * as accountLinks from './account_links/routes';
import * as accountLinkSerializer from './account_links/serializer';
import * as appsSecrets from './apps_secrets/routes';
import * as appsSecretSerializer from './apps_secrets/serializer';
import * as identity from './identity/routes';
import * as identitySerializer from './identity/serializer';

// The registry app.ts mounts: every resource's routes and expandable fields, in order.

export interface Resource {
  readonly routes: readonly Route[];
  /** Expandable fields per object type this resource answers with. */
  readonly expandable: Readonly<Record<string, ExpandableFields>>;
  /** HTML pages a browser opens from links this resource returns, mounted under /hosted. */
  readonly pages?: readonly HostedPage[];
}

export const resources: readonly Resource[] = [
  { routes: accounts.routes, expandable: { [accountSerializer.OBJECT]: accountSerializer.expandable } },
  {
    routes: accountSessions.routes,
    expandable: {
      [accountSessionSerializer.OBJECT]: accountSessionSerializer.expandable,
      [accountSessionSerializer.CLAIM_OBJECT]: accountSessionSerializer.expandable,
    },
  },
  { routes: accountLinks.routes, expandable: { [accountLinkSerializer.OBJECT]: accountLinkSerializer.expandable }, pages: accountLinks.pages },
  { routes: webhookEndpoints.routes, expandable: { [webhookEndpointSerializer.OBJECT]: webhookEndpointSerializer.expandable } },
  { routes: events.routes, expandable: { [eventSerializer.OBJECT]: eventSerializer.expandable } },
  {
    routes: webhookDeliveries.routes,
    expandable: {
      [webhookDeliverySerializer.DELIVERY_OBJECT]: webhookDeliverySerializer.deliveryExpandable,
      [webhookDeliverySerializer.ATTEMPT_OBJECT]: webhookDeliverySerializer.attemptExpandable,
    },
  },
  { routes: appsSecrets.routes, expandable: { [appsSecretSerializer.OBJECT]: appsSecretSerializer.expandable } },
  {
    routes: identity.routes,
    expandable: {
      [identitySerializer.SESSION_OBJECT]: identitySerializer.sessionExpandable,
      [identitySerializer.REPORT_OBJECT]: identitySerializer.reportExpandable,
    },
    pages: identity.pages,
  },
];

/** Component schemas whose one list lives in code; the OpenAPI document takes them from here. */
export const generatedSchemas = {
  event_type_selector: { type: 'string', enum: ['*', ...EVENT_TYPES] },
  api_version: { type: 'string', enum: [...API_VERSIONS] },
  account_capabilities_param: accountSerializer.capabilitiesParamSchema,
  account_session_components_param: accountSessionSerializer.componentsParamSchema,
  account_session_components: accountSessionSerializer.componentsSchema,
  identity_outcome: { type: 'string', enum: [...identitySerializer.OUTCOMES] },
};
