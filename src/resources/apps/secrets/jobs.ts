import type { Schedule } from '../../../kernel/route';
import { sweepExpiredSecrets } from './service';

/** Deletes the secrets past their expires_at (reads already treat them as gone). */
export const secretSweep: Schedule = {
  name: 'sweep-secrets',
  everyMs: (config) => config.secretSweepIntervalMs,
  run: async ({ prisma }, now) => ({ swept: await sweepExpiredSecrets(prisma, now) }),
};
