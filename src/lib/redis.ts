import { Redis } from 'ioredis';

export type { Redis };

/** BullMQ needs maxRetriesPerRequest=null on connections that block (workers). */
export function createRedis(url: string, options: { forWorker?: boolean } = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: options.forWorker ? null : 2,
    enableOfflineQueue: true,
    lazyConnect: false,
  });
}
