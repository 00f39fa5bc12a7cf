// Every setting is read here, once, from the environment. Nothing else reads process.env.

import { isIP } from 'node:net';
import { normalizeHost } from './lib/netguard';
import { CONTRACT_API_VERSION, isApiVersion, LATEST_API_VERSION } from './kernel/versions';

export type AuthMode = 'open' | 'registered';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly publicUrl: string;
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  readonly redisUrl: string;
  readonly queuePrefix: string;
  readonly authMode: AuthMode;
  readonly apiKeyCacheSeconds: number;
  /** Requests per second per platform account, across the API; 0: no limit. */
  readonly apiRateLimit: number;
  /** Requests per second per platform account to the sandbox resend; 0: no limit. */
  readonly resendRateLimit: number;
  /** The version of platforms none of whose requests pinned one yet. */
  readonly defaultApiVersion: string;
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly paramDepthLimit: number;
  readonly paramCountLimit: number;
  readonly idempotencyTtlHours: number;
  readonly maxWebhookEndpoints: number;
  readonly maintenanceIntervalMs: number;
  readonly shutdownTimeoutMs: number;
  /** API processes of a cluster (0: one per core; see `apiProcessCount`); 1 runs the API in the process itself. */
  readonly apiProcesses: number;
  readonly webhookTimeoutMs: number;
  /** Seconds to wait before each retry; its length is the number of retries. */
  readonly webhookRetrySchedule: readonly number[];
  readonly webhookAllowPrivateNetwork: boolean;
  /** Host names as the URL parser writes them (lower case, IPv6 without brackets, no trailing dot). */
  readonly webhookAllowedHosts: readonly string[];
  readonly webhookLoopbackOnly: boolean;
  readonly reconcileIntervalMs: number;
  readonly eventRetentionDays: number;
  readonly workerMetricsPort: number;
  readonly accountSessionTtlSeconds: number;
  readonly accountLinkTtlSeconds: number;
  readonly loginLinkTtlSeconds: number;
  /** Base64, or '' to use the newest key of the key file in dataDir. */
  readonly secretsEncryptionKey: string;
  /** Where the key file lives; relative paths are relative to the working directory. */
  readonly dataDir: string;
  /** `production` never generates a key: it starts only with a configured key or an existing key file. */
  readonly nodeEnv: string;
  readonly secretSweepIntervalMs: number;
  /** How long a card payment method's CVC is kept when no forward uses it up. */
  readonly cardCvcTtlSeconds: number;
  /** How long a 3-D Secure challenge stays open before the worker fails its intent. */
  readonly threeDSecureTtlSeconds: number;
  /** How long a console session lives without a request, and at most (src/console/sessions.ts). */
  readonly consoleSessionIdleSeconds: number;
  readonly consoleSessionMaxSeconds: number;
  readonly identityProcessingDelayMs: number;
  readonly redactionDelayMs: number;
  /** FORWARDING_DESTINATIONS as written: forwarding parses and checks it (its `destinations.ts`) as a process starts. */
  readonly forwardingDestinations: string;
  /** How long a forward waits for a worker to take it before it fails. */
  readonly forwardingPickupTimeoutMs: number;
  /** How often the waiting API re-adds the job of a forward no worker took yet (Redis may have lost it). */
  readonly forwardingRequeueMs: number;
  /** How many forwards one worker process sends at once. */
  readonly forwardingConcurrency: number;
  readonly fcRefreshDelayMs: number;
  /** How long after an `automatic_async` capture its charge's balance transaction is settled by the worker. */
  readonly asyncCaptureDelayMs: number;
  readonly fcRefreshCooldownSeconds: number;
  readonly fcSubscriptionIntervalMs: number;
  readonly fcDeactivationDelayMs: number;
  /** How long after its creation a refund of 4000000000005126 fails. */
  readonly refundFailureDelayMs: number;
  /** BILLING_RETRY_SCHEDULE as written: billing parses and checks it (invoices/retries.ts) as a process starts. */
  readonly billingRetrySchedule: string;
  /** A fixtures file the API applies at start ('' for none). */
  readonly seedFile: string;
  /** The key SEED_FILE's requests (and `npm run seed`'s, by default) are made with. */
  readonly seedApiKey: string;
}

/** Name, default and one-line meaning of every setting; .env.example and the table in docs/configuration.md follow it. */
export const settings = {
  HOST: ['127.0.0.1', 'Address the API (with its hosted pages and /metrics) and a worker\'s metrics listen on; 0.0.0.0 for every interface (the Docker image sets it)'],
  PORT: ['12111', 'HTTP port of the API'],
  PUBLIC_URL: ['http://localhost:<PORT>', 'Base URL of hosted pages (onboarding, verification)'],
  DATABASE_URL: ['postgresql://postgres@127.0.0.1:5432/sandbank', 'PostgreSQL connection string; the database is created when missing'],
  DATABASE_POOL_SIZE: ['10', 'PostgreSQL connections per process'],
  REDIS_URL: ['redis://127.0.0.1:6379', 'Redis connection string for the BullMQ queues'],
  QUEUE_PREFIX: ['sandbank', 'Key prefix of the BullMQ queues in Redis'],
  AUTH_MODE: ['open', '`open`: any well-formed sk_test_ key works (pk_test_X is the publishable key of sk_test_X\'s account); `registered`: only keys made by `npm run keys -- create`'],
  API_KEY_CACHE_SECONDS: ['60', 'How long an API process remembers a key it looked up; a revoked key stops working within this (0: look up every request)'],
  API_RATE_LIMIT: ['0', 'Requests per second one platform account (a key and its connected accounts) may make, counted per API process; more get 429 `rate_limit` (0: no limit)'],
  RESEND_RATE_LIMIT: ['0', 'Requests per second one platform account may make to the sandbox resend, on top of API_RATE_LIMIT, counted per API process (0: no limit)'],
  DEFAULT_API_VERSION: [CONTRACT_API_VERSION, 'API version of a platform until one of its requests sends `Stripe-Version` (the first that does pins it as the platform default); requests without the header and events without an endpoint version use it. The default is the contract\'s version; newer ones answer any request or key that pins them'],
  LOG_LEVEL: ['info', 'pino log level (fatal, error, warn, info, debug, trace, silent)'],
  BODY_LIMIT_BYTES: ['262144', 'Largest accepted request body'],
  PARAM_DEPTH_LIMIT: ['8', 'Deepest accepted bracket nesting in parameters'],
  PARAM_COUNT_LIMIT: ['2000', 'Most parameters accepted in one request'],
  IDEMPOTENCY_TTL_HOURS: ['24', 'How long idempotent results are kept'],
  MAX_WEBHOOK_ENDPOINTS: ['16', 'Most webhook endpoints one account may have (the public API allows 16)'],
  MAINTENANCE_INTERVAL_MS: ['3600000', 'How often the worker prunes expired idempotency records, old events and long-expired links'],
  SHUTDOWN_TIMEOUT_MS: ['10000', 'How long SIGTERM waits for in-flight requests and jobs'],
  API_PROCESSES: ['0', 'How many API processes serve the port (node\'s cluster; the workers stay in the first process under `npm start`); 0: one per core'],
  WEBHOOK_TIMEOUT_MS: ['10000', 'How long one webhook delivery attempt may take'],
  WEBHOOK_RETRY_SCHEDULE: ['60,300,1800,3600,7200', 'Seconds before each retry of a failed delivery (jittered); after the last, the delivery fails'],
  WEBHOOK_ALLOW_PRIVATE_NETWORK: ['true', 'Whether deliveries may reach private and loopback addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, 127/8, ::1); set `false` on a shared deployment. Link-local and cloud metadata addresses are always refused'],
  WEBHOOK_ALLOWED_HOSTS: ['', 'Comma-separated host names whose deliveries may reach private and loopback addresses even when WEBHOOK_ALLOW_PRIVATE_NETWORK is `false` (your own receivers)'],
  WEBHOOK_LOOPBACK_ONLY: ['false', '`true`: deliveries may only reach loopback addresses, and names other than `localhost` are not even looked up; the test suite and benchmarks run with it'],
  RECONCILE_INTERVAL_MS: ['5000', 'How often the worker rebuilds from the database what Redis lost (fan-outs, deliveries, each resource\'s due jobs, maintenance schedules); it also runs when Redis reconnects'],
  EVENT_RETENTION_DAYS: ['30', 'Events older than this are pruned'],
  WORKER_METRICS_PORT: ['12112', 'Port of /metrics in a worker run on its own (`npm run start:worker`); 0 turns it off'],
  ACCOUNT_SESSION_TTL_SECONDS: ['1800', 'How long an account session\'s client secret can be claimed'],
  ACCOUNT_LINK_TTL_SECONDS: ['300', 'How long an account link\'s URL can be opened (once)'],
  LOGIN_LINK_TTL_SECONDS: ['300', 'How long a login link\'s URL (an Express account\'s dashboard) can be opened (once)'],
  SECRETS_ENCRYPTION_KEY: ['', 'Base64 of 32 bytes: the AES-256-GCM key for secrets at rest; empty: the newest key of the key file in DATA_DIR'],
  DATA_DIR: ['data', 'Directory of the key file for secrets at rest, `encryption-keys.json` (generated at the first start unless NODE_ENV=production); back it up: losing it loses every sealed value'],
  NODE_ENV: ['', '`production`: refuse to start unless SECRETS_ENCRYPTION_KEY is set or the key file exists (no key is generated)'],
  SECRET_SWEEP_INTERVAL_MS: ['60000', 'How often the worker deletes app secrets past their expires_at (reads never return them anyway), and card CVCs past CARD_CVC_TTL_SECONDS'],
  CARD_CVC_TTL_SECONDS: ['3600', 'How long a card payment method keeps its CVC (sealed) when no forward uses it up first'],
  THREE_D_SECURE_TTL_SECONDS: ['3600', 'How long a 3-D Secure challenge page stays open; unanswered by then, it fails its PaymentIntent or SetupIntent'],
  CONSOLE_SESSION_IDLE_SECONDS: ['7200', 'How long a console session lasts without a request (its cookie and its row); then the browser signs in again'],
  CONSOLE_SESSION_MAX_SECONDS: ['43200', 'How long a console session lasts at most, however busy'],
  IDENTITY_PROCESSING_DELAY_MS: ['2000', 'How long a submitted verification session stays `processing` before its outcome'],
  REDACTION_DELAY_MS: ['5000', 'How long a verification session redaction takes (the public API allows up to four days, the most accepted)'],
  FORWARDING_DESTINATIONS: ['', 'Where forwarding requests may go: inline JSON or a JSON file\'s path, an array of destinations (`url` prefix, `credential_sha256`, `timeout_ms`, `signature_key`, `allow_private_network`, …; see Forwarding requests); empty: every URL is refused'],
  FORWARDING_PICKUP_TIMEOUT_MS: ['30000', 'How long a forwarding request waits for a worker to take it before it fails (`forwarding_api_retryable_upstream_error`; nothing was sent): long enough for a short Redis or PostgreSQL outage and a backlog to pass'],
  FORWARDING_CONCURRENCY: ['64', 'How many forwarding requests one worker process sends at once; each mostly waits on its destination, and after a worker restart the backlog must be taken before FORWARDING_PICKUP_TIMEOUT_MS passes'],
  FORWARDING_REQUEUE_MS: ['2000', 'How often a forwarding request that no worker took yet has its job re-added by the API waiting on it (Redis may have lost it in a flush; adding it while Redis holds it does nothing), besides the reconciler, which re-adds forwards before anything else'],
  ASYNC_CAPTURE_DELAY_MS: ['1000', 'How long after an `automatic_async` capture the worker settles its charge (balance_transaction, charge.updated)'],
  FC_REFRESH_DELAY_MS: ['2000', 'How long a Financial Connections refresh stays `pending` before the worker finishes it'],
  FC_REFRESH_COOLDOWN_SECONDS: ['60', 'After a refresh succeeded, how long until the next one of that feature can start (`next_refresh_available_at`)'],
  FC_SUBSCRIPTION_INTERVAL_MS: ['86400000', 'How often a subscribed, active Financial Connections account has its transactions refreshed (the public API: about daily)'],
  FC_DEACTIVATION_DELAY_MS: ['10000', 'How long after linking an account of the Inactive Accounts test institution goes `inactive`'],
  REFUND_FAILURE_DELAY_MS: ['5000', 'How long a refund of the test card 4000000000005126 stays `succeeded` before it fails (`expired_or_canceled_card`)'],
  BILLING_RETRY_SCHEDULE: ['', 'When a subscription\'s declined invoice is charged again, as inline JSON: `{"default": {…}, "acct_…": {…}}`, each entry `days` (days between attempts, one retry each), `subscription` after the last retry fails (`canceled`, `unpaid` or `past_due`) and `invoice` (`uncollectible` or `open`); a platform\'s entry covers its connected accounts (see Billing); empty: 8 retries in 14 days, `[1,2,2,2,2,2,2,1]`, then `canceled`, the invoice left `open`'],
  SEED_FILE: ['', 'A fixtures file (JSON or YAML, the Stripe CLI\'s format) the API applies at start, before it listens; each fixture once per account, so restarts add only new ones (see Seed data)'],
  SEED_API_KEY: ['', 'The test key whose account SEED_FILE\'s objects belong to (required with SEED_FILE), and `npm run seed`\'s key when `--api-key` is not given'],
} as const satisfies Record<string, readonly [string, string]>;

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

/**
 * Every variable, for the fixtures' `${.env:NAME}` references, which may name any variable: they
 * read it from here, so that process.env is still read in this file only.
 */
export const environment = (): Readonly<Env> => Object.freeze({ ...process.env });

function integer(env: Env, name: keyof typeof settings, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name] ?? settings[name][0];
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function secondsList(env: Env, name: keyof typeof settings): number[] {
  const raw = env[name] ?? settings[name][0];
  const values = raw.split(',').map((v) => v.trim());
  if (raw.trim() === '') return [];
  if (!values.every((v) => /^\d+$/.test(v))) throw new ConfigError(`${name} must be comma-separated whole seconds, got "${raw}"`);
  return values.map(Number);
}

function boolean(env: Env, name: keyof typeof settings): boolean {
  const raw = env[name] || settings[name][0];
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be "true" or "false", got "${raw}"`);
  return raw === 'true';
}

/** Comma-separated host names, normalised as the URL parser writes a URL's host (so they compare equal). */
function hostList(env: Env, name: keyof typeof settings): string[] {
  const raw = env[name] ?? settings[name][0];
  return raw
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean)
    .map((host) => {
      const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
      let parsed: URL | undefined;
      try {
        parsed = new URL(`http://${bracketed}/`);
      } catch {
        parsed = undefined;
      }
      // A scheme, port, path or user would change what was parsed; only a bare host comes back whole.
      if (!parsed || parsed.host !== parsed.hostname || parsed.pathname !== '/' || parsed.username || /[/?#@]/.test(host)) {
        throw new ConfigError(`${name} must be comma-separated host names, got "${host}"`);
      }
      return normalizeHost(parsed.hostname);
    });
}

function apiVersion(env: Env, name: keyof typeof settings): string {
  const raw = env[name] || settings[name][0];
  if (!isApiVersion(raw)) throw new ConfigError(`${name} must be an API version Sandbank knows (such as ${LATEST_API_VERSION}), got "${raw}"`);
  return raw;
}

function encryptionKey(env: Env): string {
  const raw = env.SECRETS_ENCRYPTION_KEY ?? settings.SECRETS_ENCRYPTION_KEY[0];
  if (raw !== '' && Buffer.from(raw, 'base64').length !== 32) {
    throw new ConfigError('SECRETS_ENCRYPTION_KEY must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)');
  }
  return raw;
}

/** An IP address or a host name to listen on. */
function host(env: Env): string {
  const raw = env.HOST || settings.HOST[0];
  if (isIP(raw) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(raw)) {
    throw new ConfigError(`HOST must be an IP address or a host name, got "${raw}"`);
  }
  return raw;
}

function url(env: Env, name: keyof typeof settings, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}`);
  return raw;
}

/** SEED_FILE needs a key to act with; there is no default key, since the key decides whose account the objects join. */
function seedSettings(env: Env): Pick<Config, 'seedFile' | 'seedApiKey'> {
  const seedFile = env.SEED_FILE ?? settings.SEED_FILE[0];
  const seedApiKey = env.SEED_API_KEY ?? settings.SEED_API_KEY[0];
  if (seedApiKey !== '' && !/^(sk|rk)_test_/.test(seedApiKey)) throw new ConfigError('SEED_API_KEY must be a test key (sk_test_… or rk_test_…)');
  if (seedFile !== '' && seedApiKey === '') throw new ConfigError('SEED_FILE needs SEED_API_KEY: the test key whose account the seeded objects belong to');
  return { seedFile, seedApiKey };
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 0, 65535);
  const authMode = env.AUTH_MODE ?? settings.AUTH_MODE[0];
  if (authMode !== 'open' && authMode !== 'registered') throw new ConfigError('AUTH_MODE must be "open" or "registered"');
  const queuePrefix = env.QUEUE_PREFIX || settings.QUEUE_PREFIX[0];
  if (queuePrefix.includes(':')) throw new ConfigError('QUEUE_PREFIX must not contain ":"');
  return Object.freeze({
    host: host(env),
    port,
    publicUrl: url(env, 'PUBLIC_URL', `http://localhost:${port}`, ['http:', 'https:']).replace(/\/+$/, ''),
    databaseUrl: url(env, 'DATABASE_URL', settings.DATABASE_URL[0], ['postgresql:', 'postgres:']),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 1, 1000),
    redisUrl: url(env, 'REDIS_URL', settings.REDIS_URL[0], ['redis:', 'rediss:']),
    queuePrefix,
    authMode,
    apiKeyCacheSeconds: integer(env, 'API_KEY_CACHE_SECONDS', 0, 86400),
    apiRateLimit: integer(env, 'API_RATE_LIMIT', 0, 1_000_000),
    resendRateLimit: integer(env, 'RESEND_RATE_LIMIT', 0, 1_000_000),
    defaultApiVersion: apiVersion(env, 'DEFAULT_API_VERSION'),
    logLevel: env.LOG_LEVEL || settings.LOG_LEVEL[0],
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024),
    paramDepthLimit: integer(env, 'PARAM_DEPTH_LIMIT', 1, 64),
    paramCountLimit: integer(env, 'PARAM_COUNT_LIMIT', 1, 100000),
    idempotencyTtlHours: integer(env, 'IDEMPOTENCY_TTL_HOURS', 24),
    maxWebhookEndpoints: integer(env, 'MAX_WEBHOOK_ENDPOINTS', 1),
    maintenanceIntervalMs: integer(env, 'MAINTENANCE_INTERVAL_MS', 1000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 0),
    apiProcesses: integer(env, 'API_PROCESSES', 0, 256),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 1),
    webhookRetrySchedule: Object.freeze(secondsList(env, 'WEBHOOK_RETRY_SCHEDULE')),
    webhookAllowPrivateNetwork: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORK'),
    webhookAllowedHosts: Object.freeze(hostList(env, 'WEBHOOK_ALLOWED_HOSTS')),
    webhookLoopbackOnly: boolean(env, 'WEBHOOK_LOOPBACK_ONLY'),
    reconcileIntervalMs: integer(env, 'RECONCILE_INTERVAL_MS', 100),
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 1),
    workerMetricsPort: integer(env, 'WORKER_METRICS_PORT', 0, 65535),
    accountSessionTtlSeconds: integer(env, 'ACCOUNT_SESSION_TTL_SECONDS', 1, 86400),
    accountLinkTtlSeconds: integer(env, 'ACCOUNT_LINK_TTL_SECONDS', 1, 86400),
    loginLinkTtlSeconds: integer(env, 'LOGIN_LINK_TTL_SECONDS', 1, 86400),
    secretsEncryptionKey: encryptionKey(env),
    dataDir: env.DATA_DIR || settings.DATA_DIR[0],
    nodeEnv: env.NODE_ENV ?? settings.NODE_ENV[0],
    secretSweepIntervalMs: integer(env, 'SECRET_SWEEP_INTERVAL_MS', 100),
    cardCvcTtlSeconds: integer(env, 'CARD_CVC_TTL_SECONDS', 1, 86400),
    threeDSecureTtlSeconds: integer(env, 'THREE_D_SECURE_TTL_SECONDS', 1, 86400),
    consoleSessionIdleSeconds: integer(env, 'CONSOLE_SESSION_IDLE_SECONDS', 60, 30 * 86400),
    consoleSessionMaxSeconds: integer(env, 'CONSOLE_SESSION_MAX_SECONDS', 60, 30 * 86400),
    identityProcessingDelayMs: integer(env, 'IDENTITY_PROCESSING_DELAY_MS', 0, 86400000),
    redactionDelayMs: integer(env, 'REDACTION_DELAY_MS', 0, 4 * 86400000),
    forwardingDestinations: env.FORWARDING_DESTINATIONS ?? settings.FORWARDING_DESTINATIONS[0],
    forwardingPickupTimeoutMs: integer(env, 'FORWARDING_PICKUP_TIMEOUT_MS', 100, 600000),
    forwardingRequeueMs: integer(env, 'FORWARDING_REQUEUE_MS', 100, 600000),
    forwardingConcurrency: integer(env, 'FORWARDING_CONCURRENCY', 1, 1024),
    fcRefreshDelayMs: integer(env, 'FC_REFRESH_DELAY_MS', 0, 86400000),
    asyncCaptureDelayMs: integer(env, 'ASYNC_CAPTURE_DELAY_MS', 0, 86400000),
    fcRefreshCooldownSeconds: integer(env, 'FC_REFRESH_COOLDOWN_SECONDS', 0, 86400),
    fcSubscriptionIntervalMs: integer(env, 'FC_SUBSCRIPTION_INTERVAL_MS', 100, 7 * 86400000),
    fcDeactivationDelayMs: integer(env, 'FC_DEACTIVATION_DELAY_MS', 0, 86400000),
    refundFailureDelayMs: integer(env, 'REFUND_FAILURE_DELAY_MS', 0, 86400000),
    billingRetrySchedule: env.BILLING_RETRY_SCHEDULE ?? settings.BILLING_RETRY_SCHEDULE[0],
    ...seedSettings(env),
  });
}
