'use strict';
// Sandbank benchmark: `npm run bench` (builds, then runs this file). See bench/README.md.
//
// Starts the real API from dist/ and four ceilings as child processes (Express + one `pg` SELECT by
// primary key, Express + one committed INSERT, bare Express, bare node:http), loads each with
// autocannon from this process, and prints per scenario requests/s, the ratio to its ceiling (reads
// to the read ceiling, writes to the write ceiling), PostgreSQL round trips and commits per request
// (counted inside the loaded process by bench/pgcount.js), p50/p99 latency, non-2xx and errors.
// Writes bench/results/latest.json and stops every child it started, on success, failure or Ctrl-C.
//
// Options (a flag wins over its variable; all optional):
//   --duration=10    BENCH_DURATION=10      seconds of measured load per scenario
//   --warmup=3       BENCH_WARMUP=3         seconds of unmeasured load before each scenario (0 to skip)
//   --connections=32 BENCH_CONNECTIONS=32   concurrent keep-alive connections
//   --only=get,post  BENCH_ONLY=get,post    run only these scenarios (names: see SCENARIOS below)
//   --out=FILE       BENCH_OUT=FILE         where the JSON report goes (default bench/results/latest.json)
//   --source         BENCH_SOURCE=1         run the server from src/ through scripts/swc-register.js
//                                          instead of dist/ (the smoke test's way: no build needed)
//   --rows=N         BENCH_ROWS=N           after the preparation, fill every hot table up to N rows
//                                          (bench/fill.js), so the scenarios run on a used database
//   BENCH_SERVER_ROOT=DIR      run the Sandbank server of another checkout (its dist/, or src/ with
//                              --source); bench/compare.js sets it to a build of another commit
//   BENCH_DATABASE_URL=…       default postgresql://postgres@127.0.0.1:5432/sandbank_bench; a database
//                              whose name contains "bench" is dropped and recreated at each run
//   BENCH_KEEP_DB=1            keep the bench database instead of recreating it
//   BENCH_QUEUE_PREFIX=sandbankbench  the server's QUEUE_PREFIX; its keys are deleted before and
//                              after a run when it contains "bench"
//   BENCH_MAX_WEBHOOK_ENDPOINTS=10000000
//   BENCH_SERVER_NODE_ARGS=…   extra node flags for the Sandbank server, e.g.
//                              "--cpu-prof --cpu-prof-dir=bench/results/profiles"
//   BENCH_SERVER_LOG_LEVEL=warn the server's LOG_LEVEL; below warn (e.g. info, the service's default, one
//                              line per request) its stdout goes to bench/results/server.log
//   REDIS_URL is passed through to the server. DATABASE_POOL_SIZE (default: src/config.ts's) is
//   given to the server and to the read and write ceilings alike.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const autocannon = require('autocannon');
const { clearBenchQueue: clearQueueKeys } = require('./database');
const cpuStats = require('./cpu');
const { fillRows } = require('./fill');
const { HOST, track, stopAll, freePort, portIsFree, describeExit, waitUntilAnswers, sandbankEnv, sandbankEntryPoint } = require('./children');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');
// Where the endpoints the benchmark creates point: this machine, port 0, where nothing can listen,
// so nothing would arrive anywhere even if a worker ran against the bench database.
const CLOSED_ORIGIN = `http://${HOST}:0`;
/** User CPU of programs other than the server, PostgreSQL and autocannon above which a scenario is flagged. */
const DISTURBED_PCT = 25;

// ---------------------------------------------------------------------------------------------
// Settings

const FLAGS = { duration: 'BENCH_DURATION', warmup: 'BENCH_WARMUP', connections: 'BENCH_CONNECTIONS', only: 'BENCH_ONLY', out: 'BENCH_OUT', source: 'BENCH_SOURCE', rows: 'BENCH_ROWS' };
for (const arg of process.argv.slice(2)) {
  const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
  if (!m || !FLAGS[m[1]]) throw new Error(`unknown option "${arg}" (known: ${Object.keys(FLAGS).map((f) => `--${f}`).join(', ')})`);
  process.env[FLAGS[m[1]]] = m[2] ?? '1';
}

function intEnv(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return Number(raw);
}

const fromSource = process.env.BENCH_SOURCE === '1';
/** Whose server runs: this checkout's, or (BENCH_SERVER_ROOT) another's, with this checkout's harness. */
const SERVER_ROOT = path.resolve(process.env.BENCH_SERVER_ROOT || ROOT);

/** Sandbank's own default pool size (src/config.ts), so the ceilings get what the server gets. */
function defaultPoolSize() {
  if (fromSource) require('../scripts/swc-register.js');
  const { settings: config } = require(path.join(SERVER_ROOT, fromSource ? 'src/config.ts' : 'dist/src/config.js'));
  return Number(config.DATABASE_POOL_SIZE[0]);
}

/** The newest API version, the one serializers write (src/kernel/versions.ts). */
function newestVersion() {
  if (fromSource) require('../scripts/swc-register.js');
  return require(path.join(SERVER_ROOT, fromSource ? 'src/kernel/versions.ts' : 'dist/src/kernel/versions.js')).LATEST_API_VERSION;
}

const settings = {
  duration: intEnv('BENCH_DURATION', 10, 1),
  warmup: intEnv('BENCH_WARMUP', 3, 0),
  connections: intEnv('BENCH_CONNECTIONS', 32, 1),
  rows: intEnv('BENCH_ROWS', 0, 0),
  maxWebhookEndpoints: intEnv('BENCH_MAX_WEBHOOK_ENDPOINTS', 10_000_000, 1),
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/sandbank_bench',
  keepDb: process.env.BENCH_KEEP_DB === '1',
  queuePrefix: process.env.BENCH_QUEUE_PREFIX || 'sandbankbench',
  only: (process.env.BENCH_ONLY || '').split(',').map((s) => s.trim()).filter(Boolean),
  out: path.resolve(process.env.BENCH_OUT || path.join(RESULTS_DIR, 'latest.json')),
  serverLogLevel: process.env.BENCH_SERVER_LOG_LEVEL || 'warn',
  serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS || '').split(/\s+/).filter(Boolean),
};

/** An event type nothing in the benchmark emits (nor bench/fill.js copies): its list is empty. */
const EMPTY_EVENT_TYPE = 'charge.dispute.created';
/** The oldest version the version table covers: a render there undoes every change (issue 24's measure). */
const OLD_VERSION = '2020-08-27';
/** API processes of the Sandbank compared with stripe-stateful-mock (a second server, src/cluster.ts). */
const CLUSTER_PROCESSES = 2;

/**
 * Every scenario, in the order they run: each ceiling just before the scenarios measured against
 * it, reads before writes so every read sees the same prepared rows. `ceiling` names the row a
 * scenario's ratio is taken to; `target` is the process it loads.
 */
const SCENARIOS = [
  { name: 'read', label: 'ceiling: Express + pg SELECT by id', target: 'read' },
  { name: 'get', label: 'GET /v1/webhook_endpoints/{id}', target: 'sandbank', ceiling: 'read' },
  { name: 'get-account', label: 'GET /v1/webhook_endpoints/{id}, Stripe-Account', target: 'sandbank', ceiling: 'read' },
  { name: 'list', label: 'GET /v1/webhook_endpoints?limit=10', target: 'sandbank', ceiling: 'read' },
  { name: 'list-cursor', label: 'GET /v1/webhook_endpoints?limit=10&starting_after', target: 'sandbank', ceiling: 'read' },
  { name: 'events-type', label: 'GET /v1/events?type=customer.created', target: 'sandbank', ceiling: 'read' },
  { name: 'events-type-empty', label: `GET /v1/events?type=${EMPTY_EVENT_TYPE} (none)`, target: 'sandbank', ceiling: 'read' },
  { name: 'customer-get', label: 'GET /v1/customers/{id}', target: 'sandbank', ceiling: 'read' },
  { name: 'customer-email', label: 'GET /v1/customers?email=<none>', target: 'sandbank', ceiling: 'read' },
  { name: 'customer-search', label: 'GET /v1/customers/search?query=email~"<none>"', target: 'sandbank', ceiling: 'read' },
  { name: 'price-list', label: 'GET /v1/prices?limit=10', target: 'sandbank', ceiling: 'read' },
  { name: 'pi-list', label: 'GET /v1/payment_intents?limit=10', target: 'sandbank', ceiling: 'read' },
  { name: 'pi-search', label: `GET /v1/payment_intents/search?query=metadata['order']:'<none>'`, target: 'sandbank', ceiling: 'pi-list' },
  { name: 'charge-search', label: 'GET /v1/charges/search?query=customer:"<one>" AND status:"succeeded"', target: 'sandbank', ceiling: 'pi-list' },
  { name: 'invoice-list', label: 'GET /v1/invoices?limit=10', target: 'sandbank', ceiling: 'read' },
  { name: 'invoice-search', label: 'GET /v1/invoices/search?query=customer:"<one>" AND status:"paid"', target: 'sandbank', ceiling: 'invoice-list' },
  { name: 'invoice-customer', label: 'GET /v1/invoices?customer=<one>&limit=10', target: 'sandbank', ceiling: 'invoice-list' },
  { name: 'sub-list', label: 'GET /v1/subscriptions?limit=10', target: 'sandbank', ceiling: 'read' },
  { name: 'sub-search', label: `GET /v1/subscriptions/search?query=metadata['order']:'<none>'`, target: 'sandbank', ceiling: 'sub-list' },
  { name: 'sub-customer', label: 'GET /v1/subscriptions?customer=<one>&limit=10', target: 'sandbank', ceiling: 'sub-list' },
  { name: 'sub-get', label: 'GET /v1/subscriptions/{id}, latest_invoice expanded', target: 'sandbank', ceiling: 'read' },
  { name: 'sub-get-2020', label: `GET /v1/subscriptions/{id}, latest_invoice expanded, Stripe-Version ${OLD_VERSION}`, target: 'sandbank', ceiling: 'sub-get' },
  // Issue 27's: the console's pages, signed in (each page is API calls over the console's loopback).
  { name: 'console-list', label: 'console GET /console/objects?type=customer (25 a page)', target: 'sandbank', ceiling: 'customer-get' },
  { name: 'console-object', label: 'console GET /console/objects/{customer} (+4 related lists)', target: 'sandbank', ceiling: 'customer-get' },
  { name: 'console-home', label: 'console GET /console (a page of each type, events, endpoints)', target: 'sandbank', ceiling: 'customer-get' },
  { name: 'peer-mock', label: 'stripe-stateful-mock GET /v1/customers/{id}', target: 'mock' },
  { name: 'customer-get-2proc', label: `GET /v1/customers/{id}, API_PROCESSES=${CLUSTER_PROCESSES}`, target: 'sandbank2', ceiling: 'peer-mock' },
  { name: 'write', label: 'ceiling: Express + pg INSERT', target: 'write' },
  { name: 'post', label: 'POST /v1/webhook_endpoints', target: 'sandbank', ceiling: 'write' },
  { name: 'post-spread', label: 'POST /v1/webhook_endpoints, 8 accounts', target: 'sandbank', ceiling: 'write' },
  { name: 'account-create', label: 'POST /v1/accounts', target: 'sandbank', ceiling: 'write' },
  { name: 'account-update', label: 'POST /v1/accounts/{id} (account.updated)', target: 'sandbank', ceiling: 'write' },
  { name: 'customer-create', label: 'POST /v1/customers', target: 'sandbank', ceiling: 'write' },
  { name: 'customer-update', label: 'POST /v1/customers/{id} (customer.updated)', target: 'sandbank', ceiling: 'customer-create' },
  { name: 'pm-attach', label: 'POST /v1/payment_methods/pm_card_visa/attach', target: 'sandbank', ceiling: 'write' },
  { name: 'pi-confirm', label: 'POST /v1/payment_intents, confirm=true with pm_card_visa (intent, charge, events)', target: 'sandbank', ceiling: 'customer-create' },
  { name: 'pi-confirm-2020', label: `POST /v1/payment_intents, confirm=true, Stripe-Version ${OLD_VERSION}`, target: 'sandbank', ceiling: 'customer-create' },
  { name: 'refund', label: 'POST /v1/refunds of 1 cent, 8 charges', target: 'sandbank', ceiling: 'customer-create' },
  { name: 'pi-update', label: 'POST /v1/payment_intents/{id} (metadata, 8 unconfirmed intents)', target: 'sandbank', ceiling: 'customer-create' },
  { name: 'si-update', label: 'POST /v1/setup_intents/{id} (metadata, 8 unconfirmed intents)', target: 'sandbank', ceiling: 'customer-create' },
  { name: 'pm-update', label: 'POST /v1/payment_methods/{id} (metadata, 8 saved cards; payment_method.updated)', target: 'sandbank', ceiling: 'customer-create' },
  { name: 'express', label: 'bare Express GET /v1/things/:id', target: 'express' },
  { name: 'node', label: 'bare node:http', target: 'node' },
];
const SCENARIO_NAMES = SCENARIOS.map((s) => s.name);
for (const name of settings.only) {
  if (!SCENARIO_NAMES.includes(name)) throw new Error(`BENCH_ONLY: unknown scenario "${name}" (known: ${SCENARIO_NAMES.join(', ')})`);
}
const wanted = (name) => settings.only.length === 0 || settings.only.includes(name);
const wantedTarget = (target) => SCENARIOS.some((s) => s.target === target && wanted(s.name));
/** The cluster's scenario reads what the single server prepares. */
const needSandbank = () => wantedTarget('sandbank') || wantedTarget('sandbank2');

let currentLoad = null;
/** The Sandbank child, to report what it logs while shutting down. */
let sandbankEntry = null;
let sandbankLinesAtReport = 0;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (interrupted) process.exit(130); // second Ctrl-C: bench/children.js's exit hook still kills the children
    interrupted = true;
    process.stderr.write(`\nbench: ${signal} received, stopping the load and every child process…\n`);
    if (currentLoad) currentLoad.stop();
    stopAll().then(cleanUp).finally(() => process.exit(130));
  });
}

/**
 * Where bench/pgcount.js answers its counters in a child: a free port of its own, and with
 * `apiProcesses` > 1 (a cluster) the next ones too, one per API process (pgcount.js adds the
 * cluster worker id). Each URL's counters are summed.
 */
async function counterEnv(apiProcesses = 1) {
  for (;;) {
    const port = await freePort();
    const ports = Array.from({ length: apiProcesses > 1 ? apiProcesses + 1 : 1 }, (_, i) => port + i);
    if (port + ports.length > 65535 || !(await Promise.all(ports.slice(1).map(portIsFree))).every(Boolean)) continue;
    return { counterUrls: ports.map((p) => `http://${HOST}:${p}/`), env: { BENCH_COUNTER_PORT: String(port) } };
  }
}

/**
 * Starts bench/ceiling.js <kind>; resolves with its port once it listens. The database ceilings get
 * Sandbank's database and pool size, and the counting preload the server gets.
 */
async function startCeiling(kind, poolSize) {
  const database = kind === 'read' || kind === 'write';
  const counters = database ? await counterEnv() : { counterUrls: null, env: {} };
  const args = [...(database ? ['-r', path.join(__dirname, 'pgcount.js')] : []), path.join(__dirname, 'ceiling.js'), kind];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      ...counters.env,
      ...(database ? { DATABASE_URL: settings.databaseUrl, DATABASE_POOL_SIZE: String(poolSize) } : {}),
    },
  });
  const name = database ? `${kind} ceiling` : kind === 'mock' ? 'stripe-stateful-mock' : `bare ${kind}`;
  const entry = track(name, child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 15 s`)), 15_000);
    child.once('message', (msg) => {
      clearTimeout(timer);
      resolve({ entry, port: msg.port, counterUrls: counters.counterUrls });
    });
    entry.exitedPromise.then(() => {
      clearTimeout(timer);
      reject(new Error(describeExit(entry)));
    });
  });
}

/**
 * Starts the real API (`node dist/src/server.js`, or src/server.ts with --source) on a free port,
 * against the bench database; with `apiProcesses` > 1, as a cluster of that many API processes
 * (src/cluster.ts), each counted on a port of its own.
 */
async function startSandbank(poolSize, apiProcesses = 1) {
  const port = await freePort();
  const counters = await counterEnv(apiProcesses);
  const env = {
    ...sandbankEnv({ ...settings, poolSize, logLevel: settings.serverLogLevel }, port),
    ...counters.env,
    // One process unless asked: the ceilings are one process each.
    API_PROCESSES: String(apiProcesses),
  };
  const entryPoint = sandbankEntryPoint('server', fromSource, SERVER_ROOT);
  const preloads = ['-r', path.join(__dirname, 'watchdog.js'), '-r', path.join(__dirname, 'pgcount.js')];
  const args = [...settings.serverNodeArgs, ...preloads, ...entryPoint];
  // Below warn the server logs every request: send its stdout to a file (as a deployment would),
  // not through this process, which would then spend the load generator's CPU reading it.
  let stdout = 'pipe';
  if (!['warn', 'error', 'fatal', 'silent'].includes(settings.serverLogLevel)) {
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    stdout = fs.openSync(path.join(RESULTS_DIR, 'server.log'), 'w');
  }
  const child = spawn(process.execPath, args, { cwd: SERVER_ROOT, stdio: ['ignore', stdout, 'pipe', 'ipc'], env });
  if (typeof stdout === 'number') fs.closeSync(stdout);
  const entry = track(apiProcesses > 1 ? `sandbank (${apiProcesses} API processes)` : 'sandbank', child);
  if (apiProcesses === 1) sandbankEntry = entry;
  return { entry, port, counterUrls: counters.counterUrls };
}

/** The counters bench/pgcount.js keeps in a child (requests, queries, commits, …), summed over its processes. */
async function readCounters(counterUrls) {
  const sum = {};
  for (const url of counterUrls) {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    for (const [key, value] of Object.entries(await res.json())) sum[key] = (sum[key] ?? 0) + value;
  }
  return sum;
}

/**
 * Waits until a child has finished what it was doing (its counters stop moving for 200 ms, at
 * most 5 s), so requests autocannon hung up on land in the interval they belong to.
 */
async function settle(counterUrls) {
  if (!counterUrls) {
    await new Promise((r) => setTimeout(r, 500));
    return null;
  }
  const deadline = Date.now() + 5000;
  let last = await readCounters(counterUrls);
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const now = await readCounters(counterUrls);
    if ((now.queries === last.queries && now.requests === last.requests) || Date.now() > deadline) return now;
    last = now;
  }
}

// ---------------------------------------------------------------------------------------------
// The bench database: recreated each run (only when its name says it is a bench database), so
// every run starts from the same empty state. The server creates and migrates it at start.

async function adminQuery(sql) {
  const { Client } = require('pg');
  const admin = new URL(settings.databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Drops the bench database (when its name allows), then makes sure it exists, so the ceilings can start beside the server. */
async function resetBenchDatabase() {
  const url = new URL(settings.databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const quoted = `"${name.replace(/"/g, '""')}"`;
  let said;
  if (settings.keepDb) said = `kept database ${name} (BENCH_KEEP_DB=1)`;
  else if (!/bench/i.test(name)) said = `database ${name} kept: only databases whose name contains "bench" are recreated`;
  else {
    await adminQuery(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    said = `recreated database ${name}`;
  }
  const exists = await adminQuery(`SELECT 1 FROM pg_database WHERE datname = '${name.replace(/'/g, "''")}'`);
  if (exists.rowCount === 0) await adminQuery(`CREATE DATABASE ${quoted}`);
  return said;
}

/** Deletes the bench queue's keys in Redis (the API enqueues every event it writes; no worker takes them here). */
const clearBenchQueue = () => clearQueueKeys(process.env.REDIS_URL || 'redis://127.0.0.1:6379', settings.queuePrefix);

// ---------------------------------------------------------------------------------------------
// CPU accounting (bench/cpu.js): how busy the server, PostgreSQL and this load generator were.

const cpuSnapshot = (serverPid) => cpuStats.cpuSnapshot({ server: serverPid }, ['postgres']);

/** CPU of the loaded server, PostgreSQL, this load generator and other programs, in % of one core. */
function cpuPercent(before, after) {
  const c = cpuStats.cpuPercent(before, after);
  return { server: c.server, postgres: c.postgres, loadgen: c.self, other: c.other, machine: c.machine };
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

/** What one scenario asked of PostgreSQL, per request the loaded process received, from two counter readings. */
function perRequest(before, after) {
  const requests = after.requests - before.requests;
  const per = (key) => (requests > 0 ? (after[key] - before[key]) / requests : null);
  return {
    requests,
    roundTrips: per('queries'),
    commits: per('commits'),
    readOnlyCommits: per('readOnlyCommits'),
    rollbacks: per('rollbacks'),
  };
}

async function runScenario(scenario, target) {
  if (interrupted) throw new Error('interrupted');
  const pid = target.entry.child.pid;
  process.stdout.write(`  ${scenario.label.padEnd(50)} `);
  if (settings.warmup > 0) {
    process.stdout.write(`warm-up ${settings.warmup} s… `);
    await load({ ...scenario.opts, duration: settings.warmup });
  }
  if (interrupted) throw new Error('interrupted');
  // autocannon hangs up on requests still in flight when its time is up; the server finishes
  // them before the counters are read, on both sides of the measured interval.
  const countersBefore = await settle(target.counterUrls);
  process.stdout.write(`measuring ${settings.duration} s… `);
  const before = cpuSnapshot(pid);
  const r = await load({ ...scenario.opts, duration: settings.duration });
  const cpu = cpuPercent(before, cpuSnapshot(pid));
  const countersAfter = await settle(target.counterUrls);
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats || {}).map(([code, s]) => [code, s.count]));
  const row = {
    name: scenario.name,
    label: scenario.label,
    ceiling: scenario.ceiling ?? null,
    requestsPerSec: Math.round(r.requests.average),
    totalRequests: r.requests.total,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, mean: r.latency.mean, max: r.latency.max },
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    cpuPercent: cpu,
    durationSec: r.duration,
    postgres: countersBefore && countersAfter ? perRequest(countersBefore, countersAfter) : null,
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
// Sandbank's scenarios: the data they read, prepared once, and their loads.

/** How many of each object the read scenarios find; the cursor lands mid-list. */
const PREPARED = { endpoints: 30, accounts: 8, customers: 20, prices: 20 };
const ACCOUNT_PARAMS = { type: 'custom', country: 'US', 'capabilities[card_payments][requested]': 'true', 'capabilities[transfers][requested]': 'true' };

async function prepare(base, auth) {
  const call = async (method, pathname, form, headers = {}) => {
    const res = await fetch(`${base}${pathname}`, {
      method,
      headers: {
        ...auth,
        ...headers,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': `bench-setup-${crypto.randomUUID()}` } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`preparing data: ${method} ${pathname} answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  };
  const hook = (i) => ({ url: `${CLOSED_ORIGIN}/bench/${i}`, 'enabled_events[0]': 'charge.dispute.created' });
  // One after the other, so the list's order is the creation order.
  const endpoints = [];
  for (let i = 0; i < PREPARED.endpoints; i++) endpoints.push((await call('POST', '/v1/webhook_endpoints', hook(i))).id);
  const accounts = [];
  for (let i = 0; i < PREPARED.accounts; i++) accounts.push((await call('POST', '/v1/accounts', ACCOUNT_PARAMS)).id);
  const connected = { 'stripe-account': accounts[0] };
  const accountEndpoint = (await call('POST', '/v1/webhook_endpoints', hook('connected'), connected)).id;
  const customers = [];
  for (let i = 0; i < PREPARED.customers; i++) customers.push((await call('POST', '/v1/customers', { name: `Bench customer ${i}` })).id);
  const product = (await call('POST', '/v1/products', { name: 'Bench product' })).id;
  for (let i = 0; i < PREPARED.prices; i++) await call('POST', '/v1/prices', { product, currency: 'usd', unit_amount: String(100 + i) });
  // The platform pinned to the newest version by its first versioned request, as an SDK's first call
  // pins it: the old-version scenario's header then applies to its own requests only.
  await call('GET', '/v1/webhook_endpoints?limit=1', undefined, { 'stripe-version': newestVersion() });
  // What only some scenarios read is made only for them, so bench:compare can load an older build
  // that lacks those operations (the fill copies them all).
  const needs = (names) => settings.rows > 0 || names.some(wanted);
  const CONSOLE = ['console-list', 'console-object', 'console-home'];
  // A monthly subscription paid by card: its latest invoice (with lines) is what the version scenarios expand.
  let subscription = null;
  if (needs(['invoice-list', 'invoice-search', 'invoice-customer', 'sub-list', 'sub-search', 'sub-customer', 'sub-get', 'sub-get-2020', ...CONSOLE])) {
    const payer = (await call('POST', '/v1/payment_methods/pm_card_visa/attach', { customer: customers[0] })).id;
    await call('POST', `/v1/customers/${customers[0]}`, { 'invoice_settings[default_payment_method]': payer });
    const plan = (await call('POST', '/v1/prices', { product, currency: 'usd', unit_amount: '1500', 'recurring[interval]': 'month' })).id;
    subscription = (await call('POST', '/v1/subscriptions', { customer: customers[0], 'items[0][price]': plan })).id;
  }
  // Paid PaymentIntents: the list's and the fill's template, and large ones the refund scenario refunds a cent at a time.
  const pay = async (amount, extra = {}) =>
    call('POST', '/v1/payment_intents', { amount: String(amount), currency: 'usd', payment_method: 'pm_card_visa', confirm: 'true', return_url: `${CLOSED_ORIGIN}/back`, ...extra });
  const intent = needs(['pi-list', 'pi-search', 'charge-search', ...CONSOLE]) ? (await pay(1000, { customer: customers[1], 'metadata[order]': 'bench' })).id : null;
  const refundable = [];
  if (needs(['refund'])) for (let i = 0; i < 8; i++) refundable.push((await pay(99999999)).id);
  // Unconfirmed intents (requires_payment_method) the update scenario changes.
  const openIntents = [];
  if (needs(['pi-update'])) for (let i = 0; i < 8; i++) openIntents.push((await call('POST', '/v1/payment_intents', { amount: '1000', currency: 'usd' })).id);
  const openSetups = [];
  if (needs(['si-update'])) for (let i = 0; i < 8; i++) openSetups.push((await call('POST', '/v1/setup_intents', {})).id);
  // Saved cards (only a customer's card can be updated).
  const savedCards = [];
  if (needs(['pm-update'])) for (let i = 0; i < 8; i++) savedCards.push((await call('POST', '/v1/payment_methods/pm_card_visa/attach', { customer: customers[i] })).id);
  // Each read answers 200 before it is loaded.
  await call('GET', `/v1/webhook_endpoints/${accountEndpoint}`, undefined, connected);
  const page = await call('GET', `/v1/events?type=customer.created&limit=10`);
  if (page.data.length === 0) throw new Error('preparing data: no customer.created events to list');
  // Keys of 8 more platforms (open mode registers each on its first request), for creates spread over accounts.
  const spreadAuth = [];
  for (let i = 0; i < 8; i++) {
    const headers = { authorization: `${auth.authorization}x${i}` };
    const res = await fetch(`${base}/v1/webhook_endpoints?limit=1`, { headers });
    if (res.status !== 200) throw new Error(`preparing data: a spread key answered ${res.status}`);
    spreadAuth.push(headers);
  }
  const consoleCookie = needs(CONSOLE) ? await consoleSignIn(base, auth.authorization.replace(/^Bearer /, '')) : null;
  return { endpoints, accounts, accountEndpoint, customers, spreadAuth, product, subscription, intent, refundable, openIntents, openSetups, savedCards, call, consoleCookie };
}

/** Signs in to the console as a browser does (the form's cookie and token, then the key); answers the session's Cookie header. */
async function consoleSignIn(base, key) {
  const form = await fetch(`${base}/console/sign-in`);
  const formCookie = form.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('sandbank_console_signin='));
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!formCookie || !csrf) throw new Error('preparing data: the console sign-in form has no cookie or token');
  const res = await fetch(`${base}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf_token: csrf, key }).toString(),
  });
  const session = res.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('sandbank_console='));
  if (res.status !== 303 || !session) throw new Error(`preparing data: console sign-in answered ${res.status}`);
  return session;
}

/** --rows=N: the hot tables filled up to N rows each, copying rows the preparation made (bench/fill.js). */
async function fill(data) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: settings.databaseUrl });
  await client.connect();
  let bench;
  let idempotencyKey;
  let price;
  try {
    bench = (await client.query('SELECT account_id FROM webhook_endpoints WHERE id = $1', [data.endpoints[0]])).rows[0].account_id;
    idempotencyKey = (await client.query('SELECT key FROM idempotency_records WHERE account_id = $1 AND status = 200 LIMIT 1', [bench])).rows[0].key;
    price = (await client.query('SELECT id FROM prices WHERE product_id = $1 LIMIT 1', [data.product])).rows[0].id;
  } finally {
    await client.end();
  }
  const templates = {
    connectedAccount: data.accounts[1],
    endpoint: data.endpoints[0],
    customer: data.customers[0],
    product: data.product,
    price,
    intent: data.intent,
    subscription: data.subscription,
    idempotencyKey,
  };
  const result = await fillRows(settings.databaseUrl, settings.rows, bench, templates, (line) => console.log(`    ${line}`));
  const counts = Object.entries(result.counts).map(([table, n]) => `${table} ${n}`).join(', ');
  console.log(`  filled to ${settings.rows} rows per hot table in ${result.seconds.toFixed(1)} s: ${counts}`);
  // The scenarios' lists still answer as they should: the empty type stays empty.
  const empty = await data.call('GET', `/v1/events?type=${EMPTY_EVENT_TYPE}&limit=10`);
  if (empty.data.length !== 0) throw new Error(`bench/fill.js: ${EMPTY_EVENT_TYPE} events exist`);
  return result;
}

/** autocannon options of each Sandbank scenario, by name. */
function sandbankLoads(base, auth, data) {
  const run = crypto.randomBytes(4).toString('hex');
  let counter = 0;
  const get = (pathname, headers = {}) => ({ url: `${base}${pathname}`, headers: { ...auth, ...headers } });
  /** A POST with a fresh Idempotency-Key per request, as the SDKs send; `vary` may change its path and body. */
  const post = (pathname, body, vary) => ({
    url: base,
    requests: [
      {
        method: 'POST',
        path: pathname,
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body,
        setupRequest: (req) => {
          const n = ++counter;
          req.headers['idempotency-key'] = `bench-${run}-${n}`;
          return vary ? { ...req, ...vary(n) } : req;
        },
      },
    ],
  });
  const form = (params) => new URLSearchParams(params).toString();
  // Updates and attaches spread over several rows: each locks its row, and the benchmark measures
  // a request's cost, not 32 connections queueing on one lock.
  const some = (ids) => ids.slice(0, 8);
  return {
    get: get(`/v1/webhook_endpoints/${data.endpoints[0]}`),
    'get-account': get(`/v1/webhook_endpoints/${data.accountEndpoint}`, { 'stripe-account': data.accounts[0] }),
    list: get('/v1/webhook_endpoints?limit=10'),
    'list-cursor': get(`/v1/webhook_endpoints?limit=10&starting_after=${data.endpoints[PREPARED.endpoints - 11]}`),
    'events-type': get('/v1/events?type=customer.created&limit=10'),
    'events-type-empty': get(`/v1/events?type=${EMPTY_EVENT_TYPE}&limit=10`),
    'customer-get': get(`/v1/customers/${data.customers[0]}`),
    // An address no customer has (bench/fill.js writes customer<n>@example.com): the whole filter, no match.
    'customer-email': get('/v1/customers?email=nobody%40example.com&limit=10'),
    // A substring no customer's email has: the search reads every candidate (or the trigram index) and finds none.
    'customer-search': get(`/v1/customers/search?query=${encodeURIComponent('email~"nobody"')}&limit=10`),
    'price-list': get('/v1/prices?limit=10'),
    'pi-list': get('/v1/payment_intents?limit=10'),
    // An order number no intent has: the metadata index (jsonb_path_ops) answers, not a scan.
    'pi-search': get(`/v1/payment_intents/search?query=${encodeURIComponent("metadata['order']:'nobody'")}&limit=10`),
    // One customer's charges (the prepared intent's), by the (account, customer) index.
    'charge-search': get(`/v1/charges/search?query=${encodeURIComponent(`customer:"${data.customers[1]}" AND status:"succeeded"`)}&limit=10`),
    // Lists of 10 with their lines and items, as the dashboard reads them.
    'invoice-list': get('/v1/invoices?limit=10'),
    'sub-list': get('/v1/subscriptions?limit=10'),
    'invoice-customer': get(`/v1/invoices?customer=${data.customers[0]}&limit=10`),
    'sub-customer': get(`/v1/subscriptions?customer=${data.customers[0]}&limit=10`),
    // One customer's paid invoices (the prepared subscription's first), by the customer index.
    'invoice-search': get(`/v1/invoices/search?query=${encodeURIComponent(`customer:"${data.customers[0]}" AND status:"paid"`)}&limit=10`),
    // An order number no subscription has: the metadata index (jsonb_path_ops) answers, not a scan.
    'sub-search': get(`/v1/subscriptions/search?query=${encodeURIComponent("metadata['order']:'nobody'")}&limit=10`),
    'sub-get': get(`/v1/subscriptions/${data.subscription}?expand[]=latest_invoice`),
    // A browser's requests: the session's cookie, no key. Its customer has a card, a subscription,
    // an invoice and a payment, so each related list finds rows.
    'console-list': { url: `${base}/console/objects?type=customer`, headers: { cookie: data.consoleCookie } },
    'console-object': { url: `${base}/console/objects/${data.customers[0]}`, headers: { cookie: data.consoleCookie } },
    'console-home': { url: `${base}/console`, headers: { cookie: data.consoleCookie } },
    'sub-get-2020': get(`/v1/subscriptions/${data.subscription}?expand[]=latest_invoice`, { 'stripe-version': OLD_VERSION }),
    post: post('/v1/webhook_endpoints', form({ url: `${CLOSED_ORIGIN}/bench/hooks`, 'enabled_events[0]': 'charge.dispute.created' })),
    // Every create on one account takes a slot under its endpoint count, so they queue on that row
    // (the public limit is 16 per account); over 8 accounts, this measures a create's own cost.
    'post-spread': post('/v1/webhook_endpoints', form({ url: `${CLOSED_ORIGIN}/bench/hooks`, 'enabled_events[0]': 'charge.dispute.created' }), (n) => ({
      headers: { ...data.spreadAuth[n % 8], 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': `bench-${run}-${n}` },
    })),
    'account-create': post('/v1/accounts', form(ACCOUNT_PARAMS)),
    // A new metadata value each time, so every update changes the account and writes its event.
    'account-update': post('/v1/accounts', '', (n) => ({ path: `/v1/accounts/${some(data.accounts)[n % 8]}`, body: form({ 'metadata[bench]': String(n) }) })),
    'customer-create': post('/v1/customers', form({ name: 'Bench customer', description: 'created by npm run bench' })),
    'pi-confirm': post('/v1/payment_intents', form({ amount: '1000', currency: 'usd', payment_method: 'pm_card_visa', confirm: 'true', return_url: `${CLOSED_ORIGIN}/back` })),
    // The same at a version before 2022-11-15, whose intents carry their `charges` list.
    'pi-confirm-2020': post('/v1/payment_intents', form({ amount: '1000', currency: 'usd', payment_method: 'pm_card_visa', confirm: 'true', return_url: `${CLOSED_ORIGIN}/back` }), (n) => ({
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': `bench-${run}-${n}`, 'stripe-version': OLD_VERSION },
    })),
    // A new metadata value each time (so each writes customer.updated), spread over 8 customers.
    'customer-update': post('/v1/customers', '', (n) => ({ path: `/v1/customers/${some(data.customers)[n % 8]}`, body: form({ 'metadata[bench]': String(n) }) })),
    // A cent of one of 8 large charges each time: each refund locks its charge, as two of one charge must queue.
    refund: post('/v1/refunds', '', (n) => ({ body: form({ payment_intent: data.refundable[n % 8], amount: '1' }) })),
    // A new metadata value each time, spread over 8 unconfirmed intents (each update locks its intent).
    'pi-update': post('/v1/payment_intents', '', (n) => ({ path: `/v1/payment_intents/${data.openIntents[n % 8]}`, body: form({ 'metadata[bench]': String(n) }) })),
    'si-update': post('/v1/setup_intents', '', (n) => ({ path: `/v1/setup_intents/${data.openSetups[n % 8]}`, body: form({ 'metadata[bench]': String(n) }) })),
    'pm-update': post('/v1/payment_methods', '', (n) => ({ path: `/v1/payment_methods/${data.savedCards[n % 8]}`, body: form({ 'metadata[bench]': String(n) }) })),
    'pm-attach': post('/v1/payment_methods/pm_card_visa/attach', '', (n) => ({ body: form({ customer: some(data.customers)[n % 8] }) })),
  };
}

// ---------------------------------------------------------------------------------------------
// Output

function table(rows, columns) {
  const widths = columns.map((c) => Math.max(c.title.length, ...rows.map((r) => String(c.value(r)).length)));
  const line = (cells) => cells.map((cell, i) => (columns[i].left ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join('  ');
  return [line(columns.map((c) => c.title)), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map((r) => line(columns.map((c) => c.value(r))))].join('\n');
}

const fmtPct = (v) => (v === null || v === undefined ? 'n/a' : `${v}%`);
const fmtRatio = (v) => (v === null || v === undefined ? '' : `${(v * 100).toFixed(1)}%`);
const fmtPer = (v) => (v === null || v === undefined ? '' : v.toFixed(2));

/** Requests/s of a over b, or null when either is missing. */
function ratio(byName, a, b) {
  return byName[a] && byName[b] && byName[b].requestsPerSec > 0 ? byName[a].requestsPerSec / byName[b].requestsPerSec : null;
}

const RATIOS = [
  ['GET/express', 'get', 'express'],
  ['POST/express', 'post', 'express'],
  ['list/express', 'list', 'express'],
  ['express/node', 'express', 'node'],
  ['read/express', 'read', 'express'],
  ['write/express', 'write', 'express'],
];

/** Throughput ratios to the bare ceilings (issue 2's milestone's measure). */
function ratiosOf(byName) {
  return Object.fromEntries(RATIOS.map(([name, a, b]) => [name, ratio(byName, a, b)]));
}

/** The same ratios from server CPU per request (b's cost / a's cost): steadier when other programs interfere. */
function cpuRatiosOf(byName) {
  const cpuRatio = (a, b) => {
    const ca = byName[a]?.serverCpuUsPerRequest;
    const cb = byName[b]?.serverCpuUsPerRequest;
    return ca && cb ? cb / ca : null;
  };
  return Object.fromEntries(RATIOS.map(([name, a, b]) => [name, cpuRatio(a, b)]));
}

/** Issue 17's targets: [what, scenario, compared with, at least]. */
const TARGETS = [
  ['GET by id ≥ 85% of the read ceiling', 'get', 'read', 0.85],
  ['GET with Stripe-Account ≥ 90% of a plain GET', 'get-account', 'get', 0.9],
  ['POST create ≥ 75% of the write ceiling', 'post', 'write', 0.75],
  ['POST create, 8 accounts, ≥ 75% of the write ceiling', 'post-spread', 'write', 0.75],
  ['POST create (connected account) ≥ 75% of the write ceiling', 'account-create', 'write', 0.75],
  ['POST update with an event ≥ 50% of POST create', 'account-update', 'post', 0.5],
  [`GET with API_PROCESSES=${CLUSTER_PROCESSES} ≥ 1.0x stripe-stateful-mock`, 'customer-get-2proc', 'peer-mock', 1.0],
  [`GET of a subscription, invoice expanded, at ${OLD_VERSION} ≥ 90% of the same at the newest`, 'sub-get-2020', 'sub-get', 0.9],
  // Issue 25's.
  ['POST a confirmed PaymentIntent (intent, charge, events) ≥ 50% of a customer create', 'pi-confirm', 'customer-create', 0.5],
  // Issue 34's.
  ['GET by id ≥ 80% of the read ceiling (issue 34)', 'get', 'read', 0.8],
  ['POST create ≥ 45% of the write ceiling (issue 34)', 'post', 'write', 0.45],
  ['customer update ≥ 50% of a customer create', 'customer-update', 'customer-create', 0.5],
  ['POST a confirmed PaymentIntent ≥ 60% of a customer create', 'pi-confirm', 'customer-create', 0.6],
  [`the same at ${OLD_VERSION} ≥ 60% of a customer create`, 'pi-confirm-2020', 'customer-create', 0.6],
  ['search of PaymentIntents by metadata ≥ 50% of their plain list', 'pi-search', 'pi-list', 0.5],
  ['search of charges by customer ≥ 50% of the PaymentIntents list', 'charge-search', 'pi-list', 0.5],
  // Issue 26's (flatness from 1k to 1M rows is bench:scale's comparison).
  ['search of invoices by customer and status ≥ 50% of their plain list', 'invoice-search', 'invoice-list', 0.5],
  ['search of subscriptions by metadata ≥ 50% of their plain list', 'sub-search', 'sub-list', 0.5],
];

// ---------------------------------------------------------------------------------------------

async function main() {
  if (!fromSource && !fs.existsSync(path.join(SERVER_ROOT, 'dist', 'src', 'server.js'))) {
    throw new Error(`${path.join(SERVER_ROOT, 'dist/src/server.js')} is missing: run \`npm run bench\` (it builds first), \`npm run build\`, or pass --source`);
  }
  const poolSize = process.env.DATABASE_POOL_SIZE ? intEnv('DATABASE_POOL_SIZE', 0, 1) : defaultPoolSize();
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
  console.log(`  DATABASE_POOL_SIZE=${poolSize} for the server and the read and write ceilings${fromSource ? '; server from src/ (--source)' : ''}`);
  if (settings.rows > 0) console.log(`  --rows=${settings.rows}: every hot table filled up to ${settings.rows} rows after the preparation`);
  const busy = await cpuStats.idleCheck();
  if (busy !== null) {
    const note = busy > DISTURBED_PCT ? '  <-- OTHER PROGRAMS ARE BUSY: the numbers will be lower and noisier' : '';
    console.log(`  machine busy before the run: ${busy}% of one core${note}`);
  }
  const needDatabase = needSandbank() || ['read', 'write'].some(wantedTarget);
  if (needDatabase) console.log(`  ${await resetBenchDatabase()}`);
  if (needSandbank()) {
    const cleared = await clearBenchQueue();
    if (cleared > 0) console.log(`  deleted ${cleared} Redis key(s) of the queue prefix ${settings.queuePrefix}`);
  }
  if (settings.serverNodeArgs.length) console.log(`  server node flags: ${settings.serverNodeArgs.join(' ')}`);
  if (settings.serverLogLevel !== 'warn') console.log(`  server LOG_LEVEL=${settings.serverLogLevel} (stdout to bench/results/server.log below warn)`);

  const targets = {};
  const kinds = ['read', 'write', 'express', 'node', 'mock'].filter(wantedTarget);
  const started = await Promise.all([
    needSandbank() ? startSandbank(poolSize) : null,
    ...kinds.map((kind) => startCeiling(kind, poolSize)),
  ]);
  if (started[0]) targets.sandbank = started[0];
  kinds.forEach((kind, i) => (targets[kind] = started[i + 1]));

  const loads = {};
  let filled = null;
  if (targets.sandbank) {
    const base = `http://${HOST}:${targets.sandbank.port}`;
    await waitUntilAnswers(targets.sandbank.entry, `${base}/readyz`, 90_000);
    // The key's first use creates its account (AUTH_MODE=open).
    const key = `sk_test_bench${crypto.randomBytes(12).toString('hex')}`;
    const auth = { authorization: `Bearer ${key}` };
    const data = await prepare(base, auth);
    console.log(
      `  prepared: key sk_test_bench…, ${data.endpoints.length} webhook endpoints, ${data.accounts.length} connected accounts ` +
        `(one with an endpoint), ${data.customers.length} customers, ${PREPARED.prices} prices`,
    );
    if (settings.rows > 0) filled = await fill(data);
    Object.assign(loads, sandbankLoads(base, auth, data));
    if (wantedTarget('sandbank2')) {
      // Started once the first has migrated the database; the same key and rows serve both.
      targets.sandbank2 = await startSandbank(poolSize, CLUSTER_PROCESSES);
      const base2 = `http://${HOST}:${targets.sandbank2.port}`;
      await waitUntilAnswers(targets.sandbank2.entry, `${base2}/readyz`, 90_000);
      loads['customer-get-2proc'] = { url: `${base2}/v1/customers/${data.customers[0]}`, headers: auth };
    }
  }
  for (const kind of kinds.filter((k) => k === 'mock')) {
    // The peer keeps its objects in memory: one customer made there, read by id as on Sandbank.
    const base = `http://${HOST}:${targets.mock.port}`;
    const auth = { authorization: `Bearer sk_test_bench${crypto.randomBytes(12).toString('hex')}` };
    const res = await fetch(`${base}/v1/customers`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'Bench customer 0' }).toString(),
    });
    const customer = await res.json();
    if (res.status !== 200) throw new Error(`stripe-stateful-mock: POST /v1/customers answered ${res.status}: ${JSON.stringify(customer).slice(0, 300)}`);
    await waitUntilAnswers(targets[kind].entry, `${base}/v1/customers/${customer.id}`, 15_000, auth);
    loads['peer-mock'] = { url: `${base}/v1/customers/${customer.id}`, headers: auth };
  }
  for (const kind of kinds.filter((k) => k !== 'mock')) {
    const base = `http://${HOST}:${targets[kind].port}`;
    // The write ceiling answers only POST; it reported its port once its table was ready.
    if (kind !== 'write') await waitUntilAnswers(targets[kind].entry, `${base}/v1/things/we_1BenchCeilingReadRow000`, 15_000);
    loads[kind] =
      kind === 'write'
        ? {
            url: base,
            requests: [
              {
                method: 'POST',
                path: '/v1/things',
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                body: `url=${encodeURIComponent(`${CLOSED_ORIGIN}/bench/hooks`)}&enabled_events[0]=charge.dispute.created`,
              },
            ],
          }
        : { url: `${base}/v1/things/we_1BenchCeilingReadRow000` };
  }

  console.log('\nLoading:');
  const rows = [];
  for (const scenario of SCENARIOS.filter((s) => wanted(s.name))) {
    rows.push(await runScenario({ ...scenario, opts: loads[scenario.name] }, targets[scenario.target]));
    for (const target of Object.values(targets)) if (target.entry.exited) throw new Error(describeExit(target.entry));
  }

  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  for (const row of rows) row.ratioToCeiling = row.ceiling ? ratio(byName, row.name, row.ceiling) : null;
  const ratios = ratiosOf(byName);
  const cpuRatios = cpuRatiosOf(byName);
  const milestone = {
    'GET ≥ 50% of bare Express': ratios['GET/express'] === null ? null : ratios['GET/express'] >= 0.5,
    'POST ≥ 25% of bare Express': ratios['POST/express'] === null ? null : ratios['POST/express'] >= 0.25,
  };
  const targetResults = TARGETS.map(([what, a, b, atLeast]) => {
    const value = ratio(byName, a, b);
    return { target: what, ratio: value, pass: value === null ? null : value >= atLeast };
  });
  const unclean = rows.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0);

  console.log('\nResults (latency in ms; CPU in % of one core, measured over the loaded interval;');
  console.log('ceiling: requests/s as a share of the read or write ceiling; RT and commits: PostgreSQL round trips and writing commits per request):\n');
  console.log(
    table(rows, [
      { title: 'scenario', value: (r) => r.label, left: true },
      { title: 'req/s', value: (r) => r.requestsPerSec },
      { title: 'ceiling', value: (r) => (r.ceiling ? fmtRatio(r.ratioToCeiling) || 'n/a' : '') },
      { title: 'RT/req', value: (r) => fmtPer(r.postgres?.roundTrips) },
      { title: 'commits/req', value: (r) => fmtPer(r.postgres?.commits) },
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
  console.log('\nTargets (issue 17; requests/s ratios in this run):');
  for (const t of targetResults) {
    if (t.pass !== null) console.log(`  ${t.target.padEnd(48)} ${fmtRatio(t.ratio).padStart(6)}  ${t.pass ? 'PASS' : 'FAIL'}`);
  }
  console.log('\nRatios to the bare ceilings (requests/s; in brackets the same ratio from server CPU per request):');
  for (const [name, value] of Object.entries(ratios)) {
    if (value === null) continue;
    const cpuRatio = cpuRatios[name] === null ? '' : `  (${(cpuRatios[name] * 100).toFixed(1)}%)`;
    console.log(`  ${name.padEnd(14)} ${fmtRatio(value).padStart(6)}${cpuRatio}`);
  }
  console.log('\nMilestone (issue 2):');
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
  const sandbank = targets.sandbank;
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
      poolSize,
      fromSource,
      maxWebhookEndpoints: settings.maxWebhookEndpoints,
      serverLogLevel: settings.serverLogLevel,
      serverNodeArgs: settings.serverNodeArgs,
      database: new URL(settings.databaseUrl).pathname.slice(1),
      machineBusyBeforePct: busy,
      rows: settings.rows,
    },
    filled,
    scenarios: rows,
    targets: targetResults,
    ratios,
    cpuRatios,
    milestone,
    clean: unclean.length === 0,
    disturbed: disturbed.map((r) => r.name),
  };
  fs.mkdirSync(path.dirname(settings.out), { recursive: true });
  fs.writeFileSync(settings.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nWrote ${path.relative(process.cwd(), settings.out)}`);
  return unclean.length === 0 ? 0 : 1;
}

/** After the children stopped: the events the run enqueued have no worker to take them. */
async function cleanUp() {
  if (!needSandbank()) return;
  try {
    await clearBenchQueue();
  } catch (err) {
    console.error(`bench: could not delete the queue's keys (${settings.queuePrefix}:*): ${err.message}`);
  }
}

main()
  .then(
    async (code) => {
      await stopAll();
      await cleanUp();
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
      await cleanUp();
      process.exit(interrupted ? 130 : 1);
    },
  );
