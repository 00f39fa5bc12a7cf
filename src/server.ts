import { createServer, type Server } from 'node:http';
import net from 'node:net';
import { buildApp } from './app';
import { answerClientErrors } from './kernel/http';
import { loadConfig } from './config';
import { failStartup, onShutdownSignal, openRuntime, prepareDatabase, prepareSecrets, startTimes, type Runtime } from './runtime';
import { seedAtStart } from './seed/seed';
import { apiProcessCount, forkApiProcesses, isApiChild } from './cluster';

export interface RunningApi {
  readonly server: Server;
  /**
   * Stops accepting, lets the requests in flight finish (each answered with `Connection: close`),
   * closes keep-alive connections as they fall quiet, and waits for operations whose client hung
   * up; after the shutdown timeout, closes what is left.
   */
  close(): Promise<void>;
}

/**
 * A connection quiet this long during a drain is closed. Closing one its client is about to send
 * on resets that request, and under load clients reuse a quiet connection within a few hundred ms
 * (the SDKs' first retries wait 0.25–1 s): a connection they leave alone for a second they don't need.
 */
export const DRAIN_IDLE_MS = 1_000;

export async function startApi(runtime: Runtime, options: { drainIdleMs?: number } = {}): Promise<RunningApi> {
  await runtime.encryption.ready();
  const { app, kernel, connections, attachSockets, close: closeApp } = buildApp(runtime);
  if (runtime.config.seedFile) await seedAtStart(app, runtime);
  const server = createServer(app);
  attachSockets(server);
  answerClientErrors(server);
  server.keepAliveTimeout = 65_000;
  connections.watch(server);
  const drainIdleMs = options.drainIdleMs ?? DRAIN_IDLE_MS;
  return new Promise<RunningApi>((resolve, reject) => {
    server.once('error', reject);
    const { host, port } = runtime.config;
    server.listen(port, host, () => {
      runtime.logger.info({ host, port: (server.address() as { port: number }).port, ...startTimes() }, 'api listening');
      resolve({
        server,
        close: async () => {
          const deadline = Date.now() + runtime.config.shutdownTimeoutMs;
          connections.drain(drainIdleMs);
          // net's close, not http's: http's also destroys every idle connection at once, and under
          // load an "idle" one often holds the client's next request unread, which then gets a reset.
          const unlistened = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
          const drained = (async () => {
            await connections.closed(deadline);
            await unlistened;
            // Handlers whose client hung up may still be running; let them finish their writes.
            await kernel.inFlight.idle();
            await closeApp();
          })();
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
          await Promise.race([drained, timeout]);
          clearTimeout(timer);
          connections.stop();
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
  await prepareSecrets(runtime, { sealInBackground: true });
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
