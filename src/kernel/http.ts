import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from '../lib/logger';
import { httpDuration, httpRequests } from '../lib/metrics';
import { newRequestId } from '../lib/ids';
import { ApiError, internalError, invalidRequest, unrecognizedUrl } from './errors';
import type { Authenticator } from './auth';
import type { ExpandRegistry } from './expand';
import { checkKey, fingerprintOf, type IdempotencyStore } from './idempotency';
import type { OperationSpec } from './openapi';
import { readParams, type ParamLimits } from './params';
import type { Deps, RequestContext, Route } from './route';
import { compileParamsValidator } from './validate';
import { DEFAULT_API_VERSION, isApiVersion } from './versions';

// The resource-agnostic request pipeline: request id → auth → params → validation →
// idempotency → handler → expand → response. Resources only supply handlers.

export interface Kernel {
  readonly deps: Deps;
  readonly authenticator: Authenticator;
  readonly idempotency: IdempotencyStore;
  readonly expand: ExpandRegistry;
  readonly limits: ParamLimits;
  readonly inFlight: InFlight;
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

/** Requests Node refuses before Express sees them (oversized headers, bad HTTP) still get the error shape. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const error = new ApiError({
      status: tooLarge ? 431 : 400,
      message: tooLarge ? 'The request headers (or the URL) are too large.' : 'The request could not be parsed as HTTP.',
    });
    const body = JSON.stringify(error.toBody());
    socket.end(
      `HTTP/1.1 ${error.status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

interface Locals {
  requestId: string;
  route?: string;
}

const JSON_TYPE = 'application/json';

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** First middleware: every response carries a Request-Id, the version and the echoed Idempotency-Key. */
export function requestIdentity(req: Request, res: Response, next: NextFunction): void {
  const requestId = newRequestId();
  (res.locals as Locals).requestId = requestId;
  res.setHeader('Request-Id', requestId);
  // Answers that come before the key is known (a 401, say) echo a known requested version.
  const requested = header(req, 'stripe-version')?.split(';')[0].trim();
  res.setHeader('Stripe-Version', requested !== undefined && isApiVersion(requested) ? requested : DEFAULT_API_VERSION);
  const key = header(req, 'idempotency-key');
  if (key !== undefined) res.setHeader('Idempotency-Key', key.slice(0, 255));
  next();
}

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
}

/**
 * Status and body of an error as the client sees it; unexpected errors are logged, never shown.
 * A 4xx `status` on a foreign error is trusted only from Express itself (outside an operation):
 * inside one, an error with a status (from a client library, say) is still an unexpected failure.
 */
function renderError(err: unknown, requestId: string, logger: Logger, fromExpress: boolean): { status: number; body: string; error: ApiError } {
  let error: ApiError;
  if (err instanceof ApiError) error = err;
  else if (fromExpress && isBodyParserError(err)) error = new ApiError({ status: err.status, message: 'The request could not be read.' });
  else {
    logger.error({ err, request_id: requestId }, 'unexpected error');
    error = internalError();
  }
  return { status: error.status, body: JSON.stringify(error.toBody(requestId)), error };
}

const isBodyParserError = (err: unknown): err is { status: number } =>
  typeof err === 'object' && err !== null && typeof (err as any).status === 'number' && (err as any).status >= 400 && (err as any).status < 500;

export function sendError(res: Response, err: unknown, logger: Logger, fromExpress = false): { status: number; body: string } {
  const requestId = (res.locals as Locals).requestId;
  const rendered = renderError(err, requestId, logger, fromExpress);
  if (rendered.error.headers) for (const [k, v] of Object.entries(rendered.error.headers)) res.setHeader(k, v);
  if (!res.headersSent) send(res, rendered.status, rendered.body);
  return rendered;
}

const toExpressPath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

/** Static segments before `{param}` ones, so `/v1/apps/secrets/find` wins over `/v1/apps/secrets/{id}`. */
function specificity(path: string): string {
  return path
    .split('/')
    .map((s) => (s.startsWith('{') ? '1' : '0'))
    .join('');
}

export function mountRoutes(app: Express, routes: readonly Route[], operations: readonly OperationSpec[], kernel: Kernel): void {
  const byId = new Map(operations.map((o) => [o.operationId, o]));
  const ordered = [...routes].sort((a, b) => specificity(a.path).localeCompare(specificity(b.path)));
  for (const r of ordered) {
    const validate = compileParamsValidator(byId.get(r.operationId)!.paramsSchema);
    app[r.method](toExpressPath(r.path), async (req: Request, res: Response) => {
      (res.locals as Locals).route = r.path;
      kernel.inFlight.enter();
      try {
        await runOperation(r, validate, kernel, req, res);
      } finally {
        kernel.inFlight.leave();
      }
    });
  }
}

async function runOperation(
  r: Route,
  validate: ReturnType<typeof compileParamsValidator>,
  kernel: Kernel,
  req: Request,
  res: Response,
): Promise<void> {
  const { deps } = kernel;
  const requestId = (res.locals as Locals).requestId;
  let claimed: { accountId: string; key: string; claimId: string } | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const storeResult = async (status: number, body: string, seal?: boolean) => {
    if (!claimed) return;
    const stored = await kernel.idempotency.complete(claimed.accountId, claimed.key, claimed.claimId, status, body, seal);
    if (!stored) deps.logger.warn({ request_id: requestId }, 'idempotency claim was taken over; this result was not stored');
  };
  try {
    const caller = await kernel.authenticator.authenticate(req.headers);
    const apiVersion = resolveApiVersion(header(req, 'stripe-version'), caller.defaultApiVersion);
    res.setHeader('Stripe-Version', apiVersion);
    const raw = await readParams(req, req.originalUrl, kernel.limits);
    const params = validate(raw);
    const expandPaths = (params.expand as string[] | undefined) ?? [];
    kernel.expand.check(expandPaths, r.returns.object, r.returns.list ?? false);

    // An empty key is no key: stored, it would tie every later keyless-looking POST to the first.
    const idempotencyKey = r.method === 'post' ? header(req, 'idempotency-key') || undefined : undefined;
    if (idempotencyKey !== undefined) {
      checkKey(idempotencyKey);
      const claim = await kernel.idempotency.claim(caller.accountId, idempotencyKey, fingerprintOf(r.method, req.path, raw));
      if (claim.kind === 'replay') {
        res.setHeader('Idempotent-Replayed', 'true');
        // A replayed failure will be replayed again: the SDKs must not retry it.
        if (claim.status >= 500) res.setHeader('Stripe-Should-Retry', 'false');
        send(res, claim.status, claim.body);
        return;
      }
      const held = { accountId: caller.accountId, key: idempotencyKey, claimId: claim.claimId };
      claimed = held;
      // While the handler runs, the claim stays alive; only a dead process's claim goes stale.
      heartbeat = setInterval(() => {
        kernel.idempotency.heartbeat(held.accountId, held.key, held.claimId).catch((e) => deps.logger.warn({ err: e, request_id: requestId }, 'idempotency heartbeat failed'));
      }, kernel.idempotency.heartbeatMs);
      heartbeat.unref();
    }

    const ctx: RequestContext = {
      requestId,
      caller,
      apiVersion,
      idempotencyKey,
      params,
      pathParams: req.params as Record<string, string>,
      deps,
    };
    const result = await kernel.expand.apply(await r.handler(ctx), expandPaths, ctx);
    const body = JSON.stringify(result);
    await storeResult(200, body, r.responseHasSecret);
    send(res, 200, body);
  } catch (err) {
    const rendered = sendError(res, err, deps.logger);
    // The first result of an idempotent request is kept whatever it was, errors included.
    await storeResult(rendered.status, rendered.body).catch((e) => deps.logger.error({ err: e, request_id: requestId }, 'could not store idempotent result'));
  } finally {
    clearInterval(heartbeat);
  }
}

export function notFound(logger: Logger) {
  return (req: Request, res: Response): void => {
    sendError(res, unrecognizedUrl(req.method, req.path), logger);
  };
}

/** Errors thrown outside an operation (malformed URLs and the like) still get the error shape. */
export function errorMiddleware(logger: Logger) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    sendError(res, err, logger, true);
  };
}

/** One structured line per request, without headers or bodies (they carry keys and secrets). */
export function accessLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const locals = res.locals as Locals;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Unmatched paths share one label, so probing random URLs can't grow the metric without bound.
      const route = locals.route ?? 'unmatched';
      httpRequests.inc({ route, method: req.method, status: res.statusCode });
      httpDuration.observe({ route, method: req.method }, seconds);
      logger.info(
        {
          request_id: locals.requestId,
          method: req.method,
          route: locals.route ?? null,
          status: res.statusCode,
          duration_ms: seconds * 1000,
        },
        'request',
      );
    });
    next();
  };
}
