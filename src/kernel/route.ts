import type { Logger } from '../lib/logger';
import type { PrismaClient } from '../lib/prisma';
import type { Clock } from '../lib/clock';
import type { Config } from '../config';
import type { Encryption } from '../lib/encryption';
import type { JobAdder, JobQueues, QueueDefinition } from '../lib/queue';
import type { Redis } from '../lib/redis';
import type { Notifications } from '../lib/pgNotify';
import type { SqlClient } from '../lib/sql';
import type { Caller } from './auth';
import type { WriteRunner } from './writes';
import type { VersionRenderer } from './versions';

export type HttpMethod = 'get' | 'post' | 'delete';

/** What a resource handler gets: the caller, the validated parameters and the shared clients. */
export interface RequestContext {
  readonly requestId: string;
  readonly caller: Caller;
  readonly apiVersion: string;
  readonly idempotencyKey: string | undefined;
  /** Query and body merged, coerced and validated against the operation's schema. */
  readonly params: Record<string, any>;
  readonly pathParams: Record<string, string>;
  readonly deps: Deps;
  /** The object type the operation answers with (its `returns.object`): what a refused client secret names. */
  readonly object?: string;
}

export interface Deps {
  readonly config: Config;
  readonly prisma: PrismaClient;
  /** Hot-path statements (a resource's queries.ts): on the pool, or in the operation's transaction. */
  readonly sql: SqlClient;
  /**
   * Runs one of the operation's writes (src/kernel/writes.ts): at once, in its transaction; in a
   * `oneStatement` operation, held and sent with the others.
   */
  readonly write: WriteRunner;
  readonly logger: Logger;
  readonly clock: Clock;
  /**
   * Adds jobs for the workers (each also a database row the reconciler re-adds). Within an
   * operation, jobs are added once its transaction committed.
   */
  readonly queues: JobAdder;
  /** Seals secrets at rest. */
  readonly encryption: Encryption;
  /** PostgreSQL notifications (LISTEN on a connection of its own, opened on first use). */
  readonly notifications: Notifications;
  /** Renders objects for an older API version, with every area's version changes. */
  readonly versions: VersionRenderer;
}

/** What a process (the API or a worker) holds: the shared clients, Redis and its producers. */
export interface ProcessDeps extends Deps {
  readonly redis: Redis;
  readonly queues: JobQueues;
}

/**
 * A queue's consumer, declared by the resource that owns the queue; the worker process runs it.
 * A job only says "look at this row now": the row says whether anything is left to do, so a
 * lost, repeated or early job is harmless.
 */
export interface JobWorker<Payload> {
  readonly queue: QueueDefinition<Payload>;
  /** Runs one job; answers the ids of the events it wrote, which the runner hands to fan-out. */
  run(deps: ProcessDeps, data: Payload): Promise<readonly string[]>;
  /** The failure log line, and the fields of a job worth logging with it. */
  readonly failure: string;
  describe?(data: Payload): Record<string, unknown>;
}

/**
 * Re-adds from the database the jobs that are due (Redis may have lost them); answers counts
 * for the log. Runs on the reconciler's timer and whenever Redis comes back.
 */
export type Reconcile = (deps: ProcessDeps, nowMs: number) => Promise<Record<string, number>>;

/**
 * Periodic work (a sweep, a prune, a due-time scan), run once per interval across all workers by
 * the maintenance queue's schedulers. Answers counts, logged when any is above zero.
 */
export interface Schedule {
  readonly name: string;
  everyMs(config: Config): number;
  run(deps: ProcessDeps, nowSeconds: number): Promise<Record<string, number>>;
}

export type Handler = (ctx: RequestContext) => Promise<unknown>;

/** What an operation answers with: an object of this type, or a list of them (for expand checks). */
export interface Returns {
  readonly object: string;
  readonly list?: boolean;
  /** A `search_result` of them (`/v1/<resource>/search`): a list whose `total_count` expands. */
  readonly search?: boolean;
}

export interface RouteOptions {
  /**
   * Whether a publishable key (`pk_test_…`) may call this operation: only what Stripe.js calls
   * does. `true`: as a secret key may (creating a PaymentMethod). `'client_secret'`: only with the
   * object's `client_secret` parameter (retrieving or confirming an intent), which the kernel
   * requires of a publishable key and the handler checks with `requireClientSecret`
   * (src/kernel/clientSecret.ts); the operation's OpenAPI parameters must declare `client_secret`.
   * Any other operation answers a publishable key with the public 401 `secret_key_required`.
   */
  readonly publishable?: true | 'client_secret';
  /** The response carries a secret (a client secret, a payload): its idempotent copy is stored sealed. */
  readonly responseHasSecret?: boolean;
  /**
   * This operation's own limit, in requests per second per platform account (0: none), read from
   * the config once at boot. It applies on top of the API-wide limit, as the public API's
   * per-endpoint limits do.
   */
  readonly rateLimit?: (config: Config) => number;
  /**
   * The operation's second half, run once its transaction committed and its jobs were added
   * (waiting for a worker's result, say), outside any transaction. It gets what the handler
   * answered; what it answers (or throws) is the response, and the idempotent result is stored
   * after it: a deliberate error it throws is kept whatever its status, since the change committed.
   */
  readonly afterCommit?: (ctx: RequestContext, committed: unknown) => Promise<unknown>;
  /**
   * Whether this request may run as one statement: its handler writes only through `deps.write`,
   * its reads need no lock (or it is also `sqlOnly`), and its answer doesn't read its writes back.
   * The kernel then sends the writes, the idempotency claim and the stored answer together (one
   * round trip, one commit). If that statement doesn't apply (a write changed no row, the key was
   * taken) or the handler throws, nothing was written and the request runs again the ordinary
   * way, which answers why.
   */
  readonly oneStatement?: (params: Record<string, any>) => boolean;
  /**
   * Every statement of the handler goes through `deps.sql` / `deps.write` (none through Prisma):
   * its transaction is then one on a pooled connection, without Prisma's per-query cost. With
   * `oneStatement`, its reads run in that transaction (so they may lock rows) and its held writes,
   * claim and answer are sent as one statement before the commit.
   */
  readonly sqlOnly?: boolean;
}

/** One operation of the public (or sandbox) API. `path` is written as in the OpenAPI document. */
export interface Route extends RouteOptions {
  readonly method: HttpMethod;
  readonly path: string;
  readonly operationId: string;
  readonly returns: Returns;
  readonly handler: Handler;
}

export const route = (
  method: HttpMethod,
  path: string,
  operationId: string,
  returns: Returns,
  handler: Handler,
  options: RouteOptions = {},
): Route => ({ method, path, operationId, returns, handler, ...options });
