// Applies prisma/migrations/<name>/migration.sql with plain `pg`, keeping the books exactly the way
// Prisma Migrate does (same `_prisma_migrations` table, checksums and advisory lock), so that
// `prisma migrate deploy` / `migrate status` accept the same folder and database later.
//
// Differences from Prisma, on purpose:
// - each migration runs in one transaction together with its bookkeeping row, so a failing
//   migration leaves neither half-applied DDL nor a "failed" row behind: fix the file and rerun.
//   (Statements that cannot run inside a transaction block, e.g. CREATE INDEX CONCURRENTLY, and
//   BEGIN/COMMIT inside migration.sql are therefore not supported.)
// - an applied migration whose file changed is reported through `log` and otherwise ignored
//   (`prisma migrate deploy` ignores it silently, `migrate dev` warns).

import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { findProjectRoot } from '../lib/projectRoot';

/** The advisory lock key Prisma Migrate takes for the duration of a run. */
export const PRISMA_MIGRATE_LOCK_ID = 72707369;

/** Prisma's own DDL for the bookkeeping table (schema-engine, PostgreSQL flavour). */
export const PRISMA_MIGRATIONS_TABLE_DDL = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);
`;

export interface ApplyMigrationsOptions {
  /** Folder holding `<name>/migration.sql`; defaults to `<project root>/prisma/migrations`. */
  migrationsDir?: string;
  /** Progress and warnings; defaults to console.log. */
  log?: (msg: string) => void;
}

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}

interface LocalMigration {
  name: string;
  sql: string;
  checksum: string;
}

interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  rolled_back_at: Date | null;
  started_at: Date;
}

export function defaultMigrationsDir(): string {
  return path.join(findProjectRoot(), 'prisma', 'migrations');
}

/** Hex SHA-256 of the migration file, as Prisma stores it in `_prisma_migrations.checksum`. */
export function migrationChecksum(script: Buffer | string): string {
  return createHash('sha256').update(script).digest('hex');
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function pgCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

function errorText(err: unknown): string {
  if (err instanceof AggregateError && !err.message) return err.errors.map(errorText).join('; ');
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

interface Target {
  url: URL;
  database: string;
  schema: string | null;
}

function parseTarget(databaseUrl: string): Target {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new MigrationError('database URL is not a valid URL');
  }
  if (url.protocol !== 'postgresql:' && url.protocol !== 'postgres:') {
    throw new MigrationError(`database URL must use postgresql:, got ${url.protocol}`);
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!database || database.includes('/')) throw new MigrationError('database URL must name a database (postgresql://host/<database>)');
  // `?schema=` is Prisma's, not libpq's: pg would ignore it, so we apply it ourselves.
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  return { url, database, schema: schema || null };
}

function withDatabase(url: URL, database: string): string {
  const copy = new URL(url.toString());
  copy.pathname = '/' + encodeURIComponent(database);
  return copy.toString();
}

async function connect(connectionString: string): Promise<Client> {
  const client = new Client({ connectionString });
  // A connection dropped while idle would otherwise crash the process; queries still reject.
  client.on('error', () => {});
  await client.connect();
  return client;
}

/**
 * Creates the database named in `databaseUrl` when it doesn't exist, connecting to the `postgres`
 * maintenance database of the same server. Returns true when this call created it.
 */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const target = parseTarget(databaseUrl);
  if (target.database === 'postgres') return false;

  let admin: Client;
  try {
    admin = await connect(withDatabase(target.url, 'postgres'));
  } catch (err) {
    // No access to the maintenance database: fine as long as the target itself exists.
    try {
      const probe = await connect(target.url.toString());
      await probe.end();
      return false;
    } catch {
      throw err;
    }
  }
  try {
    const existing = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [target.database]);
    if (existing.rowCount) return false;
    try {
      await admin.query(`CREATE DATABASE ${quoteIdent(target.database)}`);
      return true;
    } catch (err) {
      // Another process created it between our check and our CREATE: 42P04 duplicate_database,
      // or 23505 when both inserts race on pg_database's unique index.
      if (pgCode(err) === '42P04' || pgCode(err) === '23505') return false;
      throw err;
    }
  } finally {
    await admin.end().catch(() => {});
  }
}

/** Migration folders in name order, read and checksummed before we touch the database. */
function readLocalMigrations(dir: string): LocalMigration[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    throw new MigrationError(`cannot read migrations directory ${dir}: ${errorText(err)}`);
  }
  return entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => {
      const file = path.join(dir, name, 'migration.sql');
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(file);
      } catch (err) {
        throw new MigrationError(`cannot read ${file}: ${errorText(err)}`);
      }
      return { name, sql: bytes.toString('utf8'), checksum: migrationChecksum(bytes) };
    });
}

/** Prisma accepts a checksum computed over the file with either line-ending convention. */
function checksumMatches(local: LocalMigration, recorded: string): boolean {
  if (local.checksum === recorded) return true;
  const lf = local.sql.replace(/\r\n/g, '\n');
  return migrationChecksum(lf) === recorded || migrationChecksum(lf.replace(/\n/g, '\r\n')) === recorded;
}

async function migrationsTableExists(client: Client): Promise<boolean> {
  const { rows } = await client.query<{ exists: boolean }>(
    "SELECT to_regclass(quote_ident(current_schema()) || '._prisma_migrations') IS NOT NULL AS exists",
  );
  return rows[0]?.exists === true;
}

/**
 * Applies the pending migrations of `migrationsDir` (default `<project root>/prisma/migrations`)
 * in name order and returns the names applied. Safe to call from several processes at once.
 */
export async function applyMigrations(databaseUrl: string, options: ApplyMigrationsOptions = {}): Promise<string[]> {
  const log = options.log ?? ((msg: string) => console.log(msg));
  const migrationsDir = options.migrationsDir ?? defaultMigrationsDir();
  const local = readLocalMigrations(migrationsDir);
  const target = parseTarget(databaseUrl);

  const client = await connect(target.url.toString());
  try {
    if (target.schema) {
      const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [target.schema]);
      if (!rowCount) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(target.schema)}`);
      await client.query(`SET search_path TO ${quoteIdent(target.schema)}`);
    }

    await client.query(`SELECT pg_advisory_lock(${PRISMA_MIGRATE_LOCK_ID})`);
    try {
      return await applyLocked(client, local, log);
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_LOCK_ID})`).catch(() => {});
    }
  } finally {
    await client.end().catch(() => {});
  }
}

async function applyLocked(client: Client, local: LocalMigration[], log: (msg: string) => void): Promise<string[]> {
  if (!(await migrationsTableExists(client))) await client.query(PRISMA_MIGRATIONS_TABLE_DDL);

  const { rows } = await client.query<MigrationRow>(
    'SELECT id, checksum, finished_at, migration_name, rolled_back_at, started_at FROM _prisma_migrations ORDER BY started_at, migration_name',
  );

  const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      `P3009: found failed migrations in the target database, new migrations will not be applied. ` +
        `The \`${failed.migration_name}\` migration started at ${failed.started_at.toISOString()} failed; ` +
        `repair the database, then mark it rolled back (\`prisma migrate resolve --rolled-back ${failed.migration_name}\`, ` +
        `or set its rolled_back_at in _prisma_migrations) and run the migrations again`,
      'P3009',
    );
  }

  const applied = new Map<string, MigrationRow>();
  for (const row of rows) if (row.finished_at !== null && row.rolled_back_at === null) applied.set(row.migration_name, row);

  const localNames = new Set(local.map((m) => m.name));
  for (const name of applied.keys()) {
    if (!localNames.has(name)) log(`warning: migration ${name} is applied to the database but missing from the migrations directory`);
  }

  const done: string[] = [];
  for (const migration of local) {
    const row = applied.get(migration.name);
    if (row) {
      if (!checksumMatches(migration, row.checksum)) {
        log(`warning: migration ${migration.name} was modified after it was applied (checksum ${row.checksum} in the database, ${migration.checksum} on disk); not reapplying it`);
      }
      continue;
    }

    log(`applying migration ${migration.name}`);
    const id = randomUUID();
    await client.query('BEGIN');
    try {
      await client.query(
        'INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, clock_timestamp(), 0)',
        [id, migration.checksum, migration.name],
      );
      await client.query(migration.sql);
      await client.query('UPDATE _prisma_migrations SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1', [id]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      const code = pgCode(err);
      throw new MigrationError(
        `migration ${migration.name} failed and was rolled back: ${errorText(err)}${code && /^[0-9A-Z]{5}$/.test(code) ? ` (SQLSTATE ${code})` : ''}`,
        code,
      );
    }
    done.push(migration.name);
  }
  return done;
}
