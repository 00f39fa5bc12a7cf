import { Client } from 'pg';
import { Redis } from 'ioredis';
import { applyMigrations, ensureDatabase } from '../../src/db/migrate';
import { TEST_DATABASE_NAME } from './services';

// Test files that run workers get a database of their own. The reconciler works on the whole
// database, so workers of another test file would otherwise pick up this file's deliveries
// (with their own retry schedule and timeout) and make its tests flaky.

export interface PrivateDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

function adminUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  return url.toString();
}

async function dropDatabase(databaseUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl(databaseUrl) });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database `<TEST_DATABASE_NAME>_<label>` on the test server. */
export async function privateDatabase(label: string): Promise<PrivateDatabase> {
  if (!/^[a-z0-9_]+$/.test(label)) throw new Error('label must be lower-case letters, digits and _');
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is not set (globalSetup sets it)');
  const name = `${TEST_DATABASE_NAME}_${label}`;
  const url = new URL(base);
  url.pathname = `/${name}`;
  await dropDatabase(base, name);
  await ensureDatabase(url.toString());
  await applyMigrations(url.toString(), { log: () => undefined });
  return { url: url.toString(), drop: () => dropDatabase(base, name) };
}

/**
 * What a Redis that lost its data looks like to one app: every key under its queue prefix is
 * gone (SCAN + DEL, never FLUSHALL: other suites share this Redis). Returns how many were deleted.
 */
export async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** How many keys exist under a queue prefix. */
export async function countQueueKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  let count = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return count;
}
