import type { Area } from '../area';
import { API_VERSIONS } from '../../kernel/versions';
import { EVENT_TYPES } from '../../events/types';
import { eventFanoutQueue, webhookDeliveryQueue } from '../../events/jobs';
import * as webhookEndpoints from './webhook_endpoints/routes';
import * as webhookEndpointSerializer from './webhook_endpoints/serializer';
import * as events from './events/routes';
import * as eventSerializer from './events/serializer';
import * as webhookDeliveries from './webhook_deliveries/routes';
import * as webhookDeliverySerializer from './webhook_deliveries/serializer';
import * as stripecli from './stripecli/routes';
import * as stripecliSerializer from './stripecli/serializer';
import { attachStripecliSockets } from './stripecli/socket';
import { versionChanges } from './versions';

// Webhooks: endpoints, the events API, the sandbox's delivery log and resend, and the Stripe
// CLI's sessions (`stripe listen`, `stripe logs tail`). Writing,
// fanning out and delivering events is the events layer's (src/events/), below every area; its
// queues are declared here for their depth metrics.
//
// Inside: deliveries → endpoints (a resend checks its endpoint). No other area is imported.

export const area: Area = {
  name: 'webhooks',
  routes: [...webhookEndpoints.routes, ...events.routes, ...webhookDeliveries.routes, ...stripecli.routes],
  objects: {
    [webhookEndpointSerializer.OBJECT]: { expandable: webhookEndpointSerializer.expandable },
    [eventSerializer.OBJECT]: { expandable: eventSerializer.expandable },
    [webhookDeliverySerializer.DELIVERY_OBJECT]: { expandable: webhookDeliverySerializer.deliveryExpandable },
    [webhookDeliverySerializer.ATTEMPT_OBJECT]: { expandable: webhookDeliverySerializer.attemptExpandable },
    [stripecliSerializer.OBJECT]: { expandable: stripecliSerializer.expandable },
  },
  queues: [eventFanoutQueue, webhookDeliveryQueue],
  sockets: attachStripecliSockets,
  versionChanges,
  schemas: {
    event_type_selector: { type: 'string', enum: ['*', ...EVENT_TYPES] },
    api_version: { type: 'string', enum: [...API_VERSIONS] },
  },
};

/** For start-up: seals the signing secrets earlier versions kept in plain text. */
export { sealPlaintextSecrets } from './webhook_endpoints/service';
