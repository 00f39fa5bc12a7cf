// The migrated database must match prisma/schema.prisma: tables, columns (type, nullability,
// default), primary keys, unique and plain indexes, foreign keys. Also checks the migration runner:
// idempotence, Prisma-compatible bookkeeping, concurrency, failure handling.

import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { applyMigrations, ensureDatabase } from '../../src/db/migrate';
import { loadPrismaSchema, type PrismaModel, type PrismaScalarField, type PrismaSchema, type PrismaValue } from '../helpers/prismaSchema';

const ROOT = path.resolve(__dirname, '..', '..');
const MIGRATIONS_DIR = path.join(ROOT, 'prisma', 'migrations');
const schema: PrismaSchema = loadPrismaSchema(path.join(ROOT, 'prisma', 'schema.prisma'));
const BASE_URL = process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const RUN_ID = randomBytes(4).toString('hex');

const localMigrations = fs
  .readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

const scratchDatabases: string[] = [];
const tempDirs: string[] = [];

function scratchUrl(suffix: string): string {
  const name = `sandbank_schema_${RUN_ID}_${suffix}`;
  scratchDatabases.push(name);
  return urlFor(name);
}

function urlFor(database: string): string {
  const url = new URL(BASE_URL);
  url.pathname = '/' + database;
  url.searchParams.delete('schema');
  return url.toString();
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const sha256 = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

// ---------------------------------------------------------------------------------------------
// What the schema says the database should look like

interface ColumnShape {
  type: string;
  nullable: boolean;
  /** Normalized default (see normalizeDbDefault), or null for none. */
  default: string | null;
}

interface IndexShape {
  name: string;
  columns: string[];
  unique: boolean;
}

interface ForeignKeyShape {
  name: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}

interface TableShape {
  columns: Map<string, ColumnShape>;
  primaryKey: { name: string; columns: string[] } | null;
  indexes: IndexShape[];
  foreignKeys: ForeignKeyShape[];
}

const MAX_IDENTIFIER = 63;

/** Prisma's default constraint names: `<table>_<columns>_<suffix>`, truncated to 63 characters. */
function defaultName(table: string, columns: string[], suffix: string): string {
  const base = [table, ...columns].join('_');
  return base.length + 1 + suffix.length > MAX_IDENTIFIER ? `${base.slice(0, MAX_IDENTIFIER - suffix.length - 1)}_${suffix}` : `${base}_${suffix}`;
}

const ACTIONS: Record<string, string> = { Cascade: 'CASCADE', Restrict: 'RESTRICT', NoAction: 'NO ACTION', SetNull: 'SET NULL', SetDefault: 'SET DEFAULT' };

function unsupported(field: PrismaScalarField, what: string): never {
  throw new Error(`schema test does not know how to check ${what} of field ${field.name} (${field.type}${field.nativeType ? ` @db.${field.nativeType.name}` : ''})`);
}

/** PostgreSQL's format_type() of the column Prisma creates for a field. */
function expectedType(field: PrismaScalarField): string {
  const native = field.nativeType;
  const args = native?.args ?? [];
  const precision = args.length ? `(${args.join(',')})` : '';
  let base: string;
  switch (field.type) {
    case 'String':
      if (!native || native.name === 'Text') base = 'text';
      else if (native.name === 'VarChar') base = `character varying${precision}`;
      else if (native.name === 'Char') base = `character${precision}`;
      else if (native.name === 'Uuid') base = 'uuid';
      else unsupported(field, 'the native type');
      break;
    case 'Int':
      if (!native || native.name === 'Integer') base = 'integer';
      else if (native.name === 'SmallInt') base = 'smallint';
      else unsupported(field, 'the native type');
      break;
    case 'BigInt':
      if (native) unsupported(field, 'the native type');
      base = 'bigint';
      break;
    case 'Boolean':
      if (native) unsupported(field, 'the native type');
      base = 'boolean';
      break;
    case 'Float':
      if (!native || native.name === 'DoublePrecision') base = 'double precision';
      else if (native.name === 'Real') base = 'real';
      else unsupported(field, 'the native type');
      break;
    case 'Decimal':
      if (!native) base = 'numeric(65,30)';
      else if (native.name === 'Decimal') base = `numeric${precision}`;
      else unsupported(field, 'the native type');
      break;
    case 'DateTime':
      if (!native) base = 'timestamp(3) without time zone';
      else if (native.name === 'Timestamptz') base = `timestamp${precision} with time zone`;
      else if (native.name === 'Timestamp') base = `timestamp${precision} without time zone`;
      else if (native.name === 'Date') base = 'date';
      else unsupported(field, 'the native type');
      break;
    case 'Json':
      if (!native || native.name === 'JsonB') base = 'jsonb';
      else if (native.name === 'Json') base = 'json';
      else unsupported(field, 'the native type');
      break;
    case 'Bytes':
      if (native) unsupported(field, 'the native type');
      base = 'bytea';
      break;
  }
  return field.list ? `${base!}[]` : base!;
}

/** The normalized database default a field's @default produces (null: none in the database). */
function expectedDefault(field: PrismaScalarField): string | null {
  const value: PrismaValue | null = field.default;
  if (!value) return null;
  switch (value.kind) {
    case 'string':
      return JSON.stringify(value.value);
    case 'number':
      return value.value;
    case 'identifier':
      return value.value;
    case 'call':
      if (value.name === 'autoincrement') return 'autoincrement()';
      if (value.name === 'now') return 'now()';
      if (['uuid', 'cuid', 'nanoid', 'ulid'].includes(value.name)) return null; // generated by Prisma Client
      if (value.name === 'dbgenerated' && value.args[0]?.value.kind === 'string') return `dbgenerated(${JSON.stringify(value.args[0].value.value)})`;
      return unsupported(field, 'the default');
    case 'array':
      return unsupported(field, 'the default');
  }
}

const NUMERIC_TYPES = ['smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision'];

/** Puts pg_get_expr() of a column default in the same form as expectedDefault(). */
function normalizeDbDefault(expr: string | null): string | null {
  if (expr === null) return null;
  if (/^nextval\('[^']+'::regclass\)$/.test(expr)) return 'autoincrement()';
  if (expr === 'CURRENT_TIMESTAMP' || expr === 'now()') return 'now()';
  if (/^-?\d+(\.\d+)?$/.test(expr) || expr === 'true' || expr === 'false') return expr;
  const literal = /^'((?:[^']|'')*)'::(.+)$/.exec(expr);
  if (literal) {
    const text = literal[1]!.replace(/''/g, "'");
    const cast = literal[2]!.replace(/\(.*\)$/, '');
    return NUMERIC_TYPES.includes(cast) || cast === 'boolean' ? text : JSON.stringify(text);
  }
  return `dbgenerated(${JSON.stringify(expr)})`;
}

function expectedTables(prisma: PrismaSchema): Map<string, TableShape> {
  const byName = new Map(prisma.models.map((m) => [m.name, m]));
  const tables = new Map<string, TableShape>();
  for (const model of prisma.models) {
    const scalars = model.fields.filter((f): f is PrismaScalarField => f.kind === 'scalar');
    const column = (name: string, m: PrismaModel = model): string => {
      const field = m.fields.find((f) => f.name === name);
      if (!field || field.kind !== 'scalar') throw new Error(`${m.name} has no scalar field ${name}`);
      return field.columnName;
    };
    const table = model.tableName;
    const shape: TableShape = {
      columns: new Map(scalars.map((f) => [f.columnName, { type: expectedType(f), nullable: f.optional || f.list, default: expectedDefault(f) }])),
      primaryKey: model.id ? { name: defaultName(table, [], 'pkey'), columns: model.id.fields.map((f) => column(f)) } : null,
      indexes: [],
      foreignKeys: [],
    };
    for (const u of model.uniques) {
      const columns = u.fields.map((f) => column(f));
      shape.indexes.push({ name: u.map ?? defaultName(table, columns, 'key'), columns, unique: true });
    }
    for (const i of model.indexes) {
      const columns = i.fields.map((f) => column(f));
      shape.indexes.push({ name: i.map ?? defaultName(table, columns, 'idx'), columns, unique: false });
    }
    for (const field of model.fields) {
      if (field.kind !== 'relation' || !field.relation.fields.length) continue;
      const target = byName.get(field.type)!;
      const columns = field.relation.fields.map((f) => column(f));
      const optional = field.relation.fields.some((f) => scalars.find((s) => s.name === f)!.optional);
      shape.foreignKeys.push({
        name: field.relation.map ?? defaultName(table, columns, 'fkey'),
        columns,
        refTable: target.tableName,
        refColumns: field.relation.references.map((f) => column(f, target)),
        // Prisma's defaults: SetNull for optional relations, Restrict for required ones; onUpdate Cascade.
        onDelete: ACTIONS[field.relation.onDelete ?? (optional ? 'SetNull' : 'Restrict')]!,
        onUpdate: ACTIONS[field.relation.onUpdate ?? 'Cascade']!,
      });
    }
    tables.set(table, shape);
  }
  return tables;
}

// ---------------------------------------------------------------------------------------------
// What the database looks like

const PG_ACTIONS: Record<string, string> = { a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

async function introspect(url: string): Promise<Map<string, TableShape>> {
  return withClient(url, async (client) => {
    const tables = new Map<string, TableShape>();
    const table = (name: string): TableShape => tables.get(name)!;

    const tableRows = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
    );
    for (const row of tableRows.rows) tables.set(row.table_name, { columns: new Map(), primaryKey: null, indexes: [], foreignKeys: [] });

    const columns = await client.query<{ table_name: string; column_name: string; type: string; nullable: boolean; default: string | null }>(
      `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type,
              NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS default
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum`,
    );
    for (const row of columns.rows) {
      table(row.table_name)?.columns.set(row.column_name, { type: row.type, nullable: row.nullable, default: normalizeDbDefault(row.default) });
    }

    const indexes = await client.query<{ table_name: string; index_name: string; unique: boolean; primary: boolean; columns: string[]; special: boolean }>(
      `SELECT t.relname AS table_name, i.relname AS index_name, ix.indisunique AS unique, ix.indisprimary AS primary,
              ARRAY(SELECT a.attname FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum
                     ORDER BY k.ord)::text[] AS columns,
              (ix.indexprs IS NOT NULL OR ix.indpred IS NOT NULL) AS special
         FROM pg_index ix
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public'
        ORDER BY t.relname, i.relname`,
    );
    for (const row of indexes.rows) {
      const shape = table(row.table_name);
      if (!shape) continue;
      const name = row.special ? `${row.index_name} (expression or partial index)` : row.index_name;
      if (row.primary) shape.primaryKey = { name, columns: row.columns };
      else shape.indexes.push({ name, columns: row.columns, unique: row.unique });
    }

    const fks = await client.query<{ table_name: string; name: string; columns: string[]; ref_table: string; ref_columns: string[]; on_delete: string; on_update: string }>(
      `SELECT t.relname AS table_name, con.conname AS name,
              ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns,
              r.relname AS ref_table,
              ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS ref_columns,
              con.confdeltype AS on_delete, con.confupdtype AS on_update
         FROM pg_constraint con
         JOIN pg_class t ON t.oid = con.conrelid
         JOIN pg_class r ON r.oid = con.confrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND con.contype = 'f'
        ORDER BY t.relname, con.conname`,
    );
    for (const row of fks.rows) {
      table(row.table_name)?.foreignKeys.push({
        name: row.name,
        columns: row.columns,
        refTable: row.ref_table,
        refColumns: row.ref_columns,
        onDelete: PG_ACTIONS[row.on_delete] ?? row.on_delete,
        onUpdate: PG_ACTIONS[row.on_update] ?? row.on_update,
      });
    }
    return tables;
  });
}

// ---------------------------------------------------------------------------------------------
// Differences, one readable line each

const cols = (columns: string[]): string => `(${columns.join(', ')})`;
const describeColumn = (c: ColumnShape): string => `${c.type} ${c.nullable ? 'NULL' : 'NOT NULL'}${c.default === null ? '' : ` DEFAULT ${c.default}`}`;
const describeIndex = (i: IndexShape): string => `${i.unique ? 'unique index' : 'index'} ${i.name} ${cols(i.columns)}`;
const describeFk = (f: ForeignKeyShape): string =>
  `foreign key ${f.name} ${cols(f.columns)} -> ${f.refTable}${cols(f.refColumns)} ON DELETE ${f.onDelete} ON UPDATE ${f.onUpdate}`;

function diffTable(name: string, expected: TableShape, actual: TableShape): string[] {
  const diffs: string[] = [];
  for (const [column, want] of expected.columns) {
    const got = actual.columns.get(column);
    if (!got) {
      diffs.push(`${name}: missing column ${column} (${describeColumn(want)})`);
      continue;
    }
    if (got.type !== want.type) diffs.push(`${name}.${column}: type is ${got.type}, schema.prisma says ${want.type}`);
    if (got.nullable !== want.nullable) diffs.push(`${name}.${column}: is ${got.nullable ? 'nullable' : 'NOT NULL'}, schema.prisma says ${want.nullable ? 'nullable' : 'NOT NULL'}`);
    if (got.default !== want.default) diffs.push(`${name}.${column}: default is ${got.default ?? 'none'}, schema.prisma says ${want.default ?? 'none'}`);
  }
  for (const [column, got] of actual.columns) {
    if (!expected.columns.has(column)) diffs.push(`${name}: column ${column} (${describeColumn(got)}) is not in schema.prisma`);
  }

  const pk = (p: TableShape['primaryKey']): string => (p ? `${p.name} ${cols(p.columns)}` : 'none');
  if (pk(expected.primaryKey) !== pk(actual.primaryKey)) diffs.push(`${name}: primary key is ${pk(actual.primaryKey)}, schema.prisma says ${pk(expected.primaryKey)}`);

  for (const want of expected.indexes) {
    const got = actual.indexes.find((i) => i.name === want.name);
    if (!got) diffs.push(`${name}: missing ${describeIndex(want)}`);
    else if (describeIndex(got) !== describeIndex(want)) diffs.push(`${name}: ${describeIndex(got)}, schema.prisma says ${describeIndex(want)}`);
  }
  for (const got of actual.indexes) {
    if (!expected.indexes.some((i) => i.name === got.name)) diffs.push(`${name}: ${describeIndex(got)} is not in schema.prisma`);
  }

  for (const want of expected.foreignKeys) {
    const got = actual.foreignKeys.find((f) => f.name === want.name);
    if (!got) diffs.push(`${name}: missing ${describeFk(want)}`);
    else if (describeFk(got) !== describeFk(want)) diffs.push(`${name}: ${describeFk(got)}, schema.prisma says ${describeFk(want)}`);
  }
  for (const got of actual.foreignKeys) {
    if (!expected.foreignKeys.some((f) => f.name === got.name)) diffs.push(`${name}: ${describeFk(got)} is not in schema.prisma`);
  }
  return diffs;
}

// ---------------------------------------------------------------------------------------------

afterAll(async () => {
  await withClient(urlFor('postgres'), async (admin) => {
    for (const name of scratchDatabases) {
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}"`);
    }
  });
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('migrated database matches prisma/schema.prisma', () => {
  const url = scratchUrl('main');
  const expected = expectedTables(schema);
  let created: boolean;
  let applied: string[];
  let actual: Map<string, TableShape>;

  beforeAll(async () => {
    created = await ensureDatabase(url);
    applied = await applyMigrations(url, { log: () => {} });
    actual = await introspect(url);
  });

  test('ensureDatabase creates the database once', async () => {
    expect(created).toBe(true);
    await expect(ensureDatabase(url)).resolves.toBe(false);
  });

  test('every migration folder is applied, in name order', () => {
    expect(localMigrations.length).toBeGreaterThan(0);
    expect(applied).toEqual(localMigrations);
  });

  test('the set of tables matches the models', () => {
    const want = [...expected.keys()].sort();
    const got = [...actual.keys()].sort();
    expect({ missing: want.filter((t) => !got.includes(t)), notInSchema: got.filter((t) => !want.includes(t)) }).toEqual({ missing: [], notInSchema: [] });
  });

  test.each(schema.models.map((m) => [m.tableName, m.name] as const))('table %s matches model %s', (table) => {
    const got = actual.get(table);
    if (!got) throw new Error(`table ${table} does not exist`);
    expect(diffTable(table, expected.get(table)!, got)).toEqual([]);
  });

  test('applying the migrations again applies nothing', async () => {
    await expect(applyMigrations(url, { log: () => {} })).resolves.toEqual([]);
  });

  test('_prisma_migrations is Prisma’s table and records each migration like Prisma', async () => {
    await withClient(url, async (client) => {
      const { rows: columns } = await client.query(
        `SELECT column_name, data_type, character_maximum_length AS length, is_nullable, column_default
           FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
      expect(columns.map((c) => `${c.column_name} ${c.data_type}${c.length ? `(${c.length})` : ''}${c.is_nullable === 'NO' ? ' NOT NULL' : ''}${c.column_default ? ` DEFAULT ${c.column_default}` : ''}`)).toEqual([
        'id character varying(36) NOT NULL',
        'checksum character varying(64) NOT NULL',
        'finished_at timestamp with time zone',
        'migration_name character varying(255) NOT NULL',
        'logs text',
        'rolled_back_at timestamp with time zone',
        'started_at timestamp with time zone NOT NULL DEFAULT now()',
        'applied_steps_count integer NOT NULL DEFAULT 0',
      ]);

      const { rows } = await client.query('SELECT * FROM _prisma_migrations ORDER BY migration_name');
      expect(rows.map((r) => r.migration_name)).toEqual(localMigrations);
      for (const row of rows) {
        expect(row).toMatchObject({
          checksum: sha256(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql')),
          applied_steps_count: 1,
          logs: null,
          rolled_back_at: null,
        });
        expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(row.finished_at).toBeInstanceOf(Date);
        expect(row.finished_at.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      }
    });
  });
});

describe('applyMigrations under concurrency', () => {
  test('two processes starting together create the database and apply each migration once', async () => {
    const url = scratchUrl('race');
    const created = await Promise.all([ensureDatabase(url), ensureDatabase(url), ensureDatabase(url)]);
    expect(created.filter(Boolean)).toHaveLength(1);

    const results = await Promise.all([applyMigrations(url, { log: () => {} }), applyMigrations(url, { log: () => {} })]);
    expect(results.flat().sort()).toEqual(localMigrations);

    const { rows } = await withClient(url, (c) => c.query('SELECT migration_name, count(*)::int AS n FROM _prisma_migrations GROUP BY migration_name ORDER BY migration_name'));
    expect(rows).toEqual(localMigrations.map((name) => ({ migration_name: name, n: 1 })));
  });
});

describe('applyMigrations failure handling', () => {
  const url = scratchUrl('failures');
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbank-migrations-'));
    tempDirs.push(dir);
    fs.cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    await ensureDatabase(url);
  });

  test('a failing migration is rolled back entirely and stops the run', async () => {
    const broken = path.join(dir, '99990101000000_broken');
    fs.mkdirSync(broken);
    fs.writeFileSync(path.join(broken, 'migration.sql'), 'CREATE TABLE "half_done" ("id" INTEGER);\nSELECT 1 / 0;\n');

    await expect(applyMigrations(url, { migrationsDir: dir, log: () => {} })).rejects.toThrow(/99990101000000_broken.*division by zero/);
    await withClient(url, async (client) => {
      const { rows } = await client.query('SELECT migration_name FROM _prisma_migrations ORDER BY migration_name');
      expect(rows.map((r) => r.migration_name)).toEqual(localMigrations);
      const { rows: leftovers } = await client.query("SELECT to_regclass('public.half_done') AS t");
      expect(leftovers[0].t).toBeNull();
    });
    fs.rmSync(broken, { recursive: true });
  });

  test('an applied migration whose file changed is reported and not reapplied', async () => {
    const file = path.join(dir, localMigrations[0]!, 'migration.sql');
    fs.appendFileSync(file, '\n-- edited after it was applied\n');
    const logs: string[] = [];
    await expect(applyMigrations(url, { migrationsDir: dir, log: (m) => logs.push(m) })).resolves.toEqual([]);
    expect(logs.some((m) => m.includes(localMigrations[0]!) && /modified|checksum/.test(m))).toBe(true);
  });

  test('a migration recorded as failed stops the run (P3009)', async () => {
    await withClient(url, (c) =>
      c.query("INSERT INTO _prisma_migrations (id, checksum, migration_name, logs) VALUES (gen_random_uuid()::text, repeat('0', 64), '99990102000000_failed_elsewhere', 'boom')"),
    );
    await expect(applyMigrations(url, { migrationsDir: dir, log: () => {} })).rejects.toThrow(/P3009.*99990102000000_failed_elsewhere/);
  });
});
