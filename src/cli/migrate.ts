// `npm run migrate`: creates the database named by DATABASE_URL when missing and applies the
// pending migrations of prisma/migrations.

import { loadConfig } from '../config';
import { applyMigrations, ensureDatabase } from '../db/migrate';
import { explainDatabaseError } from '../db/connectError';

/** host:port/database, without credentials. */
function describeDatabase(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.host}${url.pathname}`;
  } catch {
    return 'the database';
  }
}

function oneLine(err: unknown): string {
  let text: string;
  if (err instanceof AggregateError && !err.message) text = err.errors.map(oneLine).join('; ');
  else if (err instanceof Error) text = err.message || err.name;
  else text = String(err);
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

async function main(): Promise<void> {
  const { databaseUrl } = loadConfig();
  const where = describeDatabase(databaseUrl);
  if (await ensureDatabase(databaseUrl)) console.log(`created database ${where}`);
  const applied = await applyMigrations(databaseUrl, { log: (msg) => console.log(msg) });
  if (applied.length === 0) console.log(`${where} is up to date, no pending migrations`);
  else console.log(`applied ${applied.length} migration${applied.length === 1 ? '' : 's'} to ${where}: ${applied.join(', ')}`);
}

main().catch((err: unknown) => {
  console.error(explainDatabaseError(err, loadConfig().databaseUrl) ?? `migrate failed: ${oneLine(err)}`);
  process.exit(1);
});
