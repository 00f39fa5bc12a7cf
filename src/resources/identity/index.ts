import { expandableOnly, type Area } from '../area';
import * as identity from './verification/routes';
import * as identitySerializer from './verification/serializer';
import { identityWorker, reconcileIdentityJobs } from './verification/pipeline';

// Identity: verification sessions, their reports and the hosted test page; the worker finishes
// processing and redaction. No other area is imported.

export const area: Area = {
  name: 'identity',
  routes: identity.routes,
  objects: expandableOnly(identitySerializer.expandable),
  pages: identity.pages,
  workers: [identityWorker],
  reconcilers: [reconcileIdentityJobs],
  schemas: { identity_outcome: { type: 'string', enum: [...identitySerializer.OUTCOMES] } },
};
