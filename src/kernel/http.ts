import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from '../lib/logger';
import { httpDuration, httpRequests } from '../lib/metrics';
import { newRequestId } from '../lib/ids';
import type { RequestLog } from './requestLog';
import type { ConnectionDrain } from './drain';
import { answerJson } from './json';
import { ApiError, internalError, invalidRequest, parameterMissing, rateLimited, serviceUnavailable, unrecognizedUrl } from './errors';
import { isDatabaseUnavailable } from '../lib/prisma';
import { healingLog } from '../lib/healingLog';
import type { Sql, SqlClient } from '../lib/sql';
import { secretKeyRequired, VIEWER_REQUEST, type Authenticator } from './auth';
import type { ExpandRegistry } from './expand';
import { checkKey, ClaimLost, fingerprintOf, idempotencyKeyInUse, type HeldClaim, type IdempotencyStore } from './idempotency';
import { AfterCommit, inOperationTransaction, needsPrisma, NO_PRISMA } from './transaction';
import { HeldWrites, isNotApplied, oneStatement } from './writes';
import type { OperationSpec } from './openapi';
import { readParams, type ParamLimits } from './params';
import { RateLimiter } from './rateLimit';
import { RouteTable, type Match } from './routeTable';
import type { Deps, RequestContext, Route } from './route';
import type { ParamRenames, RequestUpgrader } from './requestVersions';
import { compileParamsValidator } from './validate';
import { errorStatusAt, isApiVersion, type VersionRenderer } from './versions';

// The resource-agnostic request pipeline: request id → auth → params → an older version's params upgraded → validation →
// idempotency → handler → expand → response. Resources only supply handlers.

export interface Kernel {
  readonly deps: Deps;
  readonly authenticator: Authenticator;
  readonly idempotency: IdempotencyStore;
  readonly expand: ExpandRegistry;
  /** Renders answers for the request's Stripe-Version. */
  readonly versions: VersionRenderer;
  /** Maps an older version's request parameters onto today's, before validation. */
  readonly requests: RequestUpgrader;
  readonly limits: ParamLimits;
  readonly inFlight: InFlight;
  /** The API-wide limit per platform account; none when API_RATE_LIMIT is 0. */
  readonly rateLimiter?: RateLimiter;
  /** Whether `oneStatement` routes run as one statement (tests of the ordinary path turn it off). */
  oneStatementWrites: boolean;
}

/**
 * Counts operations still running. A handler goes on after its client hangs up, so shutdown
 * waits for this, not only for sockets, before it disconnects the database.
 */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  enter(): void {
    this.count++;
  }

  leave(): void {
    this.count--;
    if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** What Node's parser says about a request it refused: the chunk it failed in, and how far it got. */
type ParserError = NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number };

/**
 * Whether the answer to a refused request may carry a body: never for a HEAD (HTTP forbids one),
 * nor when its method can't be seen. Node hands over only the chunk the parser failed in, which
 * begins with the request line when the client wrote the request at once (the usual case); a
 * request that began in an earlier chunk, or after another in this one, gets the status alone.
 */
function mayHaveBody(err: ParserError): boolean {
  const packet = err.rawPacket;
  if (!packet) return false;
  const seen = packet.subarray(0, err.bytesParsed ?? packet.length).toString('latin1');
  const method = /^([A-Z]+) /.exec(seen)?.[1];
  return method !== undefined && method !== 'HEAD' && !seen.includes('\r\n\r\n');
}

/** Requests Node refuses before Express sees them (oversized headers, bad HTTP) still get the error shape. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: ParserError, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const error = new ApiError({
      status: tooLarge ? 431 : 400,
      message: tooLarge ? 'The request headers (or the URL) are too large.' : 'The request could not be parsed as HTTP.',
    });
    // A Request-Id as on every other answer, so a client's error report can name it.
    const head = `HTTP/1.1 ${error.status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nConnection: close\r\nRequest-Id: ${newRequestId()}\r\n`;
    if (!mayHaveBody(err)) return void socket.end(`${head}Content-Length: 0\r\n\r\n`);
    const body = answerJson(error.toBody());
    socket.end(`${head}Content-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

interface Locals {
  requestId: string;
  /** Unix seconds when the request arrived: the `t` of its request_log_url. */
  receivedAt: number;
  route?: string;
  requestLog?: RequestLog;
  /** The platform whose key the request carried, once known: its log entry is that platform's. */
  platformAccountId?: string;
  /** Unix milliseconds when the request arrived: orders the recent requests log. */
  receivedAtMs: number;
  /** The key's masked form, once known (the recent requests log's "key used"). */
  keyHint?: string;
  /** The connected account the request acted as, once checked. */
  actingAs?: string;
  /** The version the request is answered at, once known: an error's status follows it (ERROR_STATUS_CHANGES). */
  apiVersion?: string;
  /** Today's parameters the request sent by an older version's names: its errors use those. */
  paramNames?: ParamRenames;
}

const JSON_TYPE = 'application/json';


function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** First middleware: every response carries a Request-Id, the version and the echoed Idempotency-Key. */
export const requestIdentity =
  (defaultApiVersion: string, requestLog?: RequestLog) =>
  (req: Request, res: Response, next: NextFunction): void => {
    const requestId = newRequestId();
    (res.locals as Locals).requestId = requestId;
    const now = Date.now();
    (res.locals as Locals).receivedAtMs = now;
    (res.locals as Locals).receivedAt = Math.floor(now / 1000);
    (res.locals as Locals).requestLog = requestLog;
    res.setHeader('Request-Id', requestId);
    // Answers that come before the key is known (a 401, say) echo a known requested version.
    const requested = header(req, 'stripe-version')?.split(';')[0].trim();
    res.setHeader('Stripe-Version', requested !== undefined && isApiVersion(requested) ? requested : defaultApiVersion);
    const key = header(req, 'idempotency-key');
    if (key !== undefined) res.setHeader('Idempotency-Key', key.slice(0, 255));
    next();
  };

/** Resolves `Stripe-Version` (with optional `; beta=v1` flags) to a known version, or refuses it. */
export function resolveApiVersion(requested: string | undefined, fallback: string): string {
  if (requested === undefined) return fallback;
  const base = requested.split(';')[0].trim();
  if (!isApiVersion(base)) {
    throw invalidRequest(`Invalid Stripe API version: ${requested.slice(0, 100)}`, 'api_version_invalid');
  }
  return base;
}

function send(res: Response, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Cache-Control', 'no-cache, no-store');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
  recordRecent(res, status);
}

/**
 * Every answer to a key of a platform goes in its recent requests (the console's log): a line, no
 * body. Raw fields only (the URL with its query, the key's hint as masked): the log cuts them off
 * the request path.
 */
function recordRecent(res: Response, status: number): void {
  const locals = res.locals as Locals;
  if (locals.platformAccountId === undefined || !locals.requestLog) return;
  const req = res.req;
  locals.requestLog.recent.record({
    requestId: locals.requestId,
    account: locals.platformAccountId,
    receivedAtMs: locals.receivedAtMs,
    method: req.method,
    path: req.url,
    route: locals.route ?? 'unmatched',
    status,
    idempotencyKey: header(req, 'idempotency-key') ?? null,
    key: locals.keyHint ?? '',
    stripeAccount: locals.actingAs ?? null,
    console: VIEWER_REQUEST in req,
  });
}

/**
 * Status and body of an error as the client sees it; unexpected errors are logged, never shown.
 * A 4xx `status` on a foreign error is trusted only from Express itself (outside an operation):
 * inside one, an error with a status (from a client library, say) is still an unexpected failure.
 */
interface RenderedError {
  status: number;
  body: string;
  error: ApiError;
}

function renderError(err: unknown, res: Response, logger: Logger, fromExpress: boolean): RenderedError {
  const { requestId, receivedAt, requestLog, platformAccountId, paramNames } = res.locals as Locals;
  let error: ApiError;
  if (err instanceof ApiError) error = paramNames ? paramNames.apply(err) : err;
  else if (fromExpress && isBodyParserError(err)) error = new ApiError({ status: err.status, message: 'The request could not be read.' });
  else if (isDatabaseUnavailable(err)) {
    // An outage, not a defect: one line, and an answer the SDKs retry.
    healingLog(logger).warn('database unavailable', { err: (err as Error).message, request_id: requestId }, 'database unavailable');
    error = serviceUnavailable();
  } else {
    logger.error({ err, request_id: requestId }, 'unexpected error');
    error = internalError();
  }
  // Only an authenticated request has a log page: no account could be shown one (kernel/requestLog.ts).
  const logUrl = platformAccountId === undefined ? undefined : requestLog?.urlOf(requestId, receivedAt);
  const { apiVersion } = res.locals as Locals;
  const status = apiVersion === undefined ? error.status : errorStatusAt(error.status, error.code, apiVersion);
  return { status, body: answerJson(error.toBody(logUrl)), error };
}

const isBodyParserError = (err: unknown): err is { status: number } =>
  typeof err === 'object' && err !== null && typeof (err as any).status === 'number' && (err as any).status >= 400 && (err as any).status < 500;

export function sendError(res: Response, err: unknown, logger: Logger, fromExpress = false): RenderedError {
  const rendered = renderError(err, res, logger, fromExpress);
  writeError(res, rendered);
  return rendered;
}

function writeError(res: Response, rendered: RenderedError): void {
  const { requestLog, requestId, receivedAt, route, platformAccountId } = res.locals as Locals;
  if (platformAccountId !== undefined) {
    requestLog?.record({ requestId, account: platformAccountId, receivedAt, method: res.req.method, route: route ?? 'unmatched', status: rendered.status, body: rendered.body });
  }
  if (rendered.error.headers) for (const [k, v] of Object.entries(rendered.error.headers)) res.setHeader(k, v);
  if (!res.headersSent) send(res, rendered.status, rendered.body);
}

/**
 * Mounts every operation as one middleware over a route table (src/kernel/routeTable.ts); a
 * request that names no operation goes on to the rest of the app.
 */
export function mountRoutes(app: Express, routes: readonly Route[], operations: readonly OperationSpec[], kernel: Kernel): void {
  const byId = new Map(operations.map((o) => [o.operationId, o]));
  const served = new Set(routes.map((r) => r.operationId));
  for (const operation of kernel.requests.operations) {
    if (!served.has(operation)) throw new Error(`A request change names ${operation}, which no route serves`);
  }
  const table = new RouteTable<Mounted>();
  for (const r of routes) {
    const schema = byId.get(r.operationId)!.paramsSchema;
    if (r.publishable === 'client_secret' && !(schema as { properties?: Record<string, unknown> }).properties?.client_secret) {
      throw new Error(`${r.operationId} takes publishable keys with a client secret, but its OpenAPI parameters have no client_secret`);
    }
    const validate = compileParamsValidator(schema);
    const perSecond = r.rateLimit?.(kernel.deps.config) ?? 0;
    table.add(r.method, r.path, { route: r, validate, rateLimiter: perSecond > 0 ? new RateLimiter(perSecond, kernel.deps.clock) : undefined });
  }
  app.use((req: Request, res: Response, next: NextFunction) => {
    let found: Match<Mounted> | undefined;
    try {
      found = table.match(req.method, req.path);
    } catch (err) {
      return next(err);
    }
    if (!found) return next();
    (res.locals as Locals).route = found.value.route.path;
    kernel.inFlight.enter();
    runOperation(found.value, found.params, kernel, req, res)
      .catch(next)
      .finally(() => kernel.inFlight.leave());
  });
}

/** A route as mounted: its compiled validator and its own rate limiter, if it declares one. */
interface Mounted {
  readonly route: Route;
  readonly validate: ReturnType<typeof compileParamsValidator>;
  readonly rateLimiter?: RateLimiter;
}

async function runOperation({ route: r, validate, rateLimiter }: Mounted, pathParams: Record<string, string>, kernel: Kernel, req: Request, res: Response): Promise<void> {
  const { deps } = kernel;
  const requestId = (res.locals as Locals).requestId;
  let claim: HeldClaim | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  /** The operation's transaction committed (only an `afterCommit` operation can fail after that). */
  let committed = false;
  try {
    const identity = await kernel.authenticator.identify(req.headers, !(VIEWER_REQUEST in req));
    (res.locals as Locals).platformAccountId = identity.platformAccountId;
    (res.locals as Locals).keyHint = identity.keyHint;
    // Errors from here on answer at the request's version, an unknown one being the account's.
    const requested = header(req, 'stripe-version')?.split(';')[0].trim();
    (res.locals as Locals).apiVersion = requested !== undefined && isApiVersion(requested) ? requested : identity.defaultApiVersion;
    // Counted per platform account, before any other work: a refused request reads no body, looks
    // up no connected account and never reaches the idempotency store, so a retry with its key runs.
    if (kernel.rateLimiter && !kernel.rateLimiter.take(identity.platformAccountId)) throw rateLimited('global-rate');
    if (rateLimiter && !rateLimiter.take(identity.platformAccountId)) throw rateLimited('endpoint-rate');
    // A publishable key is public (in every browser that runs Stripe.js): only what Stripe.js calls.
    if (identity.publishable && !r.publishable) throw secretKeyRequired();
    const caller = await kernel.authenticator.actingAs(identity, req.headers, r.method === 'get');
    if (caller.accountId !== identity.platformAccountId) (res.locals as Locals).actingAs = caller.accountId;
    const apiVersion = resolveApiVersion(header(req, 'stripe-version'), caller.defaultApiVersion);
    (res.locals as Locals).apiVersion = apiVersion;
    res.setHeader('Stripe-Version', apiVersion);
    const raw = await readParams(req, req.originalUrl, kernel.limits);
    // An older version's parameters become today's; its errors keep naming what it sent.
    // (Most requests: no change applies, nothing to build; coercion already answers a new object.)
    let params: Record<string, any>;
    try {
      if (kernel.requests.pending(r.operationId, apiVersion).length === 0) params = validate(raw);
      else {
        const upgraded = kernel.requests.upgrade(r.operationId, apiVersion, raw);
        if (upgraded.names.size > 0) (res.locals as Locals).paramNames = upgraded.names;
        params = validate(upgraded.params);
        for (const name in upgraded.kept) params[name] = upgraded.kept[name];
      }
    } catch (err) {
      // A parameter a version removed says what replaced it.
      throw err instanceof ApiError ? kernel.requests.explain(r.operationId, apiVersion, err) : err;
    }
    // The handler compares it with the object's (requireClientSecret); without one there is nothing to compare.
    if (caller.publishable && r.publishable === 'client_secret' && typeof params.client_secret !== 'string') throw parameterMissing('client_secret');
    const expandPaths = (params.expand as string[] | undefined) ?? [];
    kernel.expand.check(expandPaths, r.returns.object, r.returns.search ? 'search' : (r.returns.list ?? false), apiVersion);

    // An empty key is no key: stored, it would tie every later keyless-looking POST to the first.
    const idempotencyKey = r.method === 'post' ? header(req, 'idempotency-key') || undefined : undefined;
    if (idempotencyKey !== undefined) checkKey(idempotencyKey);
    const ctx = (deps: Deps): RequestContext => ({
      requestId,
      caller,
      apiVersion,
      idempotencyKey,
      params,
      pathParams,
      deps,
      object: r.returns.object,
    });
    // Expanded and rendered for the version (the registry renders with the same table as `kernel.versions`).
    const renderResult = async (c: RequestContext, result: unknown) => answerJson(await kernel.expand.render(result, expandPaths, c));

    const fingerprint = () => fingerprintOf(r.method, req.path, raw);
    // Expanding reads rows back, which a held write hasn't written yet.
    if (kernel.oneStatementWrites && r.oneStatement?.(params) && expandPaths.length === 0) {
      const body = await runAsOneStatement(r, kernel, ctx, renderResult, idempotencyKey === undefined ? undefined : { key: idempotencyKey, fingerprint: fingerprint() });
      if (body !== undefined) {
        send(res, 200, body);
        return;
      }
    }
    if (idempotencyKey !== undefined) {
      const claimed = await kernel.idempotency.claim(caller.accountId, idempotencyKey, fingerprint());
      if (claimed.kind === 'replay') {
        res.setHeader('Idempotent-Replayed', 'true');
        send(res, claimed.status, claimed.body);
        return;
      }
      const held: HeldClaim = { accountId: caller.accountId, key: idempotencyKey, claimId: claimed.claimId };
      claim = held;
      // While the handler runs, the claim stays alive; only a dead process's claim goes stale.
      heartbeat = setInterval(() => {
        kernel.idempotency.heartbeat(held).catch((e) => deps.logger.warn({ err: e, request_id: requestId }, 'idempotency heartbeat failed'));
      }, kernel.idempotency.heartbeatMs);
      heartbeat.unref();
    }

    const render = async (c: RequestContext) => renderResult(c, await r.handler(c));
    if (r.method === 'get') {
      send(res, 200, await render(ctx(deps)));
      return;
    }
    if (r.afterCommit) {
      const first = await inOperationTransaction(deps, (opDeps) => r.handler(ctx(opDeps)), async () => undefined);
      committed = true;
      const body = await renderResult(ctx(deps), await r.afterCommit(ctx(deps), first));
      if (claim && !(await kernel.idempotency.complete(claim, 200, body, r.responseHasSecret))) {
        deps.logger.warn({ request_id: requestId }, 'idempotency claim was taken over; this result was not stored');
      }
      send(res, 200, body);
      return;
    }
    // An error that keeps the writes (`keepsWrites`) commits them with its answer as the result.
    const operation = (sqlOnly: boolean) =>
      inOperationTransaction(
        deps,
        (opDeps) =>
          render(ctx(opDeps)).catch((err: unknown) => {
            if (err instanceof ApiError && err.keepsWrites) return renderError(err, res, deps.logger, false);
            throw err;
          }),
        async (sql, result) => {
          const [status, body] = typeof result === 'string' ? [200, result] : [result.status, result.body];
          if (claim && !(await kernel.idempotency.complete(claim, status, body, r.responseHasSecret, sql))) throw new ClaimLost();
        },
        { sqlOnly },
      );
    // Expanding may read through Prisma; a handler that needs it (prismaOf) rolled back and runs again with it.
    const sqlOnly = r.sqlOnly === true && expandPaths.length === 0;
    const outcome = await operation(sqlOnly).catch((err: unknown) => {
      if (sqlOnly && needsPrisma(err)) return operation(false);
      throw err;
    });
    if (typeof outcome === 'string') send(res, 200, outcome);
    else writeError(res, outcome);
  } catch (err) {
    await answerFailure(err, res, kernel, claim, requestId, committed);
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * Runs a `oneStatement` operation: the handler's writes are held, its answer rendered, and the
 * writes, the key's claim and the answer sent as one statement. A `sqlOnly` one that reads runs
 * in a transaction on a pooled connection, opened by its first read, so its reads may lock rows;
 * the statement then commits with it (one commit). One that reads nothing sends the statement
 * alone: one round trip. Answers the body, or undefined when nothing was written and
 * the request must run the ordinary way (the statement didn't apply, or the handler refused: that
 * way says why, and keeps the key as it should).
 */
async function runAsOneStatement(
  r: Route,
  kernel: Kernel,
  ctx: (deps: Deps) => RequestContext,
  renderResult: (c: RequestContext, result: unknown) => Promise<string>,
  idempotency: { key: string; fingerprint: string } | undefined,
): Promise<string | undefined> {
  const { deps } = kernel;
  const afterCommit = new AfterCommit(deps.queues);
  // Answers the body and the statement that writes everything (undefined: nothing to write).
  const attempt = async (sql: SqlClient, prisma: Deps['prisma']): Promise<{ result: string; last?: Sql }> => {
    const held = new HeldWrites();
    const c = ctx({ ...deps, sql, prisma, write: held.run, queues: afterCommit });
    const body = await renderResult(c, await r.handler(c));
    const claim = idempotency && (await kernel.idempotency.completedClaim(c.caller.accountId, idempotency.key, idempotency.fingerprint, body, r.responseHasSecret ?? false));
    return { result: body, last: oneStatement(held.writes, claim) };
  };
  try {
    let body: string;
    if (r.sqlOnly) {
      body = await deps.sql.transactionEndingWith((sql) => attempt(sql, NO_PRISMA));
    } else {
      const { result, last } = await attempt(deps.sql, deps.prisma);
      if (last) await deps.sql.query(last);
      body = result;
    }
    await afterCommit.flush();
    return body;
  } catch (err) {
    if (isNotApplied(err) || needsPrisma(err) || err instanceof ApiError) return undefined;
    throw err;
  }
}

/** How long an answer waits for its key to be stored or freed; with the database away it waits no longer. */
const SETTLE_KEY_MS = 250;

/**
 * Answers an operation that failed; its transaction rolled back, so it changed nothing. What its
 * key keeps follows the public API ("no idempotent result is saved" when parameters failed
 * validation): a parameter error (`ApiError.kind`, whether AJV or the handler found it) frees
 * the key, so a corrected retry with the same key runs; any other deliberate error (a 4xx: a
 * lookup, a state conflict) is the request's result and is kept. An unexpected failure (a 500:
 * a database outage, say) frees the key too, so the SDK's retry runs the request again rather
 * than replaying a failure that a retry would not meet. Either happens before the answer, so a
 * prompt retry finds it done, not a 409.
 */
async function answerFailure(err: unknown, res: Response, kernel: Kernel, claim: HeldClaim | undefined, requestId: string, committed = false): Promise<void> {
  const { logger } = kernel.deps;
  if (err instanceof ClaimLost) {
    sendError(res, idempotencyKeyInUse(claim!.key), logger);
    return;
  }
  const rendered = renderError(err, res, logger, false);
  if (claim) {
    // After a commit, a deliberate error is the request's result whatever its status.
    const keep = rendered.error.kind === 'state' && (rendered.status < 500 || (committed && err instanceof ApiError));
    const settled = keep ? storeFailure(kernel, claim, rendered, requestId) : releaseWithRetries(kernel, claim, requestId);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_KEY_MS)))]);
    clearTimeout(timer);
  }
  writeError(res, rendered);
}

async function storeFailure(kernel: Kernel, claim: HeldClaim, rendered: RenderedError, requestId: string): Promise<void> {
  const { logger } = kernel.deps;
  try {
    if (!(await kernel.idempotency.complete(claim, rendered.status, rendered.body))) {
      logger.warn({ request_id: requestId }, 'idempotency claim was taken over; this result was not stored');
    }
  } catch (e) {
    // The claim stays until it looks abandoned; then a retry runs the request again.
    logger.error({ err: e, request_id: requestId }, 'could not store the idempotent result');
  }
}

/** Release retries while the database comes back (a restart takes seconds); the key would be free after ABANDONED anyway. */
const RELEASE_RETRY_MS = [1000, 2000, 4000];

/**
 * Frees the key of a request that failed unexpectedly. When the failure was the database going
 * away, the release fails too; it is tried again in the background a few times, so the SDK's
 * retry finds the key free as soon as the database is back rather than answering 409 until the
 * claim looks abandoned.
 */
async function releaseWithRetries(kernel: Kernel, claim: HeldClaim, requestId: string): Promise<void> {
  const { logger } = kernel.deps;
  const attempt = (retry: number): Promise<void> =>
    kernel.idempotency.release(claim).catch((e) => {
      if (retry >= RELEASE_RETRY_MS.length) {
        logger.warn({ err: (e as Error).message, request_id: requestId }, 'could not free the idempotency key; it is free once the claim looks abandoned');
        return;
      }
      setTimeout(() => void attempt(retry + 1), RELEASE_RETRY_MS[retry]).unref();
    });
  await attempt(0);
}

/**
 * Unknown URLs answer 404 to a valid key or none; a key that is sent and refused (malformed,
 * live, unknown in `registered` mode) answers its 401 first, as the public API checks the key
 * before the route. A valid key still puts the answer in its platform's request log (a request
 * with none, or a bad one, has no log: see kernel/requestLog.ts).
 */
export function notFound(logger: Logger, authenticator?: Authenticator) {
  return async (req: Request, res: Response): Promise<void> => {
    if (authenticator && req.headers.authorization) {
      let refused: ApiError | undefined;
      const identity = await authenticator.identify(req.headers).catch((err: unknown) => {
        // Only the key's own refusal: an outage while looking it up still leaves the URL unknown.
        if (err instanceof ApiError && err.status === 401) refused = err;
        return undefined;
      });
      if (refused) return void sendError(res, refused, logger);
      if (identity) {
        (res.locals as Locals).platformAccountId = identity.platformAccountId;
        (res.locals as Locals).keyHint = identity.keyHint;
      }
    }
    sendError(res, unrecognizedUrl(req.method, req.path), logger);
  };
}

/** Errors thrown outside an operation (malformed URLs and the like) still get the error shape. */
export function errorMiddleware(logger: Logger) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    sendError(res, err, logger, true);
  };
}

/** nginx's "client closed request": the client hung up before its answer was sent. */
const CLIENT_CLOSED_STATUS = 499;

/**
 * One structured line per request, without headers or bodies (they carry keys and secrets). A
 * client that hangs up first (mid-body, say) gets its line when the connection closes, as a
 * 499 with `client_closed`: its doing, not a server failure, so never a 5xx, whatever the
 * operation went on to do, and kept out of the latency histogram.
 */
export function accessLog(logger: Logger, connections?: ConnectionDrain) {
  const metrics = new RequestMetrics();
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    connections?.started(req, res);
    // One listener: 'close' comes after 'finish' too, or alone when the client hung up first; it
    // comes once, so `on` (`once` wraps and removes the listener, a cost on every request). A
    // graceful stop counts each connection's requests from it too (kernel/drain.ts).
    res.on('close', () => {
      connections?.ended(req);
      const clientClosed = !res.writableFinished;
      const locals = res.locals as Locals;
      const seconds = (performance.now() - started) / 1000;
      const status = clientClosed ? CLIENT_CLOSED_STATUS : res.statusCode;
      // Unmatched paths share one label, so probing random URLs can't grow the metric without bound.
      metrics.record(locals.route ?? 'unmatched', req.method, status, clientClosed ? undefined : seconds);
      if (logger.isLevelEnabled('info')) {
        logger.info(
          {
            request_id: locals.requestId,
            method: req.method,
            route: locals.route ?? null,
            status,
            duration_ms: seconds * 1000,
            ...(clientClosed && { client_closed: true }),
          },
          'request',
        );
      }
    });
    next();
  };
}

/** The request metrics' labelled children, looked up once per route, method and status rather than per request. */
class RequestMetrics {
  private readonly counters = new Map<string, ReturnType<typeof httpRequests.labels>>();
  private readonly durations = new Map<string, ReturnType<typeof httpDuration.labels>>();

  record(route: string, method: string, status: number, seconds: number | undefined): void {
    const key = `${method} ${route}`;
    const counterKey = `${key} ${status}`;
    let counter = this.counters.get(counterKey);
    if (!counter) this.counters.set(counterKey, (counter = httpRequests.labels({ route, method, status })));
    counter.inc();
    if (seconds === undefined) return;
    let duration = this.durations.get(key);
    if (!duration) this.durations.set(key, (duration = httpDuration.labels({ route, method })));
    duration.observe(seconds);
  }
}
