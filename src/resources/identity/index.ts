import { expandableOnly, type Area } from '../area';
import * as identity from '../identity/routes';
import * as identitySerializer from '../identity/serializer';
import { identityWorker, reconcileIdentityJobs } from '../identity/pipeline';

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
