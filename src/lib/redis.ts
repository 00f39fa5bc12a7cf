import { Redis } from 'ioredis';

export type { Redis };

/** BullMQ needs maxRetriesPerRequest=null on connections that block (workers). */
export function createRedis(url: string, options: { forWorker?: boolean } = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: options.forWorker ? null : 1,
    // Commands fail at once while Redis is away (a readiness probe must answer, not wait).
    enableOfflineQueue: options.forWorker === true,
    lazyConnect: false,
  });
}

/** Whether Redis answers within `timeoutMs` (a connection still being made gets that long to finish). */
export async function redisAnswers(redis: Redis, timeoutMs = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let onReady: (() => void) | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const ready = redis.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => redis.once('ready', (onReady = resolve)));
  const answered = ready.then(() => redis.ping()).then((r) => r === 'PONG', () => false);
  try {
    return await Promise.race([answered, timeout]);
  } finally {
    clearTimeout(timer);
    if (onReady) redis.off('ready', onReady);
  }
}
