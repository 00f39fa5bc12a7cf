import type { Schedule } from '../../../kernel/route';
import { purgeExpiredCvcs } from './service';

/** Deletes the card CVCs past their CARD_CVC_TTL_SECONDS. */
export const cvcPurge: Schedule = {
  name: 'purge-cvcs',
  everyMs: (config) => config.secretSweepIntervalMs,
  run: async ({ prisma }, now) => ({ purged: await purgeExpiredCvcs(prisma, now) }),
};
