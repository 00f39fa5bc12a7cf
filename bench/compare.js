'use strict';
// `npm run bench:compare -- REV`: this working tree against the build of another commit, on the
// same machine in the same minutes. See bench/README.md.
//
// Builds REV in a temporary git worktree (node_modules linked from this checkout), then runs
// bench/run.js (this checkout's harness, so both sides get the same scenarios) alternately on REV's
// server and on this tree's, A B A B …, each run on a freshly recreated database with one API
// process. Prints per scenario the paired ratios (this tree / REV, pair by pair, median and range)
// of requests/s and of server CPU per request, and each side's round trips and commits per request.
// Pairs cancel most of what other programs on a shared machine do to both sides alike.
//
// Options (a flag wins over its variable):
//   REV                      the commit to compare with (anything `git rev-parse` takes)
//   --rounds=2  BENCH_COMPARE_ROUNDS  pairs of runs (A B per round)
//   --only=…    BENCH_ONLY            scenarios (default: DEFAULT_ONLY below)
//   --keep                            keep REV's worktree and build (in the temp folder) for the next
//                                     comparison with the same commit, which then skips the build
// --duration, --warmup (defaults 5 and 2 here), --connections and --rows go to bench/run.js, and so
// does the environment (BENCH_DATABASE_URL, BENCH_QUEUE_PREFIX, …).

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');
/** The ceilings (so each run gives its own ratios to them) and the main read, create and update paths. */
const DEFAULT_ONLY = ['read', 'get', 'customer-get', 'list', 'write', 'post', 'customer-create', 'customer-update', 'account-update', 'pm-attach', 'pi-confirm', 'pi-confirm-2020'];
const DISTURBED_PCT = 25;

/** Command line and environment → what to compare and how. Throws on what it does not know. */
function parseArgs(argv, env = {}) {
  const options = {
    rev: null,
    rounds: Number(env.BENCH_COMPARE_ROUNDS || 2),
    only: env.BENCH_ONLY ? env.BENCH_ONLY.split(',') : DEFAULT_ONLY,
    keep: false,
    passThrough: [],
  };
  let duration = false;
  let warmup = false;
  for (const arg of argv) {
    const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
    if (!m) {
      if (options.rev !== null) throw new Error(`one commit to compare with, got "${options.rev}" and "${arg}"`);
      options.rev = arg;
    } else if (m[1] === 'rounds') options.rounds = Number(m[2]);
    else if (m[1] === 'only') options.only = (m[2] || '').split(',');
    else if (m[1] === 'keep') options.keep = true;
    else if (['duration', 'warmup', 'connections', 'rows'].includes(m[1]) && m[2] !== undefined) {
      if (m[1] === 'duration') duration = true;
      if (m[1] === 'warmup') warmup = true;
      options.passThrough.push(arg);
    } else throw new Error(`unknown option "${arg}" (known: REV, --rounds, --only, --keep, --duration, --warmup, --connections, --rows)`);
  }
  if (!options.rev) throw new Error('usage: npm run bench:compare -- REV [--rounds=2] [--only=get,post] [--keep]');
  if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new Error('--rounds must be an integer ≥ 1');
  options.only = options.only.map((s) => s.trim()).filter(Boolean);
  if (options.only.length === 0) throw new Error('--only names no scenario');
  if (!duration && !env.BENCH_DURATION) options.passThrough.push('--duration=5');
  if (!warmup && !env.BENCH_WARMUP) options.passThrough.push('--warmup=2');
  return options;
}

/** The runs in order: A (REV) then B (this tree), round after round. */
function schedule(rounds) {
  const runs = [];
  for (let round = 1; round <= rounds; round++) for (const side of ['A', 'B']) runs.push({ side, round });
  return runs;
}

function median(values) {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((x, y) => x - y);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const mean = (values) => {
  const ok = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  return ok.length === 0 ? null : ok.reduce((s, v) => s + v, 0) / ok.length;
};

/**
 * Per scenario, over the rounds' pairs of reports ({ a, b }: bench/run.js's JSON, either may be
 * null when its run failed): B/A of requests/s and of server CPU per request pair by pair, each
 * side's round trips and commits per request (mean over its runs) and ratio to its ceiling.
 */
function pairedRatios(pairs) {
  const names = [];
  for (const { a, b } of pairs) for (const report of [a, b]) for (const row of report?.scenarios ?? []) if (!names.includes(row.name)) names.push(row.name);
  return names.map((name) => {
    const rowsOf = (side) => pairs.map((p) => p[side]?.scenarios.find((r) => r.name === name) ?? null);
    const a = rowsOf('a');
    const b = rowsOf('b');
    const throughput = [];
    const cpu = [];
    a.forEach((ra, i) => {
      const rb = b[i];
      if (!ra || !rb) return;
      if (ra.requestsPerSec > 0 && rb.requestsPerSec > 0) throughput.push(rb.requestsPerSec / ra.requestsPerSec);
      if (ra.serverCpuUsPerRequest > 0 && rb.serverCpuUsPerRequest > 0) cpu.push(rb.serverCpuUsPerRequest / ra.serverCpuUsPerRequest);
    });
    const side = (rows) => {
      const present = rows.filter(Boolean);
      return {
        runs: present.length,
        requestsPerSec: median(present.map((r) => r.requestsPerSec)),
        cpuUsPerRequest: median(present.map((r) => r.serverCpuUsPerRequest)),
        roundTrips: mean(present.map((r) => r.postgres?.roundTrips)),
        commits: mean(present.map((r) => r.postgres?.commits)),
        ratioToCeiling: median(present.map((r) => r.ratioToCeiling)),
        clean: present.every((r) => r.non2xx === 0 && r.errors === 0 && !r.timeouts),
        disturbed: present.filter((r) => r.disturbed).length,
      };
    };
    const label = [...a, ...b].find(Boolean)?.label ?? name;
    const ceiling = [...a, ...b].find(Boolean)?.ceiling ?? null;
    const range = (v) => (v.length ? [Math.min(...v), Math.max(...v)] : null);
    return {
      name,
      label,
      ceiling,
      a: side(a),
      b: side(b),
      throughput: { ratios: throughput, median: median(throughput), range: range(throughput) },
      cpu: { ratios: cpu, median: median(cpu), range: range(cpu) },
    };
  });
}

const fixed = (v, digits = 2) => (v === null || v === undefined ? '' : v.toFixed(digits));
const pct = (v) => (v === null || v === undefined ? '' : `${(v * 100).toFixed(0)}%`);
const ratioCell = (r) => (r.median === null ? '' : r.ratios.length > 1 ? `${r.median.toFixed(2)} (${r.range[0].toFixed(2)}–${r.range[1].toFixed(2)})` : r.median.toFixed(2));

/** The comparison as a table (one line per scenario) and the scenarios whose counts changed. */
function formatComparison(rows, { revLabel = 'REV', treeLabel = 'tree' } = {}) {
  const columns = [
    { title: 'scenario', left: true, value: (r) => r.label },
    { title: 'req/s B/A', value: (r) => ratioCell(r.throughput) },
    { title: 'CPU/req B/A', value: (r) => ratioCell(r.cpu) },
    { title: 'µs/req A', value: (r) => (r.a.cpuUsPerRequest ?? '') },
    { title: 'µs/req B', value: (r) => (r.b.cpuUsPerRequest ?? '') },
    { title: 'RT A', value: (r) => fixed(r.a.roundTrips) },
    { title: 'RT B', value: (r) => fixed(r.b.roundTrips) },
    { title: 'commits A', value: (r) => fixed(r.a.commits) },
    { title: 'commits B', value: (r) => fixed(r.b.commits) },
    { title: 'ceiling A', value: (r) => (r.ceiling ? pct(r.a.ratioToCeiling) : '') },
    { title: 'ceiling B', value: (r) => (r.ceiling ? pct(r.b.ratioToCeiling) : '') },
  ];
  const cells = rows.map((r) => columns.map((c) => String(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((row) => row[i].length)));
  const line = (row) => row.map((cell, i) => (columns[i].left ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  const out = [
    `A = ${revLabel}, B = ${treeLabel}. B/A: median of the rounds' paired ratios (range in brackets); req/s above 1 and CPU/req below 1 favour B.`,
    'µs/req: median server CPU per request; RT, commits: PostgreSQL round trips and writing commits per request; ceiling: req/s as a share of the scenario\'s ceiling in the same run.',
    '',
    line(columns.map((c) => c.title)),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map(line),
  ];
  const changed = rows.filter((r) => r.a.roundTrips !== null && r.b.roundTrips !== null && (Math.abs(r.a.roundTrips - r.b.roundTrips) > 0.05 || Math.abs(r.a.commits - r.b.commits) > 0.05));
  if (changed.length) out.push('', `Round trips or commits changed: ${changed.map((r) => `${r.name} (RT ${fixed(r.a.roundTrips)} → ${fixed(r.b.roundTrips)}, commits ${fixed(r.a.commits)} → ${fixed(r.b.commits)})`).join('; ')}.`);
  const unclean = rows.filter((r) => !r.a.clean || !r.b.clean || r.a.runs < r.b.runs || r.b.runs < r.a.runs);
  if (unclean.length) out.push('', `NOT CLEAN or missing on a side (non-2xx, errors or a failed run): ${unclean.map((r) => r.name).join(', ')}.`);
  const disturbed = rows.filter((r) => r.a.disturbed + r.b.disturbed > 0);
  if (disturbed.length) out.push('', `Disturbed runs (other programs above ${DISTURBED_PCT}% of a core): ${disturbed.map((r) => `${r.name} ×${r.a.disturbed + r.b.disturbed}`).join(', ')}; the paired ratios hold better than the absolute figures.`);
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------

function git(args, opts = {}) {
  const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${(r.stderr || '').trim()}`);
  return (r.stdout || '').trim();
}

/** REV checked out and built in a temporary worktree (reused when an earlier --keep left it built). */
function buildRev(sha, keep) {
  const dir = path.join(os.tmpdir(), `sandbank-compare-${sha.slice(0, 12)}`);
  const stamp = path.join(dir, 'dist', '.build-stamp');
  if (fs.existsSync(stamp)) {
    console.log(`  REV's build found in ${dir} (kept by an earlier --keep)`);
    return dir;
  }
  if (fs.existsSync(dir)) removeWorktree(dir);
  console.log(`  checking out ${sha.slice(0, 12)} in ${dir} and building it (node_modules linked from this checkout)…`);
  git(['worktree', 'add', '--detach', '--force', dir, sha], { stdio: ['ignore', 'ignore', 'pipe'] });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const r = spawnSync(process.execPath, [path.join(dir, 'scripts', 'build.js')], { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0) {
    if (!keep) removeWorktree(dir);
    throw new Error(`${sha.slice(0, 12)} does not build (exit ${r.status})`);
  }
  return dir;
}

function removeWorktree(dir) {
  spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
  fs.rmSync(dir, { recursive: true, force: true });
  spawnSync('git', ['worktree', 'prune'], { cwd: ROOT, stdio: 'ignore' });
}

let current = null;
let stopping = false;

function runOnce(options, serverRoot, out) {
  return new Promise((resolve, reject) => {
    const args = [path.join(__dirname, 'run.js'), `--only=${options.only.join(',')}`, `--out=${out}`, ...options.passThrough];
    const env = { ...process.env };
    if (serverRoot) env.BENCH_SERVER_ROOT = serverRoot;
    else delete env.BENCH_SERVER_ROOT;
    current = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit', env });
    current.on('error', reject);
    current.on('exit', (code, signal) => {
      current = null;
      resolve(signal ? 128 : code);
    });
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2), process.env);
  const sha = git(['rev-parse', '--verify', `${options.rev}^{commit}`]);
  const subject = git(['log', '-1', '--format=%h %s', sha]);
  const head = git(['log', '-1', '--format=%h', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  const treeLabel = `this tree (${head}${dirty ? ' + changes' : ''})`;
  console.log(`bench:compare — A: ${subject.slice(0, 100)}; B: ${treeLabel}; ${options.rounds} round(s) of A then B`);
  const dir = buildRev(sha, options.keep);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      stopping = true;
      // bench/run.js stops its own children; pass the signal on and clean up once it has.
      if (current) current.kill(signal);
      else {
        if (!options.keep) removeWorktree(dir);
        process.exit(130);
      }
    });
  }
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const pairs = Array.from({ length: options.rounds }, () => ({ a: null, b: null }));
  const failures = [];
  try {
    for (const { side, round } of schedule(options.rounds)) {
      if (stopping) break;
      const out = path.join(RESULTS_DIR, `compare-${side}${round}.json`);
      fs.rmSync(out, { force: true });
      console.log(`\n=== round ${round}, ${side === 'A' ? `A (${sha.slice(0, 7)})` : `B (${treeLabel})`}\n`);
      const code = await runOnce(options, side === 'A' ? dir : null, out);
      if (code !== 0) failures.push(`${side}${round} exited ${code}`);
      if (fs.existsSync(out)) pairs[round - 1][side === 'A' ? 'a' : 'b'] = JSON.parse(fs.readFileSync(out, 'utf8'));
    }
  } finally {
    if (!options.keep) removeWorktree(dir);
  }
  if (stopping) return 130;
  const rows = pairedRatios(pairs);
  console.log(`\n=== Compared (${new Date().toISOString()}, machine busy before each run: ${pairs.flatMap((p) => [p.a, p.b]).map((r) => (r ? `${r.settings.machineBusyBeforePct}%` : '–')).join(' ')} of a core)\n`);
  console.log(formatComparison(rows, { revLabel: subject.slice(0, 60), treeLabel }));
  if (failures.length) console.log(`\nRuns that did not exit cleanly: ${failures.join(', ')} (see their output above).`);
  const report = { date: new Date().toISOString(), rev: sha, tree: { head, dirty }, rounds: options.rounds, only: options.only, passThrough: options.passThrough, scenarios: rows, failures };
  fs.writeFileSync(path.join(RESULTS_DIR, 'compare.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nWrote ${path.relative(process.cwd(), path.join(RESULTS_DIR, 'compare.json'))}`);
  return failures.length ? 1 : 0;
}

module.exports = { DEFAULT_ONLY, parseArgs, schedule, median, pairedRatios, formatComparison };

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`bench:compare failed: ${err && err.stack ? err.stack : err}`);
      process.exit(1);
    },
  );
}
