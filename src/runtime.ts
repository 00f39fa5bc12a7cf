import type { AppDeps } from './app';
import type { Config } from './config';
import { systemClock, type Clock } from './lib/clock';
import { createLogger, type Logger } from './lib/logger';
import { createPrisma } from './lib/prisma';
import { createRedis } from './lib/redis';
import { applyMigrations, ensureDatabase } from './db/migrate';
import { EventJobs } from './events/jobs';
import { Encryption } from './lib/encryption';
import { IdentityJobs } from './resources/identity/jobs';

export interface Runtime extends AppDeps {
  close(): Promise<void>;
}

/** Opens the shared clients of one process. */
export function openRuntime(config: Config, options: { logger?: Logger; clock?: Clock } = {}): Runtime {
  const logger = options.logger ?? createLogger(config.logLevel);
  const prisma = createPrisma(config.databaseUrl, config.databasePoolSize);
  const redis = createRedis(config.redisUrl);
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const jobs = new EventJobs(config, logger);
  const encryption = new Encryption(prisma, config.secretsEncryptionKey, logger);
  const identity = new IdentityJobs(config, logger);
  return {
    config,
    logger,
    clock: options.clock ?? systemClock,
    prisma,
    redis,
    jobs,
    encryption,
    identity,
    async close() {
      await Promise.allSettled([jobs.close(), identity.close(), prisma.$disconnect(), redis.quit()]);
    },
  };
}

/** Creates the database when missing and applies pending migrations (safe to run from several processes). */
export async function prepareDatabase(config: Config, logger: Logger): Promise<void> {
  if (await ensureDatabase(config.databaseUrl)) logger.info('created the database');
  const applied = await applyMigrations(config.databaseUrl, { log: (msg) => logger.info(msg) });
  if (applied.length > 0) logger.info({ migrations: applied }, 'applied migrations');
}

/** Runs `stop` once on SIGTERM or SIGINT, then exits; a second signal exits at once. */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
