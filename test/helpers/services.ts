import { execFileSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { settings } from '../../src/config';

// Where the suite finds PostgreSQL and Redis: the URLs given, or the defaults when a server
// answers there, or (only where a Docker engine exists) containers started by testcontainers.

/** Parallel runs on one server (several checkouts, say) each set their own TEST_DATABASE_NAME. */
export const TEST_DATABASE_NAME = process.env.TEST_DATABASE_NAME || 'sandbank_test';
if (!/^[a-z_][a-z0-9_]*$/.test(TEST_DATABASE_NAME)) throw new Error('TEST_DATABASE_NAME must be a plain lower-case identifier');

/** Whether the server answers; asks its `postgres` database, since the named one may not exist yet. */
export async function postgresAnswers(url: string): Promise<boolean> {
  const server = new URL(url);
  server.pathname = '/postgres';
  const client = new Client({ connectionString: server.toString(), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  redis.on('error', () => undefined); // refused while it is down: the answer is false
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export function dockerEngineAvailable(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

/** The server's maintenance database URL and the test database URL on the same server. */
export function testDatabaseUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${TEST_DATABASE_NAME}`;
  return url.toString();
}

export const defaultDatabaseUrl = (): string => settings.DATABASE_URL[0];
export const defaultRedisUrl = (): string => settings.REDIS_URL[0];
