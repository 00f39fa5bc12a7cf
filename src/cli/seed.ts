// `npm run seed -- fixtures.json [--api-key sk_test_…]`: applies a fixtures file (JSON or YAML,
// the Stripe CLI's format) through the API's own pipeline, in this process, against the database
// of DATABASE_URL; the objects belong to the key's account (SEED_API_KEY when no --api-key).
// Prints one line per fixture: its name, its object's id, and a note when it was applied before.
// A fixture already applied to the account is skipped, so running a file again adds only the new ones.

import { buildApp } from '../app';
import { ConfigError, environment, loadConfig } from '../config';
import { explainDatabaseError } from '../db/connectError';
import { createLogger } from '../lib/logger';
import { openRuntime, prepareDatabase, prepareSecrets, StartupError } from '../runtime';
import { readFixturesFile, seedFromFile, SeedError, type FixtureOutcome } from '../seed/seed';

const USAGE = 'usage: npm run seed -- <fixtures.json|fixtures.yaml> [--api-key sk_test_…] (or SEED_API_KEY)';

const NOTES: Record<FixtureOutcome['outcome'], string> = {
  created: '',
  fetched: '',
  existing: 'seeded before',
  changed: 'seeded before; the fixture changed since, and the object was left as it was',
  expected_error: 'failed as expected',
};

/** `name<TAB>id`, then the note when there is one. */
export const formatOutcome = (o: FixtureOutcome): string => [o.name, o.id ?? '-', ...(NOTES[o.outcome] ? [`(${NOTES[o.outcome]})`] : [])].join('\t');

function parseArgs(argv: string[]): { file: string; apiKey?: string } | undefined {
  const files: string[] = [];
  let apiKey: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--api-key' && i + 1 < argv.length) apiKey = argv[++i];
    else if (arg.startsWith('--api-key=')) apiKey = arg.slice('--api-key='.length);
    else if (arg.startsWith('-')) return undefined;
    else files.push(arg);
  }
  return files.length === 1 ? { file: files[0], apiKey } : undefined;
}

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (!args) {
    console.error(USAGE);
    return 2;
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : String(err));
    return 1;
  }
  const apiKey = args.apiKey ?? config.seedApiKey;
  if (!apiKey) {
    console.error('no API key: pass --api-key sk_test_… or set SEED_API_KEY (the seeded objects belong to that key\'s account)');
    return 2;
  }
  // Read before anything connects: a missing file is its one line, with no connection to wind down.
  let text: string;
  try {
    text = await readFixturesFile(args.file);
  } catch (err) {
    console.error(`seed failed: ${(err as Error).message}`);
    return 1;
  }
  // Logs go to stderr, so stdout carries only the fixtures' lines.
  const runtime = openRuntime(config, { logger: createLogger('warn', process.stderr) });
  try {
    await prepareDatabase(config, runtime.logger);
    await prepareSecrets(runtime);
    const { app } = buildApp(runtime);
    const result = await seedFromFile(app, runtime, {
      file: args.file,
      text,
      apiKey,
      env: environment(),
      onFixture: (outcome) => console.log(formatOutcome(outcome)),
    });
    const count = (...outcomes: FixtureOutcome['outcome'][]) => result.fixtures.filter((f) => outcomes.includes(f.outcome)).length;
    console.error(`seeded ${args.file} into ${result.accountId}: ${count('created')} created, ${count('existing', 'changed')} seeded before`);
    return 0;
  } catch (err) {
    const known = err instanceof SeedError || err instanceof StartupError || err instanceof ConfigError;
    console.error(`seed failed: ${known ? (err as Error).message : (explainDatabaseError(err, config.databaseUrl) ?? (err instanceof Error ? err.message : String(err)))}`);
    return 1;
  } finally {
    await runtime.close();
  }
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
