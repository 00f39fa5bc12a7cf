'use strict';
// `npm run bench:clock`: a test clock with BENCH_SUBSCRIPTIONS (1,000) monthly card subscriptions
// advances one month; measures the time from the advance request until the clock is `ready` again
// and every renewal invoice is paid (both polled through the API), with the events written and the
// CPU of the API, the worker and PostgreSQL. Issue 26's target: under 30 s for 1,000. See bench/README.md.
//
// Options (a flag wins over its variable):
//   --subscriptions=1000  BENCH_SUBSCRIPTIONS   customers on the clock, each with pm_card_visa and a monthly subscription
//   --source              BENCH_SOURCE=1        the API and the worker from src/ through swc (no build needed)
//   --out=FILE            BENCH_OUT             the JSON report (default bench/results/clock.json)
//   --timeout=600         BENCH_CLOCK_TIMEOUT   seconds to wait for the advance before giving up
//   BENCH_DATABASE_URL, BENCH_QUEUE_PREFIX, BENCH_SERVER_NODE_ARGS as bench/run.js;
//   BENCH_WORKER_NODE_ARGS: extra node flags for the worker (e.g. "--cpu-prof --cpu-prof-dir=bench/results/profiles").

const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { clearBenchQueue } = require('./database');
const cpuStats = require('./cpu');
const { HOST, track, stopAll, freePort, describeExit, waitUntilAnswers, sandbankEnv, sandbankEntryPoint } = require('./children');

const ROOT = path.resolve(__dirname, '..');
const FLAGS = { subscriptions: 'BENCH_SUBSCRIPTIONS', source: 'BENCH_SOURCE', out: 'BENCH_OUT', timeout: 'BENCH_CLOCK_TIMEOUT' };
for (const arg of process.argv.slice(2)) {
  const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
  if (!m || !FLAGS[m[1]]) throw new Error(`unknown option "${arg}" (known: ${Object.keys(FLAGS).map((f) => `--${f}`).join(', ')})`);
  process.env[FLAGS[m[1]]] = m[2] ?? '1';
}
const positive = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return Number(raw);
};
const settings = {
  subscriptions: positive('BENCH_SUBSCRIPTIONS', 1000),
  timeoutSec: positive('BENCH_CLOCK_TIMEOUT', 600),
  fromSource: process.env.BENCH_SOURCE === '1',
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/sandbank_bench',
  queuePrefix: process.env.BENCH_QUEUE_PREFIX || 'sandbankbench',
  redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  out: path.resolve(process.env.BENCH_OUT || path.join(__dirname, 'results', 'clock.json')),
  serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS || '').split(/\s+/).filter(Boolean),
  workerNodeArgs: (process.env.BENCH_WORKER_NODE_ARGS || '').split(/\s+/).filter(Boolean),
};
const TARGET_SECONDS = 30;
/** Requests in flight while preparing the customers and subscriptions. */
const PREPARE_CONCURRENCY = 8;
const database = new URL(settings.databaseUrl).pathname.slice(1);

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\nbench: ${signal} received, stopping every child process…\n`);
    stopAll().finally(() => process.exit(130));
  });
}

async function withClient(url, fn) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops and recreates the bench database (only one whose name says "bench"); the API migrates it at start. */
async function resetDatabase() {
  if (!/bench/i.test(database)) throw new Error(`${settings.databaseUrl}: a bench database's name must contain "bench" (it is dropped)`);
  const admin = new URL(settings.databaseUrl);
  admin.pathname = '/postgres';
  await withClient(admin.toString(), async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${database}"`);
  });
}

function start(which, env, nodeArgs) {
  // bench/pgcount.js counts the worker's PostgreSQL round trips and commits (bench/run.js does the API's).
  const preloads = ['-r', path.join(__dirname, 'watchdog.js'), ...(which === 'worker' ? ['-r', path.join(__dirname, 'pgcount.js')] : [])];
  const args = [...nodeArgs, ...preloads, ...sandbankEntryPoint(which, settings.fromSource)];
  return track(which === 'worker' ? 'sandbank worker' : 'sandbank', spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env }));
}

/** Runs `fn` over `items`, `limit` at a time. */
async function pool(items, limit, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        if (interrupted) throw new Error('interrupted');
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

/** One month later in UTC, as a monthly subscription's period ends (the day clamped to the month's last). */
function addMonth(seconds) {
  const d = new Date(seconds * 1000);
  const day = d.getUTCDate();
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()));
  const last = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
  next.setUTCDate(Math.min(day, last));
  return Math.floor(next.getTime() / 1000);
}

async function main() {
  const cpus = os.cpus();
  console.log(`Sandbank test clock benchmark — ${new Date().toISOString()}`);
  console.log(`  machine: ${cpus.length} × ${cpus[0]?.model?.trim() ?? 'unknown CPU'}, node ${process.version}; ${settings.subscriptions} subscriptions${settings.fromSource ? '; from src/ (--source)' : ''}`);
  if (!settings.fromSource && !fs.existsSync(path.join(ROOT, 'dist', 'workers', 'index.js'))) throw new Error('dist/ is missing: run `npm run bench:clock` (it builds first) or pass --source');
  const busy = await cpuStats.idleCheck();
  if (busy !== null) console.log(`  machine busy before the run: ${busy}% of one core${busy > 25 ? '  <-- OTHER PROGRAMS ARE BUSY: the numbers will be lower and noisier' : ''}`);
  await resetDatabase();
  await clearBenchQueue(settings.redisUrl, settings.queuePrefix);
  console.log(`  recreated database ${database}; queue prefix ${settings.queuePrefix}`);

  const port = await freePort();
  const env = sandbankEnv({ databaseUrl: settings.databaseUrl, poolSize: 10, logLevel: 'warn', queuePrefix: settings.queuePrefix, maxWebhookEndpoints: 16 }, port);
  delete env.DATABASE_POOL_SIZE; // each process its own default (src/config.ts)
  const api = start('server', { ...env, API_PROCESSES: '1' }, settings.serverNodeArgs);
  const base = `http://${HOST}:${port}`;
  await waitUntilAnswers(api, `${base}/readyz`, 90_000);
  // Once the API has migrated the database; the same secrets key, so both read what the other sealed.
  const counterPort = await freePort();
  const worker = start('worker', { ...env, WORKER_METRICS_PORT: '0', BENCH_COUNTER_PORT: String(counterPort) }, settings.workerNodeArgs);
  const counters = async () => (await fetch(`http://${HOST}:${counterPort}/`, { signal: AbortSignal.timeout(5000) })).json();

  const key = `sk_test_bench${crypto.randomBytes(12).toString('hex')}`;
  const call = async (method, pathname, form) => {
    const res = await fetch(`${base}${pathname}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': `bench-clock-${crypto.randomUUID()}` } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`${method} ${pathname} answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  };

  const t0 = Date.now();
  const frozen = Math.floor(Date.now() / 1000);
  const clock = await call('POST', '/v1/test_helpers/test_clocks', { frozen_time: String(frozen), name: 'bench clock' });
  const product = await call('POST', '/v1/products', { name: 'Bench plan' });
  const price = await call('POST', '/v1/prices', { product: product.id, currency: 'usd', unit_amount: '1500', 'recurring[interval]': 'month' });
  const ids = Array.from({ length: settings.subscriptions }, (_, i) => i);
  await pool(ids, PREPARE_CONCURRENCY, async (i) => {
    const customer = await call('POST', '/v1/customers', {
      name: `Clock customer ${i}`,
      test_clock: clock.id,
      payment_method: 'pm_card_visa',
      'invoice_settings[default_payment_method]': 'pm_card_visa',
    });
    const sub = await call('POST', '/v1/subscriptions', { customer: customer.id, 'items[0][price]': price.id });
    if (sub.status !== 'active') throw new Error(`subscription ${sub.id} is ${sub.status}, not active, after its first invoice`);
  });
  await waitUntilWorkerIdle(worker);
  console.log(`  prepared in ${((Date.now() - t0) / 1000).toFixed(1)} s: test clock ${clock.id}, ${settings.subscriptions} customers with pm_card_visa, each with a monthly subscription`);

  const target = addMonth(frozen);
  const eventsBefore = await countEvents();
  const countersBefore = await counters();
  const cpuBefore = cpuStats.cpuSnapshot({ api: api.child.pid, worker: worker.child.pid }, [cpuStats.postgresOf(database)]);
  const started = Date.now();
  await call('POST', `/v1/test_helpers/test_clocks/${clock.id}/advance`, { frozen_time: String(target) });
  let readyAt = null;
  let paid = 0;
  const deadline = started + settings.timeoutSec * 1000;
  for (;;) {
    if (api.exited) throw new Error(describeExit(api));
    if (worker.exited) throw new Error(describeExit(worker));
    if (Date.now() > deadline) throw new Error(`timed out after ${settings.timeoutSec} s: clock ${readyAt ? 'ready' : 'still advancing'}, ${paid} of ${settings.subscriptions} renewal invoices paid`);
    await new Promise((r) => setTimeout(r, 250));
    if (readyAt === null) {
      const c = await call('GET', `/v1/test_helpers/test_clocks/${clock.id}`);
      if (c.status === 'ready') readyAt = Date.now();
      else continue;
    }
    paid = await countPaidRenewals(call, frozen);
    if (paid >= settings.subscriptions) break;
  }
  const finished = Date.now();
  const cpu = cpuStats.cpuPercent(cpuBefore, cpuStats.cpuSnapshot({ api: api.child.pid, worker: worker.child.pid }, [cpuStats.postgresOf(database)]));
  const countersAfter = await counters();
  const events = await countEvents(eventsBefore.byType);
  const perRenewal = (k) => (countersAfter[k] - countersBefore[k]) / settings.subscriptions;
  const seconds = (finished - started) / 1000;
  const report = {
    date: new Date(started).toISOString(),
    machine: { cpus: cpus.length, cpuModel: cpus[0]?.model?.trim() ?? null, node: process.version },
    settings: { subscriptions: settings.subscriptions, fromSource: settings.fromSource, database, machineBusyBeforePct: busy },
    seconds,
    readySeconds: (readyAt - started) / 1000,
    invoicesPerSec: settings.subscriptions / seconds,
    renewalInvoicesPaid: paid,
    eventsWritten: events.total,
    eventsByType: events.byType,
    worker: { roundTripsPerRenewal: perRenewal('queries'), commitsPerRenewal: perRenewal('commits') },
    cpuMsPerRenewal: { worker: (cpu.worker / 100) * seconds * 1000 / settings.subscriptions, postgres: (cpu.postgres / 100) * seconds * 1000 / settings.subscriptions },
    cpuPercent: { api: cpu.api, worker: cpu.worker, postgres: cpu.postgres, other: cpu.other, machine: cpu.machine },
    targetSeconds: TARGET_SECONDS,
    pass: seconds < TARGET_SECONDS,
  };
  console.log(`\nAdvance of one month, ${settings.subscriptions} subscriptions:`);
  console.log(`  clock ready after ${report.readySeconds.toFixed(1)} s; all ${paid} renewal invoices paid after ${seconds.toFixed(1)} s (${report.invoicesPerSec.toFixed(1)} invoices/s)`);
  console.log(`  events written: ${events.total} (${Object.entries(events.byType).map(([t, n]) => `${t} ${n}`).join(', ')})`);
  console.log(`  CPU in % of one core: API ${cpu.api}%, worker ${cpu.worker}%, PostgreSQL ${cpu.postgres}%, other programs ${cpu.other}%, machine ${cpu.machine}%`);
  console.log(
    `  per renewal: worker ${report.worker.roundTripsPerRenewal.toFixed(1)} PostgreSQL round trips, ${report.worker.commitsPerRenewal.toFixed(2)} commits; ` +
      `CPU ${report.cpuMsPerRenewal.worker.toFixed(1)} ms worker, ${report.cpuMsPerRenewal.postgres.toFixed(1)} ms PostgreSQL`,
  );
  if (cpu.other !== null && cpu.other > 25) console.log('  <-- other programs competed for the cores: the time is longer than on a quiet machine');
  console.log(`  target (issue 26): under ${TARGET_SECONDS} s  ${report.pass ? 'PASS' : 'FAIL'}`);
  fs.mkdirSync(path.dirname(settings.out), { recursive: true });
  fs.writeFileSync(settings.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nWrote ${path.relative(process.cwd(), settings.out)}`);
  return 0;
}

/** The events in the bench database by type; with `before`, only the ones written since. */
async function countEvents(before = {}) {
  const rows = await withClient(settings.databaseUrl, (client) => client.query('SELECT type, count(*)::int AS n FROM events GROUP BY type ORDER BY type'));
  const byType = {};
  let total = 0;
  for (const { type, n } of rows.rows) {
    const d = n - (before[type] ?? 0);
    if (d > 0) {
      byType[type] = d;
      total += d;
    }
  }
  return { total, byType };
}

/** Paid invoices created after the clock's start (the renewals), paging through the API's list. */
async function countPaidRenewals(call, since) {
  let n = 0;
  let after = null;
  for (;;) {
    const page = await call('GET', `/v1/invoices?status=paid&created[gt]=${since}&limit=100${after ? `&starting_after=${after}` : ''}`);
    n += page.data.length;
    if (!page.has_more) return n;
    after = page.data[page.data.length - 1].id;
  }
}

/** The preparation's events are handed to the worker too: wait until its CPU falls quiet, so the measure starts clean. */
async function waitUntilWorkerIdle(worker) {
  for (let i = 0; i < 60; i++) {
    if (worker.exited) throw new Error(describeExit(worker));
    const a = cpuStats.cpuSnapshot({ worker: worker.child.pid });
    await new Promise((r) => setTimeout(r, 500));
    const c = cpuStats.cpuPercent(a, cpuStats.cpuSnapshot({ worker: worker.child.pid }));
    if (c.worker !== null && c.worker < 5) return;
  }
}

main()
  .then(
    async (code) => {
      await stopAll();
      await clearBenchQueue(settings.redisUrl, settings.queuePrefix).catch(() => 0);
      process.exit(code);
    },
    async (err) => {
      if (!interrupted) console.error(`\nbench:clock failed: ${err && err.stack ? err.stack : err}`);
      await stopAll();
      await clearBenchQueue(settings.redisUrl, settings.queuePrefix).catch(() => 0);
      process.exit(interrupted ? 130 : 1);
    },
  );
