import type { Area } from '../area';
import * as forwardingRequests from './requests/routes';
import * as forwardingRequestSerializer from './requests/serializer';
import { forwardingPrune, forwardingWorker, reconcileForwards } from './requests/pipeline';
import { forwardingDestinations } from './requests/destinations';

// Forwarding: requests that send a card's details to a destination FORWARDING_DESTINATIONS
// lists, the call made by the worker. Forwarding reads and checks its own setting.
// Across areas: forwarding → payments (the card and its CVC), through its index.

export const area: Area = {
  name: 'forwarding',
  routes: forwardingRequests.routes,
  objects: { [forwardingRequestSerializer.OBJECT]: { expandable: forwardingRequestSerializer.expandable } },
  workers: [forwardingWorker],
  // The API waits on each forward until its pickup deadline.
  reconcileFirst: [reconcileForwards],
  schedules: [forwardingPrune],
  checkConfig: (config) => void forwardingDestinations(config),
};
