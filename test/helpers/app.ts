import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import request from 'supertest';
import Stripe from 'stripe';
import { buildApp, type BuiltApp } from '../../src/app';
import { answerClientErrors } from '../../src/kernel/http';
import { deleteQueueKeys } from './isolation';
import { freePort } from './services';

export { freePort };
import { loadConfig, type Config } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { randomBase62 } from '../../src/lib/ids';
import type { Clock } from '../../src/lib/clock';
import { openRuntime, type Runtime } from '../../src/runtime';

// The app under test: the real kernel and resources against the test database and Redis,
// listening on an ephemeral port so the official SDK can reach it too.

export interface TestApp extends BuiltApp {
  readonly runtime: Runtime;
  readonly config: Config;
  readonly server: Server;
  readonly port: number;
  /** Every log line the app wrote, parsed. */
  readonly logs: Record<string, unknown>[];
  /** The raw log text, to search for things that must never be logged. */
  logText(): string;
  /** supertest bound to the app. */
  http(): ReturnType<typeof request>;
  /** The official SDK pointed at this app. */
  stripe(key: string, options?: Stripe.StripeConfig): Stripe;
  /** Runs `cleanup` when the app closes, before the app itself (a worker a fixture started, say). */
  onClose(cleanup: () => Promise<void>): void;
  close(): Promise<void>;
}

/** Forwarding destinations of test apps: the smallest config, as docs/forwarding.md gives it (any port of this machine, defaults otherwise). */
export const LOCAL_DESTINATIONS = JSON.stringify([{ url: 'http://127.0.0.1:', allow_private_network: true }]);

export const newTestKey = (): string => `sk_test_${randomBase62(24)}`;

export const bearer = (key: string): { Authorization: string } => ({ Authorization: `Bearer ${key}` });

/** A clock at the real time plus `aheadMs`, which a test moves forward to see things expire. */
export function aheadClock(): Clock & { aheadMs: number } {
  const clock = { aheadMs: 0, nowMs: () => Date.now() + clock.aheadMs };
  return clock;
}

/**
 * `publicUrl: true` listens on a free port chosen first and sets PUBLIC_URL to it, so the hosted
 * pages' links point at this app (for a browser to open).
 */
export async function startTestApp(env: Record<string, string> = {}, options: { clock?: Clock; publicUrl?: boolean } = {}): Promise<TestApp> {
  const listenPort = options.publicUrl ? await freePort() : 0;
  if (options.publicUrl) env = { PUBLIC_URL: `http://127.0.0.1:${listenPort}`, ...env };
  const config = loadConfig({
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'info',
    QUEUE_PREFIX: `test${randomBase62(8)}`,
    DATABASE_POOL_SIZE: '5',
    // Forwards may reach this machine (only: the suite runs with WEBHOOK_LOOPBACK_ONLY=true).
    FORWARDING_DESTINATIONS: LOCAL_DESTINATIONS,
    ...env,
  });
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const runtime = openRuntime(config, { logger, clock: options.clock });
  // As the API does at start (src/server.ts): keys loaded before any operation seals with them.
  // An app started on an unreachable database (to test just that) starts anyway.
  await runtime.encryption.ready().catch(() => undefined);
  const built = buildApp(runtime);
  const server = createServer(built.app);
  built.attachSockets(server);
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const cleanups: (() => Promise<void>)[] = [];
  return {
    ...built,
    runtime,
    config,
    server,
    port,
    get logs() {
      return chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    },
    logText: () => chunks.join(''),
    http: () => request(built.app),
    stripe: (key, stripeOptions = {}) =>
      new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false, ...stripeOptions }),
    onClose: (cleanup) => void cleanups.push(cleanup),
    async close() {
      for (const cleanup of cleanups.splice(0)) await cleanup();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await built.close();
      await runtime.close();
      // Each app has its own queue prefix; leave nothing of it behind in the shared Redis.
      await deleteQueueKeys(config.redisUrl, config.queuePrefix).catch(() => undefined);
    },
  };
}
