import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { TEST_DATABASE_NAME } from '../helpers/services';

// `npm run bench:clock` on a handful of subscriptions: proves the script starts the API and the
// worker (from the sources), prepares the clock's customers and subscriptions, and that the
// worker renews and pays each one when the clock advances a month. Counts only, never timings.

const ROOT = path.resolve(__dirname, '..', '..');
const DATABASE = `${TEST_DATABASE_NAME}_benchclock`;
const SUBSCRIPTIONS = 4;
const serverUrl = process.env.SANDBANK_TEST_SERVER_URL ?? process.env.DATABASE_URL!;
const benchDatabaseUrl = (): string => {
  const url = new URL(serverUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sandbank-bench-clock-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`).finally(() => client.end());
});

test('the clock benchmark renews and pays every subscription of the advanced clock, and counts its events and round trips', async () => {
  const out = path.join(dir, 'clock.json');
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/clock.js', '--source', `--subscriptions=${SUBSCRIPTIONS}`, '--timeout=120', `--out=${out}`], {
      cwd: ROOT,
      env: { ...process.env, BENCH_DATABASE_URL: benchDatabaseUrl(), BENCH_QUEUE_PREFIX: `${TEST_DATABASE_NAME}benchclock` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.stderr.on('data', (chunk) => (text += chunk));
    child.on('error', reject);
    child.on('exit', (exit) => resolve({ code: exit, output: text }));
  });
  if (code !== 0) throw new Error(`bench/clock.js exited with ${code}:\n${output}`);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  expect(report.renewalInvoicesPaid).toBe(SUBSCRIPTIONS);
  expect(report.seconds).toBeGreaterThan(0);
  expect(report.readySeconds).toBeLessThanOrEqual(report.seconds);
  // Each renewal's invoice was created, finalized and paid, and its subscription moved on.
  for (const type of ['invoice.created', 'invoice.finalized', 'invoice.paid', 'customer.subscription.updated']) {
    expect({ type, n: report.eventsByType[type] }).toEqual({ type, n: SUBSCRIPTIONS });
  }
  expect(report.eventsByType['test_helpers.test_clock.ready']).toBe(1);
  expect(report.worker.roundTripsPerRenewal).toBeGreaterThan(0);
  expect(report.worker.commitsPerRenewal).toBeGreaterThanOrEqual(1);
}, 240_000);
