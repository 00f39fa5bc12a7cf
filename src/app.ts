import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { redisAnswers } from './lib/redis';
import type { ProcessDeps } from './kernel/route';
import { Authenticator } from './kernel/auth';
import { ExpandRegistry } from './kernel/expand';
import { RequestLog, REQUEST_LOG_PATH } from './kernel/requestLog';
import { ConnectionDrain } from './kernel/drain';
import { accessLog, errorMiddleware, InFlight, mountRoutes, notFound, requestIdentity, type Kernel } from './kernel/http';
import { IdempotencyStore } from './kernel/idempotency';
import { RateLimiter } from './kernel/rateLimit';
import { checkRoutesAgainstDocument, loadOpenApiDocument, operationsOf } from './kernel/openapi';
import { generatedSchemas, objectFields, objectTypes, pages, queueDefinitions, requestUpgrader, routes, sockets } from './resources';
import { renderMetrics, watchQueueDepth } from './lib/metrics';
import { HOSTED_PREFIX, mountPages } from './hosted/pages';
import { requestLogPage } from './hosted/requestLogPage';
import { cors } from './kernel/cors';
import { CONSOLE_PREFIX, mountConsole } from './console';

/** What the app is built from: every process's shared clients. */
export type AppDeps = ProcessDeps;

export interface BuiltApp {
  readonly app: Express;
  readonly kernel: Kernel;
  /** The failed requests this process keeps (their pages: hosted/requestLogPage.ts). */
  readonly requestLog: RequestLog;
  /** Each connection's requests, counted by the access log: what a graceful stop drains (src/server.ts). */
  readonly connections: ConnectionDrain;
  /** Serves the areas' websockets (the Stripe CLI's) on the server that serves `app`. */
  attachSockets(server: Server): void;
  /** Closes what the app opened for itself (the console's loopback connections, open websockets). */
  close(): Promise<void>;
}

/** The Express app with the kernel and every resource mounted; it does not listen. */
export function buildApp(deps: AppDeps): BuiltApp {
  const { config, prisma, logger, clock, redis } = deps;
  const document = loadOpenApiDocument(generatedSchemas);
  const operations = operationsOf(document);
  checkRoutesAgainstDocument(routes, operations);

  // The object registry: each area's object types, with their expandable fields and retrieve.
  const expand = new ExpandRegistry(deps.versions);
  for (const [object, type] of objectTypes) expand.register(object, type.expandable, type.retrieve);
  for (const [object, fields] of objectFields) expand.extend(object, fields);
  expand.checkReferences();
  const kernel: Kernel = {
    deps,
    authenticator: new Authenticator(prisma, config.authMode, clock, config.apiKeyCacheSeconds, config.defaultApiVersion, deps.notifications),
    idempotency: new IdempotencyStore(prisma, deps.sql, config.idempotencyTtlHours, deps.encryption),
    expand,
    versions: deps.versions,
    requests: requestUpgrader,
    limits: { bodyLimitBytes: config.bodyLimitBytes, depthLimit: config.paramDepthLimit, countLimit: config.paramCountLimit },
    inFlight: new InFlight(),
    rateLimiter: config.apiRateLimit > 0 ? new RateLimiter(config.apiRateLimit, clock) : undefined,
    oneStatementWrites: true,
  };

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.set('case sensitive routing', true);
  // `/v1/webhook_endpoints/` is not `/v1/webhook_endpoints`: a 404, as the public API answers.
  app.set('strict routing', true);
  const requestLog = new RequestLog(config.publicUrl, { redis, prefix: config.queuePrefix });
  app.use(requestIdentity(config.defaultApiVersion, requestLog));
  const connections = new ConnectionDrain();
  app.use(accessLog(logger, connections));
  app.use(cors([HOSTED_PREFIX, CONSOLE_PREFIX]));
  // Operations first: their table answers without walking the routes below.
  mountRoutes(app, routes, operations, kernel);
  // The service endpoints name their route in the access log and metrics, as operations do.
  for (const path of ['/openapi.json', '/metrics', '/healthz', '/readyz']) {
    app.get(path, (_req, res, next) => {
      (res.locals as { route?: string }).route = path;
      next();
    });
  }

  const documentJson = JSON.stringify(document);
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(documentJson);
  });
  for (const definition of queueDefinitions) watchQueueDepth(deps.queues.of(definition));
  app.get('/metrics', async (_req, res) => {
    const metrics = await renderMetrics();
    res.type(metrics.contentType).send(metrics.body);
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const [database, queue] = await Promise.all([
      prisma.$queryRaw`SELECT 1`.then(() => true, () => false),
      redisAnswers(redis),
    ]);
    res.status(database && queue ? 200 : 503).json({ status: database && queue ? 'ready' : 'unavailable', postgres: database, redis: queue });
  });

  mountPages(app, pages, deps, kernel.limits, kernel.inFlight);
  mountPages(app, [requestLogPage(requestLog, kernel.authenticator)], deps, kernel.limits, kernel.inFlight, REQUEST_LOG_PATH);
  const mountedConsole = mountConsole(app, { deps, routes, operations, document, authenticator: kernel.authenticator, limits: kernel.limits, inFlight: kernel.inFlight, requestLog });
  app.use(notFound(logger, kernel.authenticator));
  app.use(errorMiddleware(logger));
  const attached: { close(): void }[] = [];
  const attachSockets = (server: Server) => void attached.push(...sockets.map((attach) => attach(server, deps)));
  const close = async () => {
    for (const a of attached.splice(0)) a.close();
    await mountedConsole.close();
  };
  return { app, kernel, requestLog, connections, attachSockets, close };
}
