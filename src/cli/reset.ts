// `npm run reset -- --yes`: wipes the whole local sandbox: drops the database named by
// DATABASE_URL, recreates it from the migrations, and deletes the queue keys (QUEUE_PREFIX) from
// Redis. API keys and accounts go too. Refused with NODE_ENV=production. To wipe only one key's
// data, while the service runs, use `DELETE /sandbox/v1/data` with that key.

import { Client } from 'pg';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../config';
import { applyMigrations, ensureDatabase } from '../db/migrate';
import { explainDatabaseError, redactedDatabaseUrl } from '../db/connectError';

export async function resetEverything(config: Config): Promise<{ queueKeys: number }> {
  const url = new URL(config.databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name || name === 'postgres') throw new Error(`DATABASE_URL names "${name}", which reset won't drop`);
  const admin = new URL(url.toString());
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  await ensureDatabase(config.databaseUrl);
  await applyMigrations(config.databaseUrl, { log: () => undefined });
  return { queueKeys: await deleteQueueKeys(config) };
}

/** Jobs name rows that are gone now; a Redis that is down has nothing to say about them later either. */
async function deleteQueueKeys(config: Config): Promise<number> {
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: true });
  redis.on('error', () => undefined);
  let deleted = 0;
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.queuePrefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } catch {
    console.error(`Redis at ${config.redisUrl} did not answer; its queue keys (${config.queuePrefix}:*) were left`);
  } finally {
    redis.disconnect();
  }
  return deleted;
}

async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  if (config.nodeEnv === 'production') {
    console.error('refusing to reset: NODE_ENV is production');
    return 1;
  }
  if (!argv.includes('--yes')) {
    console.error(`this deletes everything in ${redactedDatabaseUrl(config.databaseUrl)} and the ${config.queuePrefix}:* keys in Redis; run \`npm run reset -- --yes\` to go ahead`);
    return 2;
  }
  try {
    const { queueKeys } = await resetEverything(config);
    console.error(`reset ${redactedDatabaseUrl(config.databaseUrl)} (recreated from the migrations) and deleted ${queueKeys} queue keys`);
    return 0;
  } catch (err) {
    console.error(explainDatabaseError(err, config.databaseUrl) ?? `reset failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
