'use strict';
// `npm run bench:scale`: the read and write scenarios of bench/run.js at two database sizes, one
// run each (--rows=1000, then --rows=1000000: every hot table filled up to that many rows), then
// both side by side. See bench/README.md.
//
// Options (a flag wins over its variable):
//   --sizes=1000,1000000   BENCH_SCALE_SIZES   the row counts, in the order they run
//   --only=…               BENCH_ONLY          scenarios (default: the database ceilings and every
//                                              single-process Sandbank scenario)
// Every other flag (--duration, --warmup, --connections, --source) goes to bench/run.js as is, and
// so does the environment (BENCH_DATABASE_URL, BENCH_QUEUE_PREFIX, …).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const RESULTS_DIR = path.join(__dirname, 'results');
const DEFAULT_ONLY = [
  'read',
  'get',
  'get-account',
  'list',
  'list-cursor',
  'events-type',
  'events-type-empty',
  'customer-get',
  'customer-email',
  'customer-search',
  'price-list',
  'invoice-list',
  'invoice-search',
  'sub-list',
  'sub-search',
  'write',
  'post',
  'account-create',
  'account-update',
  'customer-create',
  'pm-attach',
];

let sizes = (process.env.BENCH_SCALE_SIZES || '1000,1000000').split(',');
let only = process.env.BENCH_ONLY || DEFAULT_ONLY.join(',');
const passThrough = [];
for (const arg of process.argv.slice(2)) {
  const m = /^--(sizes|only|rows|out)=(.*)$/.exec(arg);
  if (m && m[1] === 'sizes') sizes = m[2].split(',');
  else if (m && m[1] === 'only') only = m[2];
  else if (m) throw new Error(`${arg}: bench/scale.js sets --${m[1]} itself`);
  else passThrough.push(arg);
}
sizes = sizes.map((s) => s.trim()).filter(Boolean);
if (sizes.length === 0 || sizes.some((s) => !/^\d+$/.test(s))) throw new Error(`--sizes must be row counts, e.g. 1000,1000000`);

let current = null;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  // bench/run.js stops its own children; pass the signal on and wait for it.
  process.on(signal, () => (current ? current.kill(signal) : process.exit(130)));
}

function runAt(rows, out) {
  return new Promise((resolve, reject) => {
    const args = [path.join(__dirname, 'run.js'), `--rows=${rows}`, `--only=${only}`, `--out=${out}`, ...passThrough];
    console.log(`\n=== --rows=${rows}: node bench/run.js ${args.slice(1).join(' ')}\n`);
    current = spawn(process.execPath, args, { stdio: 'inherit' });
    current.on('error', reject);
    current.on('exit', (code, signal) => {
      current = null;
      resolve(signal ? 128 : code);
    });
  });
}

const human = (n) => (n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n));

async function main() {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const reports = [];
  let failed = 0;
  for (const rows of sizes) {
    const out = path.join(RESULTS_DIR, `scale-${rows}.json`);
    fs.rmSync(out, { force: true });
    const code = await runAt(rows, out);
    if (code !== 0) failed = code;
    if (!fs.existsSync(out)) throw new Error(`bench/run.js --rows=${rows} wrote no report (exit ${code})`);
    reports.push({ rows: Number(rows), report: JSON.parse(fs.readFileSync(out, 'utf8')) });
  }

  const names = reports[0].report.scenarios.map((r) => r.name);
  const rowOf = (i, name) => reports[i].report.scenarios.find((r) => r.name === name);
  const columns = [{ title: 'scenario', left: true, value: (name) => rowOf(0, name).label }];
  const per = (title, value) => reports.forEach((r, i) => columns.push({ title: `${title} ${human(r.rows)}`, value: (name) => (rowOf(i, name) ? value(rowOf(i, name)) : '') }));
  per('req/s', (r) => r.requestsPerSec);
  if (reports.length > 1) {
    const last = reports.length - 1;
    columns.push({
      title: `${human(reports[last].rows)}/${human(reports[0].rows)}`,
      value: (name) => (rowOf(last, name) && rowOf(0, name).requestsPerSec > 0 ? `${((rowOf(last, name).requestsPerSec / rowOf(0, name).requestsPerSec) * 100).toFixed(0)}%` : ''),
    });
  }
  per('p99', (r) => r.latencyMs.p99);
  per('µs/req', (r) => r.serverCpuUsPerRequest ?? '');
  per('RT/req', (r) => (r.postgres ? r.postgres.roundTrips.toFixed(2) : ''));
  per('other CPU', (r) => (r.cpuPercent.other === null ? '' : `${r.cpuPercent.other}%`));
  const cells = names.map((name) => columns.map((c) => String(c.value(name))));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((row) => row[i].length)));
  const line = (row) => row.map((cell, i) => (columns[i].left ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');

  console.log(`\n=== Side by side (req/s: requests per second; p99 in ms; µs/req: server CPU per request; RT/req: PostgreSQL round trips)\n`);
  for (const { rows, report } of reports) {
    const filled = report.filled ? `filled in ${report.filled.seconds.toFixed(0)} s` : 'nothing to fill';
    console.log(`  --rows=${rows}: ${report.date}, ${filled}, machine busy before the run ${report.settings.machineBusyBeforePct}% of a core`);
  }
  console.log('');
  console.log(line(columns.map((c) => c.title)));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells) console.log(line(row));
  const disturbed = reports.flatMap((r) => r.report.disturbed.map((name) => `${name} at ${human(r.rows)}`));
  if (disturbed.length > 0) console.log(`\nDisturbed (other CPU above 25% of a core): ${disturbed.join(', ')}.`);
  if (failed !== 0) console.log('\nA run was not clean: see its output above.');
  return failed;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`bench:scale failed: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  },
);
