import { createServer, type Server } from 'node:http';
import { buildApp } from './app';
import { answerClientErrors } from './kernel/http';
import { loadConfig } from './config';
import { failStartup, onShutdownSignal, openRuntime, prepareDatabase, prepareSecrets, type Runtime } from './runtime';
import { seedAtStart } from './seed/seed';
import { apiProcessCount, forkApiProcesses, isApiChild } from './cluster';

export interface RunningApi {
  readonly server: Server;
  /** Stops accepting, lets in-flight requests finish (up to the shutdown timeout), then closes sockets. */
  close(): Promise<void>;
}

export async function startApi(runtime: Runtime): Promise<RunningApi> {
  await runtime.encryption.ready();
  const { app, kernel } = buildApp(runtime);
  if (runtime.config.seedFile) await seedAtStart(app, runtime);
  const server = createServer(app);
  answerClientErrors(server);
  server.keepAliveTimeout = 65_000;
  return new Promise<RunningApi>((resolve, reject) => {
    server.once('error', reject);
    const { host, port } = runtime.config;
    server.listen(port, host, () => {
      runtime.logger.info({ host, port: (server.address() as { port: number }).port }, 'api listening');
      resolve({
        server,
        close: async () => {
          // Keep-alive sockets become idle as their last response ends; close them as they do.
          const sweep = setInterval(() => server.closeIdleConnections(), 50);
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeIdleConnections();
          // Handlers whose client hung up may still be running; let them finish their writes.
          const drained = closed.then(() => kernel.inFlight.idle());
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, runtime.config.shutdownTimeoutMs)));
          await Promise.race([drained, timeout]);
          clearTimeout(timer);
          clearInterval(sweep);
          server.closeAllConnections();
        },
      });
    });
  });
}

async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig());
  const { config, logger } = runtime;
  if (!isApiChild()) await prepareDatabase(config, logger);
  await prepareSecrets(runtime);
  if (apiProcessCount(config.apiProcesses) > 1 && !isApiChild()) {
    // The primary only supervises; its clients were needed for the migrations and secrets.
    const children = await forkApiProcesses(apiProcessCount(config.apiProcesses), logger);
    onShutdownSignal(logger, async () => {
      await children.stop(config.shutdownTimeoutMs + 2_000);
      await runtime.close();
    });
    return;
  }
  const api = await startApi(runtime);
  onShutdownSignal(logger, async () => {
    await api.close();
    await runtime.close();
  });
}

if (require.main === module) {
  main().catch(failStartup);
}
