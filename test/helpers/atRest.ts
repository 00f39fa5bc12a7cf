import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestApp } from './app';

// What must never be at rest in plain text (a secret, a payload, a key): searched in every row of
// every table, in a pg_dump of the app's database, and in everything the app logged.

/**
 * Fails if `text` is found. `present`: what the dump must hold (ids of the rows that keep the
 * sealed copy, say), so the search is known to have looked at them.
 */
export async function expectNowhereAtRest(t: TestApp, text: string, present: readonly string[] = []): Promise<void> {
  const prisma = t.runtime.prisma;
  const tables = await prisma.$queryRaw<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`;
  expect(tables.length).toBeGreaterThan(0);
  for (const { tablename } of tables) {
    const hits = await prisma.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "${tablename}" AS r WHERE strpos(r::text, $1) > 0`, text);
    expect({ table: tablename, hits: Number(hits[0].n) }).toEqual({ table: tablename, hits: 0 });
  }

  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', `--dbname=${t.config.databaseUrl}`], { maxBuffer: 256 * 1024 * 1024 });
  for (const p of present) expect(stdout).toContain(p);
  expect(stdout).not.toContain(text);

  expect(t.logText().length).toBeGreaterThan(0);
  expect(t.logText()).not.toContain(text);
}
