import type { ProcessDeps } from './kernel/route';
import { ConfigError, type Config } from './config';
import { systemClock, type Clock } from './lib/clock';
import { createLogger, type Logger } from './lib/logger';
import { createDatabase } from './lib/prisma';
import { PoolSql } from './lib/sql';
import { writeThrough } from './kernel/writes';
import { createRedis } from './lib/redis';
import { causeOf, healingLog } from './lib/healingLog';
import { applyMigrations, ensureDatabase, MigrationError } from './db/migrate';
import { explainDatabaseError } from './db/connectError';
import { Encryption } from './lib/encryption';
import { JobQueues } from './lib/queue';
import { SHUTDOWN_MESSAGE } from './cluster';
import { Notifications } from './lib/pgNotify';
import { checkConfig, versions } from './resources';
import { sealPlaintextSecrets } from './resources/webhooks';

export interface Runtime extends ProcessDeps {
  close(): Promise<void>;
}

/** Opens the shared clients of one process. */
export function openRuntime(config: Config, options: { logger?: Logger; clock?: Clock } = {}): Runtime {
  // Each area's own settings (forwarding's destinations): a bad one stops start-up before any client opens.
  checkConfig(config);
  const logger = options.logger ?? createLogger(config.logLevel);
  const { prisma, pool } = createDatabase(config.databaseUrl, config.databasePoolSize, logger);
  const sql = new PoolSql(pool);
  const redis = createRedis(config.redisUrl);
  redis.on('error', (err) => healingLog(logger).warn(`redis connection error: ${causeOf(err)}`, { err: err.message }, 'redis connection error'));
  const queues = new JobQueues(config, logger);
  const encryption = new Encryption(prisma, config, logger);
  const notifications = new Notifications(config.databaseUrl, logger);
  return {
    config,
    logger,
    clock: options.clock ?? systemClock,
    prisma,
    sql,
    write: writeThrough(sql),
    redis,
    queues,
    encryption,
    notifications,
    versions,
    async close() {
      await Promise.allSettled([queues.close(), notifications.close(), prisma.$disconnect(), redis.quit().catch(() => redis.disconnect())]);
    },
  };
}

/** Creates the database when missing and applies pending migrations (safe to run from several processes). */
export async function prepareDatabase(config: Config, logger: Logger): Promise<void> {
  try {
    if (await ensureDatabase(config.databaseUrl)) logger.info('created the database');
    const applied = await applyMigrations(config.databaseUrl, { log: (msg) => logger.info(msg) });
    if (applied.length > 0) logger.info({ migrations: applied }, 'applied migrations');
  } catch (err) {
    const explained = explainDatabaseError(err, config.databaseUrl);
    if (explained) throw new StartupError(explained);
    if (err instanceof MigrationError) throw new StartupError(err.message);
    throw err;
  }
}

/** How long this process took to start, in wall time and in CPU time (logged with its ready line). */
export function startTimes(): { startMs: number; startCpuMs: number } {
  const cpu = process.cpuUsage();
  return { startMs: Math.round(process.uptime() * 1000), startCpuMs: Math.round((cpu.user + cpu.system) / 1000) };
}

/** A start-up failure that one line explains (printed without a stack). */
export class StartupError extends Error {}

/**
 * Loads the keys for secrets at rest (in production, without a key, this refuses to start) and
 * seals the webhook signing secrets earlier versions kept in plain text. Every process runs it at
 * start; running it from several at once is safe. With `sealInBackground` (the services' starts)
 * only the keys are waited for: the sweep reads every stored response, which grows with the
 * idempotency records, and readers already take a value sealed or not.
 */
export async function prepareSecrets(runtime: Runtime, options: { sealInBackground?: boolean } = {}): Promise<void> {
  await runtime.encryption.ready();
  const sealing = sealPlaintextSecrets(runtime).then((sealed) => {
    if (sealed > 0) runtime.logger.info({ sealed }, 'sealed webhook signing secrets kept in plain text by an earlier version');
  });
  if (!options.sealInBackground) return sealing;
  // The next start seals what a failed or interrupted sweep left.
  sealing.catch((err: unknown) => runtime.logger.warn({ err: err instanceof Error ? err.message : err }, 'sealing plain-text secrets failed; the next start tries again'));
}

/** A process that can't start exits with the reason: one line for a setting's problem. */
export function failStartup(err: unknown): never {
  console.error(err instanceof ConfigError || err instanceof StartupError ? err.message : err);
  process.exit(1);
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
  // An API process of a cluster: its primary asks it to stop (after a terminal's SIGINT reached both, too).
  process.on('message', (message) => {
    if (message === SHUTDOWN_MESSAGE && !stopping) handler('primary');
  });
}
