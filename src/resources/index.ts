import type { ExpandableFields } from '../kernel/expand';
import type { JobWorker, Reconcile, Route, Schedule } from '../kernel/route';
import type { HostedPage } from '../hosted/pages';
import type { QueueDefinition } from '../lib/queue';
import { eventFanoutQueue, webhookDeliveryQueue } from '../events/jobs';
import { identityWorker, reconcileIdentityJobs } from './identity/pipeline';
import { secretSweep } from './apps_secrets/jobs';
import { cvcPurge } from './payment_methods/jobs';
import { forwardingPrune, forwardingWorker, reconcileForwards } from './forwarding_requests/pipeline';
import { fcLinkPrune, financialConnectionsWorker, reconcileFinancialConnectionsJobs } from './financial_connections/pipeline';
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
import * as capabilities from './capabilities/routes';
import * as capabilitySerializer from './capabilities/serializer';
import * as externalAccounts from './external_accounts/routes';
import * as externalAccountSerializer from './external_accounts/serializer';
import * as loginLinks from './login_links/routes';
import * as loginLinkSerializer from './login_links/serializer';
import * as persons from './persons/routes';
import * as personSerializer from './persons/serializer';
import * as accountSessions from './account_sessions/routes';
import * as accountSessionSerializer from './account_sessions/serializer';
import * as accountLinks from './account_links/routes';
import * as accountLinkSerializer from './account_links/serializer';
import * as appsSecrets from './apps_secrets/routes';
import * as appsSecretSerializer from './apps_secrets/serializer';
import * as identity from './identity/routes';
import * as identitySerializer from './identity/serializer';
import * as sandboxData from './sandbox_data/routes';
import * as sandboxDataSerializer from './sandbox_data/serializer';
import * as customers from './customers/routes';
import * as customerSerializer from './customers/serializer';
import * as paymentMethods from './payment_methods/routes';
import * as paymentMethodSerializer from './payment_methods/serializer';
import * as products from './products/routes';
import * as productSerializer from './products/serializer';
import * as prices from './prices/routes';
import * as priceSerializer from './prices/serializer';
import * as taxRates from './tax_rates/routes';
import * as taxRateSerializer from './tax_rates/serializer';
import * as coupons from './coupons/routes';
import * as couponSerializer from './coupons/serializer';
import * as promotionCodes from './promotion_codes/routes';
import * as promotionCodeSerializer from './promotion_codes/serializer';
import * as forwardingRequests from './forwarding_requests/routes';
import * as forwardingRequestSerializer from './forwarding_requests/serializer';
import * as financialConnections from './financial_connections/routes';
import * as financialConnectionsSerializer from './financial_connections/serializer';
import * as subscriptions from './subscriptions/routes';
import * as subscriptionSerializer from './subscriptions/serializer';
import * as invoices from './invoices/routes';
import * as testClocks from './test_clocks/routes';
import * as testClockSerializer from './test_clocks/serializer';
import { billingWorker, reconcileBilling } from './subscriptions/pipeline';
import * as invoiceSerializer from './invoices/serializer';

// The registry app.ts mounts: every resource's routes and expandable fields, in order.

export interface Resource {
  readonly routes: readonly Route[];
  /** Expandable fields per object type this resource answers with. */
  readonly expandable: Readonly<Record<string, ExpandableFields>>;
  /** HTML pages a browser opens from links this resource returns, mounted under /hosted. */
  readonly pages?: readonly HostedPage[];
  /** Queues it runs with workers of its own (events' batched fan-out and delivery), for depth metrics. */
  readonly queues?: readonly QueueDefinition<any>[];
  /** The consumers of its queues, which the worker process runs. */
  readonly workers?: readonly JobWorker<any>[];
  /** Re-adds its due jobs from the database after Redis lost them. */
  readonly reconcile?: Reconcile;
  /** Its periodic work, run by the maintenance queue. */
  readonly schedules?: readonly Schedule[];
}

export const resources: readonly Resource[] = [
  { routes: accounts.routes, expandable: { [accountSerializer.OBJECT]: accountSerializer.expandable } },
  { routes: capabilities.routes, expandable: { [capabilitySerializer.OBJECT]: capabilitySerializer.expandable } },
  {
    routes: externalAccounts.routes,
    expandable: {
      [externalAccountSerializer.BANK_ACCOUNT_OBJECT]: externalAccountSerializer.expandable,
      [externalAccountSerializer.CARD_OBJECT]: externalAccountSerializer.expandable,
    },
  },
  { routes: persons.routes, expandable: { [personSerializer.OBJECT]: personSerializer.expandable } },
  {
    routes: accountSessions.routes,
    expandable: {
      [accountSessionSerializer.OBJECT]: accountSessionSerializer.expandable,
      [accountSessionSerializer.CLAIM_OBJECT]: accountSessionSerializer.expandable,
    },
  },
  { routes: accountLinks.routes, expandable: { [accountLinkSerializer.OBJECT]: accountLinkSerializer.expandable }, pages: accountLinks.pages },
  { routes: loginLinks.routes, expandable: { [loginLinkSerializer.OBJECT]: loginLinkSerializer.expandable }, pages: loginLinks.pages },
  { routes: webhookEndpoints.routes, expandable: { [webhookEndpointSerializer.OBJECT]: webhookEndpointSerializer.expandable } },
  { routes: events.routes, expandable: { [eventSerializer.OBJECT]: eventSerializer.expandable }, queues: [eventFanoutQueue, webhookDeliveryQueue] },
  {
    routes: webhookDeliveries.routes,
    expandable: {
      [webhookDeliverySerializer.DELIVERY_OBJECT]: webhookDeliverySerializer.deliveryExpandable,
      [webhookDeliverySerializer.ATTEMPT_OBJECT]: webhookDeliverySerializer.attemptExpandable,
    },
  },
  { routes: appsSecrets.routes, expandable: { [appsSecretSerializer.OBJECT]: appsSecretSerializer.expandable }, schedules: [secretSweep] },
  {
    routes: identity.routes,
    expandable: identitySerializer.expandable,
    pages: identity.pages,
    workers: [identityWorker],
    reconcile: reconcileIdentityJobs,
  },
  { routes: sandboxData.routes, expandable: { [sandboxDataSerializer.OBJECT]: sandboxDataSerializer.expandable } },
  {
    routes: customers.routes,
    expandable: {
      [customerSerializer.OBJECT]: customerSerializer.expandable,
      [customerSerializer.INVOICE_SETTINGS_OBJECT]: customerSerializer.invoiceSettingsExpandable,
    },
  },
  {
    routes: paymentMethods.routes,
    expandable: { [paymentMethodSerializer.PAYMENT_METHOD_OBJECT]: paymentMethodSerializer.expandable },
    schedules: [cvcPurge],
  },
  { routes: products.routes, expandable: { [productSerializer.OBJECT]: productSerializer.expandable } },
  { routes: prices.routes, expandable: { [priceSerializer.OBJECT]: priceSerializer.expandable } },
  { routes: taxRates.routes, expandable: { [taxRateSerializer.OBJECT]: taxRateSerializer.expandable } },
  { routes: coupons.routes, expandable: { [couponSerializer.OBJECT]: couponSerializer.expandable } },
  { routes: promotionCodes.routes, expandable: promotionCodeSerializer.expandable },
  {
    routes: forwardingRequests.routes,
    expandable: { [forwardingRequestSerializer.OBJECT]: forwardingRequestSerializer.expandable },
    workers: [forwardingWorker],
    reconcile: reconcileForwards,
    schedules: [forwardingPrune],
  },
  {
    routes: financialConnections.routes,
    expandable: financialConnectionsSerializer.expandable,
    pages: financialConnections.pages,
    workers: [financialConnectionsWorker],
    reconcile: reconcileFinancialConnectionsJobs,
    schedules: [fcLinkPrune],
  },
  {
    routes: subscriptions.routes,
    expandable: {
      [subscriptionSerializer.SUBSCRIPTION_OBJECT]: subscriptionSerializer.subscriptionExpandable,
      [subscriptionSerializer.ITEM_OBJECT]: subscriptionSerializer.itemExpandable,
      plan: subscriptionSerializer.planExpandable,
    },
    workers: [billingWorker],
    reconcile: reconcileBilling,
  },
  { routes: testClocks.routes, expandable: { [testClockSerializer.OBJECT]: testClockSerializer.expandable } },
  {
    routes: invoices.routes,
    expandable: {
      [invoiceSerializer.INVOICE_OBJECT]: invoiceSerializer.invoiceExpandable,
      [invoiceSerializer.LINE_OBJECT]: invoiceSerializer.lineExpandable,
      [invoiceSerializer.INVOICE_ITEM_OBJECT]: invoiceSerializer.invoiceItemExpandable,
    },
  },
];

/** Every queue of every resource. */
export const queueDefinitions: readonly QueueDefinition<any>[] = resources.flatMap((r) => [...(r.queues ?? []), ...(r.workers ?? []).map((w) => w.queue)]);

/** Every resource's workers, reconcilers and schedules, for the worker process. */
export const jobWorkers: readonly JobWorker<any>[] = resources.flatMap((r) => r.workers ?? []);
export const reconcilers: readonly Reconcile[] = resources.flatMap((r) => (r.reconcile ? [r.reconcile] : []));
export const schedules: readonly Schedule[] = resources.flatMap((r) => r.schedules ?? []);

/** Component schemas whose one list lives in code; the OpenAPI document takes them from here. */
export const generatedSchemas = {
  event_type_selector: { type: 'string', enum: ['*', ...EVENT_TYPES] },
  api_version: { type: 'string', enum: [...API_VERSIONS] },
  account_capabilities_param: accountSerializer.capabilitiesParamSchema,
  account_session_components_param: accountSessionSerializer.componentsParamSchema,
  account_session_components: accountSessionSerializer.componentsSchema,
  identity_outcome: { type: 'string', enum: [...identitySerializer.OUTCOMES] },
};
