import { loadConfig } from './config';
import { failStartup, onShutdownSignal, openRuntime, prepareDatabase, prepareSecrets } from './runtime';
import { startApi } from './server';
import { startWorkers } from '../workers';
import { apiProcessCount, forkApiProcesses, isApiChild } from './cluster';
import { CONSOLE_PREFIX } from './console/pages';

// `npm start`: apply pending migrations, then run the workers and the API; with API_PROCESSES
// above 1, the API runs in that many processes of a cluster and the workers in the first one.
async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig());
  const { config, logger } = runtime;
  if (isApiChild()) {
    await prepareSecrets(runtime, { sealInBackground: true });
    const api = await startApi(runtime);
    onShutdownSignal(logger, async () => {
      await api.close();
      await runtime.close();
    });
    return;
  }
  await prepareDatabase(config, logger);
  await prepareSecrets(runtime, { sealInBackground: true });
  // The API first: after a restart on busy cores it answers without waiting for the workers' start
  // (and their first reconcile pass), which runs meanwhile.
  const api = apiProcessCount(config.apiProcesses) > 1 ? await forkApiProcesses(apiProcessCount(config.apiProcesses), logger) : await startApi(runtime);
  const workers = await startWorkers(runtime);
  // One line at every LOG_LEVEL (its own child's level): where to point an SDK and a browser.
  const port = 'server' in api ? (api.server.address() as { port: number }).port : config.port;
  const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  logger.child({}, { level: 'info' }).info({ api: url, console: `${config.publicUrl}${CONSOLE_PREFIX}` }, `sandbank ready: API ${url}, console ${config.publicUrl}${CONSOLE_PREFIX}`);
  onShutdownSignal(logger, async () => {
    if ('server' in api) await api.close();
    else await api.stop(config.shutdownTimeoutMs + 2_000);
    await workers.close();
    await runtime.close();
  });
}

main().catch(failStartup);
