import { loadConfig } from './config';
import { failStartup, onShutdownSignal, openRuntime, prepareDatabase, prepareSecrets } from './runtime';
import { startApi } from './server';
import { startWorkers } from '../workers';

// `npm start`: apply pending migrations, then run the API and the workers in one process.
async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig());
  await prepareDatabase(runtime.config, runtime.logger);
  await prepareSecrets(runtime);
  const workers = await startWorkers(runtime);
  const api = await startApi(runtime);
  onShutdownSignal(runtime.logger, async () => {
    await api.close();
    await workers.close();
    await runtime.close();
  });
}

main().catch(failStartup);
