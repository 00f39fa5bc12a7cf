import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSuite, scenarioNames } from './suite';

// `npm run faults`: the full fault suite (2,000 writes from 32 clients per burst). Flags:
//   --short            the version `npm test` runs (fewer writes)
//   --only=a,b         only these scenarios (burst:redis-flushall, pipeline:worker-kill, …)
//   --writes=N --clients=N --items=N
//   --keep             keep the services' logs (a failed run always keeps them)
//   --built            run the API and the worker from dist/ as production does (after `npm run build`)
//   --load=N           run N busy processes per core beside the stack (figures at a known load)
// Exits non-zero when anything was lost, ran twice or stayed stuck. Figures go to
// faults/results.json as well.

function flag(name: string): string | undefined {
  const arg = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  return arg === undefined ? undefined : (arg.split('=')[1] ?? '');
}

async function main(): Promise<void> {
  const short = flag('short') !== undefined;
  const only = flag('only')?.split(',').filter(Boolean);
  const unknown = only?.filter((o) => !scenarioNames().includes(o)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown scenarios: ${unknown.join(', ')} (known: ${scenarioNames().join(', ')})`);
  const options = {
    writes: Number(flag('writes') ?? (short ? 300 : 2000)),
    clients: Number(flag('clients') ?? (short ? 16 : 32)),
    pipelineItems: Number(flag('items') ?? (short ? 10 : 40)),
    only,
    keepLogs: flag('keep') !== undefined,
    built: flag('built') !== undefined,
    cpuLoad: Number(flag('load') ?? 0),
  };
  const started = Date.now();
  const results = await runSuite(options);
  const failed = results.filter((r) => r.problems.length > 0);
  writeFileSync(join(__dirname, 'results.json'), JSON.stringify({ at: new Date().toISOString(), options, seconds: Math.round((Date.now() - started) / 1000), results }, null, 2) + '\n');
  console.log(`\n${results.length - failed.length} of ${results.length} scenarios passed in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exitCode = failed.length > 0 ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
