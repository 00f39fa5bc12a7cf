import express, { type Express } from 'express';
import type { Redis } from './lib/redis';
import type { Deps } from './kernel/route';
import { Authenticator } from './kernel/auth';
import { ExpandRegistry } from './kernel/expand';
import { accessLog, errorMiddleware, InFlight, mountRoutes, notFound, requestIdentity, type Kernel } from './kernel/http';
import { IdempotencyStore } from './kernel/idempotency';
import { checkRoutesAgainstDocument, loadOpenApiDocument, operationsOf } from './kernel/openapi';
import { generatedSchemas, resources } from './resources';
import { renderMetrics, watchQueueDepth } from './lib/metrics';
import { mountPages } from './hosted/pages';

export interface AppDeps extends Deps {
  readonly redis: Redis;
}

export interface BuiltApp {
  readonly app: Express;
  readonly kernel: Kernel;
}

/** The Express app with the kernel and every resource mounted; it does not listen. */
export function buildApp(deps: AppDeps): BuiltApp {
  const { config, prisma, logger, clock, redis } = deps;
  const document = loadOpenApiDocument(generatedSchemas);
  const operations = operationsOf(document);
  const routes = resources.flatMap((r) => r.routes);
  checkRoutesAgainstDocument(routes, operations);

  const expand = new ExpandRegistry();
  for (const r of resources) for (const [object, fields] of Object.entries(r.expandable)) expand.register(object, fields);
  const kernel: Kernel = {
    deps,
    authenticator: new Authenticator(prisma, config.authMode, clock, config.apiKeyCacheSeconds),
    idempotency: new IdempotencyStore(prisma, config.idempotencyTtlHours, deps.encryption),
    expand,
    limits: { bodyLimitBytes: config.bodyLimitBytes, depthLimit: config.paramDepthLimit, countLimit: config.paramCountLimit },
    inFlight: new InFlight(),
  };

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.set('case sensitive routing', true);
  app.use(requestIdentity);
  app.use(accessLog(logger));

  const documentJson = JSON.stringify(document);
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(documentJson);
  });
  watchQueueDepth(deps.jobs.relay.queue);
  watchQueueDepth(deps.jobs.deliveryQueue);
  watchQueueDepth(deps.identity.queue);
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
      redis.ping().then((r) => r === 'PONG', () => false),
    ]);
    res.status(database && queue ? 200 : 503).json({ status: database && queue ? 'ready' : 'unavailable', postgres: database, redis: queue });
  });

  mountPages(app, resources.flatMap((r) => r.pages ?? []), deps, kernel.limits, kernel.inFlight);
  mountRoutes(app, routes, operations, kernel);
  app.use(notFound(logger));
  app.use(errorMiddleware(logger));
  return { app, kernel };
}
