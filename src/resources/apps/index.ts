import type { Area } from '../area';
import * as appsSecrets from '../apps_secrets/routes';
import * as appsSecretSerializer from '../apps_secrets/serializer';
import { secretSweep } from '../apps_secrets/jobs';

// Apps: the secret store (secrets sealed at rest, swept when expired). No other area is imported.

export const area: Area = {
  name: 'apps',
  routes: appsSecrets.routes,
  objects: { [appsSecretSerializer.OBJECT]: { expandable: appsSecretSerializer.expandable } },
  schedules: [secretSweep],
};
