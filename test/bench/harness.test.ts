import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { TEST_DATABASE_NAME } from '../helpers/services';

// `npm run bench` for a second per scenario: proves the harness starts the server (from the
// sources, so no build is needed), a second one as a 2-process cluster, every ceiling and
// stripe-stateful-mock, prepares its data, fills the hot tables (--rows, small here), loads every
// scenario cleanly and counts PostgreSQL's work. It asserts counts, never timings: this machine is shared.

const ROOT = path.resolve(__dirname, '..', '..');
// A database and queue prefix of its own; "bench" in both lets the harness drop and clear them.
const DATABASE = `${TEST_DATABASE_NAME}_benchsmoke`;
const serverUrl = process.env.SANDBANK_TEST_SERVER_URL ?? process.env.DATABASE_URL!;
const benchDatabaseUrl = (): string => {
  const url = new URL(serverUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
};

const READS = ['get', 'get-account', 'list', 'list-cursor', 'events-type', 'events-type-empty', 'customer-get', 'customer-email', 'customer-search', 'price-list', 'pi-list', 'pi-search', 'charge-search', 'invoice-list', 'invoice-search', 'invoice-customer', 'sub-list', 'sub-search', 'sub-customer', 'sub-get', 'sub-get-2020', 'console-list', 'console-object', 'console-home'];
const ROWS = 2000;
const WRITES = ['post', 'post-spread', 'account-create', 'account-update', 'customer-create', 'pm-attach', 'pi-confirm', 'refund'];
/** Scenarios measured against another scenario, not a ceiling. */
const MEASURED_AGAINST: Record<string, string> = {
  'sub-get-2020': 'sub-get',
  'pi-search': 'pi-list',
  'charge-search': 'pi-list',
  'invoice-search': 'invoice-list',
  'sub-search': 'sub-list',
  'invoice-customer': 'invoice-list',
  'sub-customer': 'sub-list',
  'console-list': 'customer-get',
  'console-object': 'customer-get',
  'console-home': 'customer-get',
  'pi-confirm': 'customer-create',
  refund: 'customer-create',
};

interface Row {
  name: string;
  ceiling: string | null;
  requestsPerSec: number;
  totalRequests: number;
  non2xx: number;
  errors: number;
  ratioToCeiling: number | null;
  postgres: { requests: number; roundTrips: number; commits: number } | null;
}

function runBench(out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/run.js', '--source', '--duration=1', '--warmup=0', '--connections=4', `--rows=${ROWS}`, `--out=${out}`], {
      cwd: ROOT,
      env: { ...process.env, BENCH_DATABASE_URL: benchDatabaseUrl(), BENCH_QUEUE_PREFIX: `${TEST_DATABASE_NAME}benchsmoke` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sandbank-bench-smoke-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`).finally(() => client.end());
});

test('the benchmark produces a clean row for every scenario, with PostgreSQL round trips and commits counted', async () => {
  const out = path.join(dir, 'report.json');
  const { code, output } = await runBench(out);
  if (code !== 0) throw new Error(`bench/run.js exited with ${code}:\n${output}`);
  const report = JSON.parse(readFileSync(out, 'utf8')) as {
    scenarios: Row[];
    settings: { poolSize: number; rows: number };
    filled: { counts: Record<string, number> };
  };
  const rows = Object.fromEntries(report.scenarios.map((r) => [r.name, r]));

  expect(Object.keys(rows).sort()).toEqual([...READS, ...WRITES, 'read', 'write', 'express', 'node', 'peer-mock', 'customer-get-2proc'].sort());
  expect(report.settings.poolSize).toBeGreaterThan(0);
  // Every hot table was filled up to --rows before the load.
  expect(report.settings.rows).toBe(ROWS);
  expect(Object.keys(report.filled.counts).length).toBeGreaterThanOrEqual(8);
  for (const [table, count] of Object.entries(report.filled.counts)) expect({ table, count }).toEqual({ table, count: ROWS });
  for (const row of report.scenarios) {
    expect({ name: row.name, non2xx: row.non2xx, errors: row.errors }).toEqual({ name: row.name, non2xx: 0, errors: 0 });
    expect(row.requestsPerSec).toBeGreaterThan(0);
  }
  // The ceilings make exactly one round trip each, and the write ceiling one commit.
  expect(rows.read.postgres!.roundTrips).toBeCloseTo(1, 5);
  expect(rows.read.postgres!.commits).toBe(0);
  expect(rows.write.postgres!.roundTrips).toBeCloseTo(1, 5);
  expect(rows.write.postgres!.commits).toBeCloseTo(1, 5);
  for (const name of [...READS, ...WRITES]) {
    const row = rows[name];
    // The old-version GET is measured against the same GET at the newest version, searches against a list, payments against a create.
    const ceiling = MEASURED_AGAINST[name] ?? (READS.includes(name) ? 'read' : 'write');
    expect({ name, ceiling: row.ceiling }).toEqual({ name, ceiling });
    expect(row.ratioToCeiling).toBeGreaterThan(0);
    expect(row.postgres!.requests).toBeGreaterThan(0);
    expect(row.postgres!.roundTrips).toBeGreaterThan(0);
    if (WRITES.includes(name)) expect(row.postgres!.commits).toBeGreaterThanOrEqual(1);
  }
  // The cluster's API processes are counted each on its own port, and summed.
  expect(rows['customer-get-2proc'].ceiling).toBe('peer-mock');
  // (every answered request was counted: with one process's counters, about half would be)
  expect(rows['customer-get-2proc'].postgres!.requests).toBeGreaterThanOrEqual(rows['customer-get-2proc'].totalRequests);
  expect(rows['customer-get-2proc'].postgres!.roundTrips).toBeGreaterThan(0);
  // The bare ceilings and the in-memory peer don't talk to PostgreSQL: nothing is counted there.
  expect(rows.express.postgres).toBeNull();
  expect(rows['peer-mock'].postgres).toBeNull();
}, 240_000);
