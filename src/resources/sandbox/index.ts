import type { Area } from '../area';
import * as sandboxData from './data/routes';
import * as sandboxDataSerializer from './data/serializer';

// Sandbox: deleting a platform's data (DELETE /sandbox/v1/data). It deletes rows of every area's
// tables by SQL, and imports no other area.

export const area: Area = {
  name: 'sandbox',
  routes: sandboxData.routes,
  objects: { [sandboxDataSerializer.OBJECT]: { expandable: sandboxDataSerializer.expandable } },
};
