import type { Logger } from '../lib/logger';
import type { PrismaClient } from '../lib/prisma';
import type { Clock } from '../lib/clock';
import type { Config } from '../config';
import type { Encryption } from '../lib/encryption';
import type { JobAdder } from '../lib/queue';
import type { Caller } from './auth';

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
}

export interface Deps {
  readonly config: Config;
  readonly prisma: PrismaClient;
  readonly logger: Logger;
  readonly clock: Clock;
  /**
   * Adds jobs for the workers (each also a database row the reconciler re-adds). Within an
   * operation, jobs are added once its transaction committed.
   */
  readonly queues: JobAdder;
  /** Seals secrets at rest. */
  readonly encryption: Encryption;
}

export type Handler = (ctx: RequestContext) => Promise<unknown>;

/** What an operation answers with: an object of this type, or a list of them (for expand checks). */
export interface Returns {
  readonly object: string;
  readonly list?: boolean;
}

export interface RouteOptions {
  /** The response carries a secret (a client secret, a payload): its idempotent copy is stored sealed. */
  readonly responseHasSecret?: boolean;
  /**
   * This operation's own limit, in requests per second per platform account (0: none), read from
   * the config once at boot. It applies on top of the API-wide limit, as the public API's
   * per-endpoint limits do.
   */
  readonly rateLimit?: (config: Config) => number;
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
