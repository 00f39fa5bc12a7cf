'use strict';
// Sandbank benchmark: `npm run bench` (builds, then runs this file). See bench/README.md.
//
// Starts three child processes (the real API from dist/, a bare Express app and a bare node:http
// server), loads each with autocannon from this process, prints requests/s, p50/p99 latency,
// non-2xx and errors per scenario plus the ratios to the ceilings, writes bench/results/latest.json,
// and stops every child it started, on success, failure or Ctrl-C.
//
// Environment (all optional):
//   BENCH_DURATION=10          seconds of measured load per scenario
//   BENCH_WARMUP=3             seconds of unmeasured load before each scenario (0 to skip)
//   BENCH_CONNECTIONS=32       concurrent keep-alive connections
//   BENCH_ONLY=get,post        run only these scenarios (get, post, list, express, node)
//   BENCH_DATABASE_URL=…       default postgresql://postgres@127.0.0.1:5432/sandbank_bench; a database
//                              whose name contains "bench" is dropped and recreated at each run
//   BENCH_KEEP_DB=1            keep the bench database instead of recreating it
//   BENCH_MAX_WEBHOOK_ENDPOINTS=10000000
//   BENCH_SERVER_NODE_ARGS=…   extra node flags for the Sandbank server, e.g.
//                              "--cpu-prof --cpu-prof-dir=bench/results/profiles"
//   BENCH_SERVER_LOG_LEVEL=warn the server's LOG_LEVEL; below warn (e.g. info, the service's default, one
//                              line per request) its stdout goes to bench/results/server.log
//   REDIS_URL, DATABASE_POOL_SIZE are passed through to the server when set.

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const autocannon = require('autocannon');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');
const HOST = '127.0.0.1';
// Where the endpoints the benchmark creates point: this machine, port 0, where nothing can listen,
// so nothing would arrive anywhere even if a worker ran against the bench database.
const CLOSED_ORIGIN = `http://${HOST}:0`;
/** User CPU of programs other than the server, PostgreSQL and autocannon above which a scenario is flagged. */
const DISTURBED_PCT = 25;

// ---------------------------------------------------------------------------------------------
// Settings

function intEnv(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return Number(raw);
}

const settings = {
  duration: intEnv('BENCH_DURATION', 10, 1),
  warmup: intEnv('BENCH_WARMUP', 3, 0),
  connections: intEnv('BENCH_CONNECTIONS', 32, 1),
  maxWebhookEndpoints: intEnv('BENCH_MAX_WEBHOOK_ENDPOINTS', 10_000_000, 1),
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/sandbank_bench',
  keepDb: process.env.BENCH_KEEP_DB === '1',
  only: (process.env.BENCH_ONLY || '').split(',').map((s) => s.trim()).filter(Boolean),
  serverLogLevel: process.env.BENCH_SERVER_LOG_LEVEL || 'warn',
  serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS || '').split(/\s+/).filter(Boolean),
};

const ALL_SCENARIOS = ['get', 'post', 'list', 'express', 'node'];
for (const name of settings.only) {
  if (!ALL_SCENARIOS.includes(name)) throw new Error(`BENCH_ONLY: unknown scenario "${name}" (known: ${ALL_SCENARIOS.join(', ')})`);
}
const wanted = (name) => settings.only.length === 0 || settings.only.includes(name);

// ---------------------------------------------------------------------------------------------
// Child processes: every one is tracked here and stopped on the way out, whatever the way out is.

const children = new Set();

function track(name, child) {
  const entry = { name, child, exited: false, code: null, signal: null, tail: [], lines: 0 };
  const collect = (chunk) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      entry.lines++;
      entry.tail.push(line);
      if (entry.tail.length > 40) entry.tail.shift();
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  entry.exitedPromise = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      entry.exited = true;
      entry.code = code;
      entry.signal = signal;
      children.delete(entry);
      resolve();
    });
  });
  child.on('error', (err) => {
    entry.tail.push(`spawn error: ${err.message}`);
  });
  children.add(entry);
  return entry;
}

async function stopChild(entry, graceMs = 8000) {
  if (entry.exited) return;
  try {
    entry.child.kill('SIGTERM');
  } catch {
    /* already gone */
  }
  const timer = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
  await Promise.race([entry.exitedPromise, timer]);
  if (!entry.exited) {
    process.stderr.write(`bench: ${entry.name} did not stop within ${graceMs} ms, killing it\n`);
    try {
      entry.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
    await Promise.race([entry.exitedPromise, new Promise((r) => setTimeout(r, 2000).unref())]);
  }
}

async function stopAll() {
  await Promise.all([...children].map((e) => stopChild(e)));
}

// Last resort if we exit without having awaited stopAll (e.g. an uncaught exception).
process.on('exit', () => {
  for (const e of children) {
    try {
      e.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

let currentLoad = null;
/** The Sandbank child, to report what it logs while shutting down. */
let sandbankEntry = null;
let sandbankLinesAtReport = 0;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (interrupted) process.exit(130); // second Ctrl-C: the exit hook above still kills the children
    interrupted = true;
    process.stderr.write(`\nbench: ${signal} received, stopping the load and every child process…\n`);
    if (currentLoad) currentLoad.stop();
    stopAll().finally(() => process.exit(130));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function describeExit(entry) {
  return `${entry.name} exited (code ${entry.code}, signal ${entry.signal}); last output:\n  ${entry.tail.join('\n  ') || '(none)'}`;
}

/** Starts bench/ceiling.js <kind>; resolves with its port once it listens. */
function startCeiling(kind) {
  const child = spawn(process.execPath, [path.join(__dirname, 'ceiling.js'), kind], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const entry = track(`bare ${kind}`, child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bare ${kind} did not start within 15 s`)), 15_000);
    child.once('message', (msg) => {
      clearTimeout(timer);
      resolve({ entry, port: msg.port });
    });
    entry.exitedPromise.then(() => {
      clearTimeout(timer);
      reject(new Error(describeExit(entry)));
    });
  });
}

/** Starts the real API (`node dist/src/server.js`) on a free port, against the bench database. */
async function startSandbank() {
  const port = await freePort();
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    HOST,
    // Production refuses to start without a key for secrets at rest; the bench brings one (and a
    // data directory of its own, for keys an older bench database kept).
    SECRETS_ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64'),
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'sandbank-bench-')),
    PORT: String(port),
    PUBLIC_URL: `http://${HOST}:${port}`,
    DATABASE_URL: settings.databaseUrl,
    LOG_LEVEL: settings.serverLogLevel,
    AUTH_MODE: 'open',
    QUEUE_PREFIX: 'sandbankbench',
    // The POST scenario creates one endpoint per request; the public limit (16) would turn it into
    // an error benchmark after 16 requests.
    MAX_WEBHOOK_ENDPOINTS: String(settings.maxWebhookEndpoints),
    SHUTDOWN_TIMEOUT_MS: '3000',
    // Deliveries (none are expected here) may only reach this machine.
    WEBHOOK_LOOPBACK_ONLY: 'true',
  };
  const args = [...settings.serverNodeArgs, '-r', path.join(__dirname, 'watchdog.js'), path.join(ROOT, 'dist', 'src', 'server.js')];
  // Below warn the server logs every request: send its stdout to a file (as a deployment would),
  // not through this process, which would then spend the load generator's CPU reading it.
  let stdout = 'pipe';
  if (!['warn', 'error', 'fatal', 'silent'].includes(settings.serverLogLevel)) {
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    stdout = fs.openSync(path.join(RESULTS_DIR, 'server.log'), 'w');
  }
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', stdout, 'pipe', 'ipc'], env });
  if (typeof stdout === 'number') fs.closeSync(stdout);
  const entry = track('sandbank', child);
  sandbankEntry = entry;
  return { entry, port };
}

async function waitUntilAnswers(entry, url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (entry.exited) throw new Error(describeExit(entry));
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err.cause?.code || err.message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${entry.name} did not answer ${url} within ${timeoutMs / 1000} s (last: ${last}); last output:\n  ${entry.tail.join('\n  ')}`);
}

// ---------------------------------------------------------------------------------------------
// The bench database: recreated each run (only when its name says it is a bench database), so
// every run starts from the same empty state. The server creates and migrates it at start.

async function resetBenchDatabase() {
  const url = new URL(settings.databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (settings.keepDb) return `kept database ${name} (BENCH_KEEP_DB=1)`;
  if (!/bench/i.test(name)) return `database ${name} kept: only databases whose name contains "bench" are recreated`;
  const { Client } = require('pg');
  const admin = new URL(settings.databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  return `recreated database ${name}`;
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc): how busy the server, PostgreSQL and this load generator were.

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* keep 100 */
}

/** { user, total } CPU ticks of one process (utime, utime + stime). */
function procTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    return { user, total: user + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** Ticks of every postgres process, by pid (backends may come and go during an interval). */
function postgresTicks() {
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const byPid = new Map();
  for (const pid of pids) {
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const t = procTicks(pid);
    if (t !== null) byPid.set(pid, t);
  }
  return byPid;
}

/** { user, busy } ticks of the whole machine (all cores), from /proc/stat; idle and iowait are not busy. */
function machineTicks() {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = cpu;
    return { user: user + nice, busy: user + nice + system + irq + softirq + steal };
  } catch {
    return null;
  }
}

function cpuSnapshot(serverPid) {
  return {
    at: process.hrtime.bigint(),
    server: serverPid ? procTicks(serverPid) : null,
    postgres: postgresTicks(),
    machine: machineTicks(),
    self: process.cpuUsage(),
  };
}

/**
 * CPU used during the interval, in % of one core: the loaded server, PostgreSQL (all its processes),
 * this load generator, and "other": user-space CPU of every other program on the machine (kernel
 * network time is left out of it). A high "other" means something else competed for the cores.
 */
function cpuPercent(before, after) {
  const seconds = Number(after.at - before.at) / 1e9;
  const pct = (ticks) => Math.round((ticks / clockTicks / seconds) * 100);
  const self = process.cpuUsage(before.self);
  const loadgen = Math.round(((self.user + self.system) / 1e6 / seconds) * 100);
  const loadgenUser = self.user / 1e6 / seconds * 100;
  const server = before.server && after.server ? pct(after.server.total - before.server.total) : null;
  const serverUser = before.server && after.server ? pct(after.server.user - before.server.user) : 0;
  let postgres = null;
  let postgresUser = 0;
  if (before.postgres && after.postgres) {
    let ticks = 0;
    let user = 0;
    for (const [pid, t] of after.postgres) {
      const b = before.postgres.get(pid);
      ticks += t.total - (b ? b.total : 0);
      user += t.user - (b ? b.user : 0);
    }
    postgres = pct(ticks);
    postgresUser = pct(user);
  }
  let machine = null;
  let other = null;
  if (before.machine && after.machine) {
    machine = pct(after.machine.busy - before.machine.busy);
    other = Math.max(0, Math.round(pct(after.machine.user - before.machine.user) - serverUser - postgresUser - loadgenUser));
  }
  return { server, postgres, loadgen, other, machine };
}

/** User-space CPU of the machine over one second before we start, in % of one core. */
async function idleCheck() {
  const a = machineTicks();
  await new Promise((r) => setTimeout(r, 1000));
  const b = machineTicks();
  return a && b ? Math.round(((b.user - a.user) / clockTicks) * 100) : null;
}

// ---------------------------------------------------------------------------------------------
// Load

function load(opts) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ connections: settings.connections, ...opts }, (err, result) => {
      currentLoad = null;
      if (err) reject(err);
      else resolve(result);
    });
    currentLoad = instance;
  });
}

async function runScenario(scenario, serverPid) {
  if (interrupted) throw new Error('interrupted');
  process.stdout.write(`  ${scenario.label.padEnd(34)} `);
  if (settings.warmup > 0) {
    process.stdout.write(`warm-up ${settings.warmup} s… `);
    await load({ ...scenario.opts, duration: settings.warmup });
  }
  if (interrupted) throw new Error('interrupted');
  process.stdout.write(`measuring ${settings.duration} s… `);
  const before = cpuSnapshot(serverPid);
  const r = await load({ ...scenario.opts, duration: settings.duration });
  const cpu = cpuPercent(before, cpuSnapshot(serverPid));
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats || {}).map(([code, s]) => [code, s.count]));
  const row = {
    name: scenario.name,
    label: scenario.label,
    requestsPerSec: Math.round(r.requests.average),
    totalRequests: r.requests.total,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, mean: r.latency.mean, max: r.latency.max },
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    cpuPercent: cpu,
    durationSec: r.duration,
  };
  // CPU time the loaded server spent per request: less sensitive to other programs than req/s.
  row.serverCpuUsPerRequest = cpu.server === null || row.totalRequests === 0 ? null : Math.round((cpu.server / 100) * 1e6 * r.duration / row.totalRequests);
  row.disturbed = cpu.other !== null && cpu.other > DISTURBED_PCT;
  const bad = row.non2xx > 0 || row.errors > 0 || row.timeouts > 0;
  const notes = [bad ? 'NOT CLEAN' : '', row.disturbed ? `other programs used ${cpu.other}% CPU` : ''].filter(Boolean);
  process.stdout.write(`${row.requestsPerSec} req/s${notes.length ? `  <-- ${notes.join('; ')}` : ''}\n`);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Output

function table(rows, columns) {
  const widths = columns.map((c) => Math.max(c.title.length, ...rows.map((r) => String(c.value(r)).length)));
  const line = (cells) => cells.map((cell, i) => (columns[i].left ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join('  ');
  return [line(columns.map((c) => c.title)), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map((r) => line(columns.map((c) => c.value(r))))].join('\n');
}

const fmtPct = (v) => (v === null || v === undefined ? 'n/a' : `${v}%`);

const RATIOS = [
  ['GET/express', 'get', 'express'],
  ['POST/express', 'post', 'express'],
  ['list/express', 'list', 'express'],
  ['express/node', 'express', 'node'],
];

/** Throughput ratios (the milestone's measure). */
function ratiosOf(byName) {
  const ratio = (a, b) => (byName[a] && byName[b] && byName[b].requestsPerSec > 0 ? byName[a].requestsPerSec / byName[b].requestsPerSec : null);
  return Object.fromEntries(RATIOS.map(([name, a, b]) => [name, ratio(a, b)]));
}

/** The same ratios from server CPU per request (b's cost / a's cost): steadier when other programs interfere. */
function cpuRatiosOf(byName) {
  const ratio = (a, b) => {
    const ca = byName[a]?.serverCpuUsPerRequest;
    const cb = byName[b]?.serverCpuUsPerRequest;
    return ca && cb ? cb / ca : null;
  };
  return Object.fromEntries(RATIOS.map(([name, a, b]) => [name, ratio(a, b)]));
}

// ---------------------------------------------------------------------------------------------

async function main() {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'server.js'))) {
    throw new Error('dist/src/server.js is missing: run `npm run bench` (it builds first) or `npm run build`');
  }
  const startedAt = new Date();
  const cpus = os.cpus();
  console.log(`Sandbank benchmark — ${startedAt.toISOString()}`);
  console.log(
    `  machine: ${cpus.length} × ${cpus[0]?.model?.trim() ?? 'unknown CPU'}, node ${process.version}; ` +
      `${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s per scenario`,
  );
  console.log(`  the server, PostgreSQL and the load generator (autocannon, this process) share these cores`);
  console.log(
    `  MAX_WEBHOOK_ENDPOINTS=${settings.maxWebhookEndpoints} for the server (the public limit is 16; POST creates one endpoint per request)`,
  );
  const busy = await idleCheck();
  if (busy !== null) {
    const note = busy > DISTURBED_PCT ? '  <-- OTHER PROGRAMS ARE BUSY: the numbers will be lower and noisier' : '';
    console.log(`  machine busy before the run: ${busy}% of one core${note}`);
  }
  console.log(`  ${await resetBenchDatabase()}`);
  if (settings.serverNodeArgs.length) console.log(`  server node flags: ${settings.serverNodeArgs.join(' ')}`);
  if (settings.serverLogLevel !== 'warn') console.log(`  server LOG_LEVEL=${settings.serverLogLevel} (stdout to bench/results/server.log below warn)`);
  if (process.env.DATABASE_POOL_SIZE) console.log(`  server DATABASE_POOL_SIZE=${process.env.DATABASE_POOL_SIZE}`);

  const needSandbank = ['get', 'post', 'list'].some(wanted);
  const [sandbank, bareExpress, bareNode] = await Promise.all([
    needSandbank ? startSandbank() : null,
    wanted('express') ? startCeiling('express') : null,
    wanted('node') ? startCeiling('node') : null,
  ]);

  const key = `sk_test_bench${crypto.randomBytes(12).toString('hex')}`;
  const auth = { authorization: `Bearer ${key}` };
  const scenarios = [];

  if (sandbank) {
    const base = `http://${HOST}:${sandbank.port}`;
    await waitUntilAnswers(sandbank.entry, `${base}/readyz`, 90_000);
    // Prepare: the key's first use creates its account (AUTH_MODE=open); a few endpoints to read.
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/v1/webhook_endpoints`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': `bench-setup-${crypto.randomUUID()}` },
        body: `url=${encodeURIComponent(`${CLOSED_ORIGIN}/bench/${i}`)}&enabled_events[0]=charge.succeeded`,
      });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`preparing data: POST /v1/webhook_endpoints answered ${res.status}: ${JSON.stringify(body)}`);
      ids.push(body.id);
    }
    const probe = await fetch(`${base}/v1/webhook_endpoints/${ids[0]}`, { headers: auth });
    if (probe.status !== 200) throw new Error(`preparing data: GET /v1/webhook_endpoints/${ids[0]} answered ${probe.status}`);
    await probe.arrayBuffer();
    console.log(`  prepared: key sk_test_bench…, ${ids.length} webhook endpoints (GET loads ${ids[0]})`);

    let counter = 0;
    const run = crypto.randomBytes(4).toString('hex');
    if (wanted('get')) {
      scenarios.push({ name: 'get', label: 'GET /v1/webhook_endpoints/{id}', opts: { url: `${base}/v1/webhook_endpoints/${ids[0]}`, headers: auth } });
    }
    if (wanted('post')) {
      scenarios.push({
        name: 'post',
        label: 'POST /v1/webhook_endpoints',
        opts: {
          url: base,
          requests: [
            {
              method: 'POST',
              path: '/v1/webhook_endpoints',
              headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
              body: `url=${encodeURIComponent(`${CLOSED_ORIGIN}/bench/hooks`)}&enabled_events[0]=charge.succeeded`,
              // A fresh key per request, as the SDKs send: every request creates an endpoint.
              setupRequest: (req) => {
                req.headers['idempotency-key'] = `bench-${run}-${++counter}`;
                return req;
              },
            },
          ],
        },
      });
    }
    if (wanted('list')) {
      scenarios.push({ name: 'list', label: 'GET /v1/webhook_endpoints?limit=10', opts: { url: `${base}/v1/webhook_endpoints?limit=10`, headers: auth } });
    }
  }
  if (bareExpress) {
    await waitUntilAnswers(bareExpress.entry, `http://${HOST}:${bareExpress.port}/v1/things/x`, 15_000);
    scenarios.push({ name: 'express', label: 'bare Express GET /v1/things/:id', opts: { url: `http://${HOST}:${bareExpress.port}/v1/things/we_123` } });
  }
  if (bareNode) {
    await waitUntilAnswers(bareNode.entry, `http://${HOST}:${bareNode.port}/`, 15_000);
    scenarios.push({ name: 'node', label: 'bare node:http', opts: { url: `http://${HOST}:${bareNode.port}/v1/things/we_123` } });
  }

  console.log('\nLoading:');
  const rows = [];
  for (const scenario of scenarios) {
    const pid = scenario.name === 'express' ? bareExpress.entry.child.pid : scenario.name === 'node' ? bareNode.entry.child.pid : sandbank.entry.child.pid;
    rows.push(await runScenario(scenario, pid));
    if (sandbank?.entry.exited) throw new Error(describeExit(sandbank.entry));
    // autocannon hangs up on requests still in flight when its time is up; let the server finish them.
    await new Promise((r) => setTimeout(r, 1000));
  }

  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  const ratios = ratiosOf(byName);
  const cpuRatios = cpuRatiosOf(byName);
  const milestone = {
    'GET ≥ 50% of bare Express': ratios['GET/express'] === null ? null : ratios['GET/express'] >= 0.5,
    'POST ≥ 25% of bare Express': ratios['POST/express'] === null ? null : ratios['POST/express'] >= 0.25,
  };
  const unclean = rows.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0);

  console.log('\nResults (latency in ms; CPU in % of one core, measured over the loaded interval):\n');
  console.log(
    table(rows, [
      { title: 'scenario', value: (r) => r.label, left: true },
      { title: 'req/s', value: (r) => r.requestsPerSec },
      { title: 'p50', value: (r) => r.latencyMs.p50 },
      { title: 'p99', value: (r) => r.latencyMs.p99 },
      { title: 'non-2xx', value: (r) => r.non2xx },
      { title: 'errors', value: (r) => r.errors },
      { title: 'server CPU', value: (r) => fmtPct(r.cpuPercent.server) },
      { title: 'server µs/req', value: (r) => r.serverCpuUsPerRequest ?? 'n/a' },
      { title: 'pg CPU', value: (r) => fmtPct(r.cpuPercent.postgres) },
      { title: 'loadgen CPU', value: (r) => fmtPct(r.cpuPercent.loadgen) },
      { title: 'other CPU', value: (r) => fmtPct(r.cpuPercent.other) },
    ]),
  );
  console.log('\nRatios (requests/s; in brackets the same ratio from server CPU per request):');
  for (const [name, value] of Object.entries(ratios)) {
    if (value === null) continue;
    const cpuRatio = cpuRatios[name] === null ? '' : `  (${(cpuRatios[name] * 100).toFixed(1)}%)`;
    console.log(`  ${name.padEnd(14)} ${`${(value * 100).toFixed(1)}%`.padStart(6)}${cpuRatio}`);
  }
  console.log('\nMilestone:');
  for (const [name, pass] of Object.entries(milestone)) {
    if (pass !== null) console.log(`  ${name.padEnd(28)} ${pass ? 'PASS' : 'FAIL'}`);
  }

  if (unclean.length > 0) {
    const bar = '!'.repeat(78);
    console.log(`\n${bar}`);
    console.log('!! THIS BENCHMARK HAD ERRORS: its numbers measure failures, not the service.');
    for (const r of unclean) {
      console.log(`!!   ${r.label}: non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}, status codes ${JSON.stringify(r.statusCodes)}`);
    }
    console.log(bar);
  }
  const disturbed = rows.filter((r) => r.disturbed);
  if (disturbed.length > 0) {
    console.log(
      `\nNote: other CPU above ${DISTURBED_PCT}% of a core during ${disturbed.map((r) => r.name).join(', ')}: ` +
        'other programs competed for the 2 cores; rerun on a quiet machine to compare runs.',
    );
  }
  if (sandbank && sandbank.entry.lines > 0) {
    console.log(`\nThe server wrote ${sandbank.entry.lines} log line(s) at warn or above; the last ones:`);
    for (const line of sandbank.entry.tail.slice(-5)) console.log(`  ${line.slice(0, 300)}`);
  }
  if (sandbank) sandbankLinesAtReport = sandbank.entry.lines;

  const report = {
    date: startedAt.toISOString(),
    machine: { cpus: cpus.length, cpuModel: cpus[0]?.model?.trim() ?? null, node: process.version, platform: `${os.platform()} ${os.release()}` },
    settings: {
      durationSec: settings.duration,
      warmupSec: settings.warmup,
      connections: settings.connections,
      maxWebhookEndpoints: settings.maxWebhookEndpoints,
      serverLogLevel: settings.serverLogLevel,
      serverNodeArgs: settings.serverNodeArgs,
      database: new URL(settings.databaseUrl).pathname.slice(1),
    },
    scenarios: rows,
    ratios,
    cpuRatios,
    milestone,
    clean: unclean.length === 0,
    disturbed: disturbed.map((r) => r.name),
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(path.join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nWrote ${path.relative(ROOT, path.join(RESULTS_DIR, 'latest.json'))}`);
  return unclean.length === 0 ? 0 : 1;
}

main()
  .then(
    async (code) => {
      await stopAll();
      if (sandbankEntry && sandbankEntry.lines > sandbankLinesAtReport) {
        const n = sandbankEntry.lines - sandbankLinesAtReport;
        console.log(`\nThe server wrote ${n} log line(s) while shutting down; the last ones:`);
        for (const line of sandbankEntry.tail.slice(-Math.min(n, 5))) console.log(`  ${line.slice(0, 300)}`);
      }
      if (sandbankEntry && sandbankEntry.code !== 0) console.log(`The server exited with code ${sandbankEntry.code}, signal ${sandbankEntry.signal}.`);
      process.exit(code);
    },
    async (err) => {
      if (!interrupted) console.error(`\nbench failed: ${err && err.stack ? err.stack : err}`);
      await stopAll();
      process.exit(interrupted ? 130 : 1);
    },
  );
