import { loadConfig } from './config';
import { onShutdownSignal, openRuntime, prepareDatabase } from './runtime';
import { startApi } from './server';
import { startWorkers } from '../workers';

// `npm start`: apply pending migrations, then run the API and the workers in one process.
async function main(): Promise<void> {
  const runtime = openRuntime(loadConfig());
  await prepareDatabase(runtime.config, runtime.logger);
  const workers = await startWorkers(runtime);
  const api = await startApi(runtime);
  onShutdownSignal(runtime.logger, async () => {
    await api.close();
    await workers.close();
    await runtime.close();
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
