'use strict';
// What a benchmark's service leaves behind: the bench database (dropped, created and migrated
// afresh, so every run starts empty; only one whose name contains "bench") and its queue keys in
// Redis (only a prefix that contains "bench").

const path = require('node:path');
const { Client } = require('pg');

async function resetBenchDatabase(databaseUrl) {
  const admin = new URL(databaseUrl);
  const name = admin.pathname.slice(1);
  if (!/bench/.test(name)) throw new Error(`${databaseUrl}: a bench database's name must contain "bench" (it is dropped)`);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.end();
  const { applyMigrations, ensureDatabase } = require(path.join(__dirname, '..', 'dist', 'src', 'db', 'migrate.js'));
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl, { log: () => undefined });
}

/** Deletes the keys of a bench queue prefix in Redis; answers how many. */
async function clearBenchQueue(redisUrl, prefix) {
  if (!/bench/i.test(prefix)) return 0;
  const { Redis } = require('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) deleted += await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

module.exports = { resetBenchDatabase, clearBenchQueue };
