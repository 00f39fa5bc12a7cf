import type { Area } from '../area';
import * as appsSecrets from './secrets/routes';
import * as appsSecretSerializer from './secrets/serializer';
import { secretSweep } from './secrets/jobs';

// Apps: the secret store (secrets sealed at rest, swept when expired). No other area is imported.

export const area: Area = {
  name: 'apps',
  routes: appsSecrets.routes,
  objects: { [appsSecretSerializer.OBJECT]: { expandable: appsSecretSerializer.expandable } },
  schedules: [secretSweep],
};
