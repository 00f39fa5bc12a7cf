import { Client } from 'pg';
import { applyMigrations, ensureDatabase } from '../../src/db/migrate';
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
// the migrations. Workers inherit the URLs through the environment.

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
}
