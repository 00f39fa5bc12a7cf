import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { applyMigrations, ensureDatabase } from '../../src/db/migrate';
import { BROWSER_TEST_MODE, MISSING_CHROMIUM } from './browser';
import {
  defaultDatabaseUrl,
  defaultRedisUrl,
  dockerEngineAvailable,
  postgresAnswers,
  redisAnswers,
  TEST_DATABASE_NAME,
  testDatabaseUrl,
} from './services';

// Runs once before the suite: finds PostgreSQL and Redis, then recreates the test database from
// the migrations. Workers inherit the URLs, DATA_DIR and WEBHOOK_LOOPBACK_ONLY through the environment.

async function startContainers(need: { postgres: boolean; redis: boolean }): Promise<{ databaseUrl?: string; redisUrl?: string }> {
  // Loaded only here: testcontainers needs a Docker engine, which most machines running the suite lack.
  const { GenericContainer, Wait } = await import('testcontainers');
  const out: { databaseUrl?: string; redisUrl?: string } = {};
  const started: { stop(): Promise<unknown> }[] = [];
  if (need.postgres) {
    const pg = await new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start();
    started.push(pg);
    out.databaseUrl = `postgresql://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
  }
  if (need.redis) {
    const redis = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
    started.push(redis);
    out.redisUrl = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
  }
  (globalThis as any).__SANDBANK_CONTAINERS__ = started;
  return out;
}

async function recreateDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${TEST_DATABASE_NAME}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  await ensureDatabase(url);
  await applyMigrations(url, { log: () => undefined });
}

export default async function globalSetup(): Promise<void> {
  if (BROWSER_TEST_MODE === 'skip') {
    console.warn(`\n\x1b[1;33m!!! SKIPPING the browser tests (hosted pages): ${MISSING_CHROMIUM} to run them; with CI=true they fail instead.\x1b[0m`);
  }
  let serverUrl = process.env.DATABASE_URL ?? defaultDatabaseUrl();
  let redisUrl = process.env.REDIS_URL ?? defaultRedisUrl();
  const need = {
    postgres: !process.env.DATABASE_URL && !(await postgresAnswers(serverUrl)),
    redis: !process.env.REDIS_URL && !(await redisAnswers(redisUrl)),
  };
  if (need.postgres || need.redis) {
    if (!dockerEngineAvailable()) {
      throw new Error(
        `No ${need.postgres ? 'PostgreSQL' : 'Redis'} answers at ${need.postgres ? serverUrl : redisUrl} and there is no Docker engine to start one. ` +
          'Start the services or set DATABASE_URL / REDIS_URL.',
      );
    }
    const started = await startContainers(need);
    serverUrl = started.databaseUrl ?? serverUrl;
    redisUrl = started.redisUrl ?? redisUrl;
  }
  const databaseUrl = testDatabaseUrl(serverUrl);
  await recreateDatabase(databaseUrl);
  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = redisUrl;
  process.env.SANDBANK_TEST_SERVER_URL = serverUrl;
  // Every app and worker of the suite delivers only to this machine: a test endpoint naming
  // another host is refused (and recorded as refused) instead of reaching the network.
  process.env.WEBHOOK_LOOPBACK_ONLY = 'true';
  // The suite's key file (the apps under test share it, as a deployment's processes do) lives in
  // a folder of its own, never in the checkout; the teardown removes it.
  process.env.DATA_DIR = (globalThis as any).__SANDBANK_DATA_DIR__ = mkdtempSync(path.join(tmpdir(), 'sandbank-test-data-'));
}
