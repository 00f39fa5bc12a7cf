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
const WRITES = ['post', 'post-spread', 'account-create', 'account-update', 'customer-create', 'customer-update', 'pm-attach', 'pi-confirm', 'pi-confirm-2020', 'refund', 'pi-update', 'si-update', 'pm-update'];
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
  'pi-confirm-2020': 'customer-create',
  'customer-update': 'customer-create',
  refund: 'customer-create',
  'pi-update': 'customer-create',
  'si-update': 'customer-create',
  'pm-update': 'customer-create',
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
    // Answered requests, not req/s: a slow page on a loaded machine rounds to 0 req/s in a 1 s run.
    expect({ name: row.name, answered: row.totalRequests > 0 }).toEqual({ name: row.name, answered: true });
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
    expect({ name, ratio: typeof row.ratioToCeiling }).toEqual({ name, ratio: 'number' });
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

// bench/compare.js's logic (its runs are bench/run.js's, tested above): what it runs in which
// order, and how it pairs two builds' reports. Made-up reports, so nothing here is a timing.
describe('bench:compare', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const compare = require('../../bench/compare.js') as {
    DEFAULT_ONLY: string[];
    parseArgs(argv: string[], env?: Record<string, string>): { rev: string; rounds: number; only: string[]; keep: boolean; passThrough: string[] };
    schedule(rounds: number): { side: string; round: number }[];
    median(values: number[]): number | null;
    pairedRatios(pairs: { a: unknown; b: unknown }[]): any[];
    formatComparison(rows: any[], labels?: { revLabel?: string; treeLabel?: string }): string;
  };
  const scenario = (name: string, requestsPerSec: number, cpu: number, roundTrips: number, commits: number, extra: Record<string, unknown> = {}) => ({
    name,
    label: `label of ${name}`,
    ceiling: name === 'write' ? null : 'write',
    requestsPerSec,
    serverCpuUsPerRequest: cpu,
    ratioToCeiling: name === 'write' ? null : 0.5,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    disturbed: false,
    postgres: { requests: 100, roundTrips, commits },
    ...extra,
  });
  const report = (...scenarios: unknown[]) => ({ scenarios, settings: { machineBusyBeforePct: 0 } });

  test('its arguments: one commit, rounds, scenarios, and shorter runs unless told', () => {
    expect(compare.parseArgs(['a6f90bc'])).toEqual({ rev: 'a6f90bc', rounds: 2, only: compare.DEFAULT_ONLY, keep: false, passThrough: ['--duration=5', '--warmup=2'] });
    expect(compare.parseArgs(['HEAD~1', '--rounds=3', '--only=get,post', '--duration=10', '--keep'])).toEqual({
      rev: 'HEAD~1',
      rounds: 3,
      only: ['get', 'post'],
      keep: true,
      passThrough: ['--duration=10', '--warmup=2'],
    });
    expect(compare.parseArgs(['x'], { BENCH_DURATION: '8', BENCH_ONLY: 'get' }).passThrough).toEqual(['--warmup=2']);
    expect(compare.parseArgs(['x'], { BENCH_ONLY: 'get' }).only).toEqual(['get']);
    expect(() => compare.parseArgs([])).toThrow(/usage/);
    expect(() => compare.parseArgs(['a', 'b'])).toThrow(/one commit/);
    expect(() => compare.parseArgs(['a', '--rounds=0'])).toThrow(/rounds/);
    expect(() => compare.parseArgs(['a', '--source'])).toThrow(/unknown option/);
    // Every default scenario is one bench/run.js has.
    for (const name of compare.DEFAULT_ONLY) expect([...READS, ...WRITES, 'read', 'write']).toContain(name);
  });

  test('it alternates the two builds, round after round (A B A B)', () => {
    expect(compare.schedule(2)).toEqual([
      { side: 'A', round: 1 },
      { side: 'B', round: 1 },
      { side: 'A', round: 2 },
      { side: 'B', round: 2 },
    ]);
    expect(compare.median([3, 1, 2])).toBe(2);
    expect(compare.median([4, 1, 2, 3])).toBe(2.5);
    expect(compare.median([])).toBeNull();
  });

  test('it pairs each round\'s runs: ratios of throughput and CPU per request, round trips and commits of each side', () => {
    const pairs = [
      { a: report(scenario('write', 1000, 300, 1, 1), scenario('post', 100, 1000, 5, 2)), b: report(scenario('write', 900, 330, 1, 1), scenario('post', 150, 800, 1, 1)) },
      { a: report(scenario('write', 1000, 300, 1, 1), scenario('post', 200, 1000, 5, 2)), b: report(scenario('write', 1100, 300, 1, 1), scenario('post', 200, 500, 1, 1)) },
      // A round whose B run failed pairs nothing.
      { a: report(scenario('write', 1, 1, 1, 1), scenario('post', 1, 1, 5, 2)), b: null },
    ];
    const rows = compare.pairedRatios(pairs);
    expect(rows.map((r) => r.name)).toEqual(['write', 'post']);
    const post = rows[1];
    expect(post.throughput.ratios).toEqual([1.5, 1]);
    expect(post.throughput.median).toBeCloseTo(1.25);
    expect(post.throughput.range).toEqual([1, 1.5]);
    expect(post.cpu.ratios).toEqual([0.8, 0.5]);
    expect(post.cpu.median).toBeCloseTo(0.65);
    expect(post.a).toMatchObject({ runs: 3, roundTrips: 5, commits: 2, clean: true });
    expect(post.b).toMatchObject({ runs: 2, roundTrips: 1, commits: 1, clean: true });
    const text = compare.formatComparison(rows, { revLabel: 'old', treeLabel: 'new' });
    expect(text).toContain('A = old, B = new');
    expect(text).toMatch(/label of post\s+1\.25 \(1\.00–1\.50\)\s+0\.65 \(0\.50–0\.80\)/);
    expect(text).toContain('Round trips or commits changed: post (RT 5.00 → 1.00, commits 2.00 → 1.00)');
    // A side with fewer runs (the failed one) is called out.
    expect(text).toMatch(/NOT CLEAN or missing on a side[^\n]*post/);
  });

  test('it calls out unclean and disturbed runs', () => {
    const rows = compare.pairedRatios([{ a: report(scenario('get', 100, 500, 1, 0, { non2xx: 3 })), b: report(scenario('get', 100, 500, 1, 0, { disturbed: true })) }]);
    expect(rows[0].a.clean).toBe(false);
    const text = compare.formatComparison(rows);
    expect(text).toMatch(/NOT CLEAN[^\n]*get/);
    expect(text).toMatch(/Disturbed runs[^\n]*get ×1/);
    expect(text).not.toContain('Round trips or commits changed');
  });
});
