import { loadConfig } from './config';
import { failStartup, onShutdownSignal, openRuntime, prepareDatabase, prepareSecrets } from './runtime';
import { startApi } from './server';
import { startWorkers } from '../workers';
import { apiProcessCount, forkApiProcesses, isApiChild } from './cluster';

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
  const workers = await startWorkers(runtime);
  const api = apiProcessCount(config.apiProcesses) > 1 ? await forkApiProcesses(apiProcessCount(config.apiProcesses), logger) : await startApi(runtime);
  onShutdownSignal(logger, async () => {
    if ('server' in api) await api.close();
    else await api.stop(config.shutdownTimeoutMs + 2_000);
    await workers.close();
    await runtime.close();
  });
}

main().catch(failStartup);
