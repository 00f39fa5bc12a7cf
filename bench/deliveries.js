'use strict';
// Webhook delivery benchmark: `npm run bench:deliveries` (builds, then runs this file).
//
// One worker process (dist/workers/index.js) against a bench database and its own queue prefix,
// and a local receiver in this process that answers 200 at once. Two measurements:
//   burst: BENCH_EVENTS events (default 5,000) committed, then handed to the workers at once
//          (BENCH_HANDOFF, default 500, per hand-off call), fanned
//          out to 2 endpoints: signed deliveries per second from hand-off to the last arrival;
//   paced: BENCH_RATE events/s (default 100) for BENCH_PACED_SECONDS (default 10), each committed in
//          its own transaction and handed off as the API does: p50/p99 from commit to arrival.
// Every payload's signature is checked with the official SDK. Results go to
// bench/results/deliveries.json. Loads only 127.0.0.1; the worker is stopped on every way out.
// BENCH_WORKER_NODE_ARGS adds node flags to the worker (e.g. "--cpu-prof --cpu-prof-dir=…").
// Each measurement reports CPU in % of one core: the worker, PostgreSQL, Redis, this process (the
// receiver, which checks every signature, and the event writer) and every other program ("other":
// the machine is shared, and above 25% the figures are disturbed).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { clearBenchQueue, resetBenchDatabase } = require('./database');
const { cpuSnapshot, cpuPercent, idleCheck, postgresOf } = require('./cpu');
const Stripe = require('stripe');

const ROOT = path.resolve(__dirname, '..');
const dist = (p) => require(path.join(ROOT, 'dist', p));
const { loadConfig } = dist('src/config.js');
const { openRuntime } = dist('src/runtime.js');
const { emit, automaticCause } = dist('src/events/emit.js');
const { handOffEvents } = dist('src/events/jobs.js');
const { createLogger } = dist('src/lib/logger.js');
const { Encryption } = dist('src/lib/encryption.js');
const { randomBase62 } = dist('src/lib/ids.js');

const int = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const EVENTS = int('BENCH_EVENTS', 5000);
const RATE = int('BENCH_RATE', 100);
const PACED_SECONDS = int('BENCH_PACED_SECONDS', 10);
// Events per hand-off call in the burst. 500 is the reconciler's way (a call hands off many, which
// share fan-out jobs); 1 is the API's, one request's event per call (32 calls at once).
const HANDOFF = int('BENCH_HANDOFF', 500);
const DATABASE_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/sandbank_bench_deliveries';
if (!/bench/.test(new URL(DATABASE_URL).pathname)) throw new Error('BENCH_DATABASE_URL must name a database containing "bench" (it is dropped)');

const webhooks = new Stripe('sk_test_bench').webhooks;
/** Processes counted besides the worker and this one: Redis is shared, so others' use of it counts too. */
const CPU_NAMES = [postgresOf(new URL(DATABASE_URL).pathname.slice(1)), 'redis-server'];
/** Other programs' CPU (% of a core) above which a measurement is flagged as disturbed. */
const DISTURBED_PCT = 25;
const cpuTable = (c) => ({ worker: c.worker, postgres: c.postgres, redis: c['redis-server'], bench: c.self, other: c.other, machine: c.machine });
/** CPU time per delivery, in µs: steadier than deliveries/s on a shared machine (others slow a run, not its work). */
const cpuPerDelivery = (c, deliveries) => {
  const us = (pct) => (pct === null || pct === undefined ? null : Math.round(((pct / 100) * c.seconds * 1e6) / deliveries));
  const parts = { worker: us(c.worker), postgres: us(c.postgres), redis: us(c['redis-server']), bench: us(c.self) };
  return { ...parts, total: Object.values(parts).reduce((a, b) => a + (b ?? 0), 0) };
};
let worker;
process.on('exit', () => worker && worker.kill('SIGKILL'));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const now = () => performance.now();
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** The receiver: records when each (event, endpoint) arrives; checks signatures; answers 200 at once. */
function startReceiver(secrets) {
  const arrivals = new Map(); // `${path} ${eventId}` → ms
  let badSignatures = 0;
  let duplicates = 0;
  let onArrival = () => undefined;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const event = webhooks.constructEvent(body, req.headers['stripe-signature'], secrets[req.url]);
        const key = `${req.url} ${event.id}`;
        if (arrivals.has(key)) duplicates++;
        else arrivals.set(key, at);
      } catch {
        badSignatures++;
      }
      onArrival();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: (p) => `http://127.0.0.1:${server.address().port}${p}`,
        arrivals,
        stats: () => ({ badSignatures, duplicates }),
        waitFor: (count, timeoutMs) =>
          new Promise((ok, fail) => {
            if (arrivals.size >= count) return ok();
            const timer = setTimeout(() => fail(new Error(`only ${arrivals.size} of ${count} deliveries arrived in ${timeoutMs} ms`)), timeoutMs);
            onArrival = () => {
              if (arrivals.size >= count) {
                clearTimeout(timer);
                onArrival = () => undefined;
                ok();
              }
            };
          }),
        close: () => new Promise((r) => server.close(r)),
      }),
    ),
  );
}

async function main() {
  const busyBefore = await idleCheck();
  await resetBenchDatabase(DATABASE_URL);
  const queuePrefix = `benchdeliveries${randomBase62(6)}`;
  // The bench process and its worker share a key file (secrets at rest), in a folder of their own.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbank-bench-'));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({ ...process.env, DATABASE_URL, QUEUE_PREFIX: queuePrefix, LOG_LEVEL: 'warn', DATA_DIR: dataDir, WEBHOOK_LOOPBACK_ONLY: 'true' });
  const runtime = openRuntime(config, { logger: createLogger('warn') });
  const { prisma } = runtime;

  const accountId = `acct_${randomBase62(16)}`;
  await prisma.account.create({ data: { id: accountId, created: Math.floor(Date.now() / 1000), defaultApiVersion: '2026-08-26.dahlia' } });
  const secrets = { '/a': `whsec_${randomBase62(32)}`, '/b': `whsec_${randomBase62(32)}` };
  const receiver = await startReceiver(secrets);
  for (const [p, secret] of Object.entries(secrets)) {
    // Stored as the API stores it: sealed, under the key its key_id names.
    const sealed = await runtime.encryption.seal(secret);
    await prisma.webhookEndpoint.create({
      data: {
        id: `we_${randomBase62(24)}`,
        accountId,
        created: Math.floor(Date.now() / 1000),
        url: receiver.url(p),
        enabledEvents: ['*'],
        status: 'enabled',
        secret: sealed,
        keyId: Encryption.keyIdOf(sealed),
      },
    });
  }

  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS || '').split(/\s+/).filter(Boolean);
  worker = spawn(process.execPath, [...nodeArgs, '-r', path.join(__dirname, 'watchdog.js'), path.join(ROOT, 'dist/workers/index.js')], {
    // WEBHOOK_LOOPBACK_ONLY: the worker delivers to the local receiver and may reach nothing else.
    env: { ...process.env, DATABASE_URL, QUEUE_PREFIX: queuePrefix, LOG_LEVEL: 'warn', RECONCILE_INTERVAL_MS: '600000', WEBHOOK_LOOPBACK_ONLY: 'true', DATA_DIR: dataDir },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });

  const options = (created) => ({ accountId, apiVersion: '2026-08-26.dahlia', created, cause: automaticCause });
  const object = (i) => ({ id: accountId, object: 'account', metadata: { i: String(i) } });
  const emitOne = async (i) => {
    const id = await prisma.$transaction((tx) => emit(tx, 'account.updated', object(i), options(Math.floor(Date.now() / 1000))));
    return { id, committedAt: now() };
  };

  // Warm-up: the worker is up once these arrive.
  const warm = [];
  for (let i = 0; i < 50; i++) warm.push((await emitOne(i)).id);
  await handOffEvents(runtime.queues, warm);
  await receiver.waitFor(100, 60_000);
  receiver.arrivals.clear();

  // Burst: commit every event first, then hand them all off at once.
  process.stdout.write(`burst: committing ${EVENTS} events… `);
  const ids = [];
  for (let offset = 0; offset < EVENTS; offset += 500) {
    const batch = await prisma.$transaction(async (tx) => {
      const out = [];
      for (let i = offset; i < Math.min(EVENTS, offset + 500); i++) out.push(await emit(tx, 'account.updated', object(i), options(Math.floor(Date.now() / 1000))));
      return out;
    }, { timeout: 60_000 });
    ids.push(...batch);
  }
  process.stdout.write('handing off… ');
  const cpuBefore = cpuSnapshot({ worker: worker.pid }, CPU_NAMES);
  const handedOffAt = now();
  const calls = [];
  for (let i = 0; i < ids.length; i += HANDOFF) calls.push(ids.slice(i, i + HANDOFF));
  for (let i = 0; i < calls.length; i += 32) await Promise.all(calls.slice(i, i + 32).map((batch) => handOffEvents(runtime.queues, batch)));
  await receiver.waitFor(EVENTS * 2, 300_000);
  const burstCpu = cpuPercent(cpuBefore, cpuSnapshot({ worker: worker.pid }, CPU_NAMES));
  const burstTimes = [...receiver.arrivals.values()];
  const burstSeconds = (Math.max(...burstTimes) - handedOffAt) / 1000;
  const burstLatencies = burstTimes.map((t) => t - handedOffAt).sort((a, b) => a - b);
  console.log('done');
  receiver.arrivals.clear();

  // Paced: each event committed on its own and handed off as the API does after its transaction.
  process.stdout.write(`paced: ${RATE} events/s for ${PACED_SECONDS} s… `);
  const committed = new Map();
  const total = RATE * PACED_SECONDS;
  const pacedCpuBefore = cpuSnapshot({ worker: worker.pid }, CPU_NAMES);
  const started = now();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      emitOne(i).then(async ({ id, committedAt }) => {
        committed.set(id, committedAt);
        await handOffEvents(runtime.queues, [id]);
      }),
    );
  }
  await Promise.all(pending);
  await receiver.waitFor(total * 2, 120_000);
  const pacedCpu = cpuPercent(pacedCpuBefore, cpuSnapshot({ worker: worker.pid }, CPU_NAMES));
  const pacedLatencies = [...receiver.arrivals.entries()].map(([key, at]) => at - committed.get(key.split(' ')[1])).sort((a, b) => a - b);
  console.log('done');

  const results = {
    date: new Date().toISOString(),
    machine: `${require('node:os').cpus().length} cores, node ${process.version}`,
    busy_before_percent: busyBefore,
    burst: {
      events: EVENTS,
      events_per_handoff: HANDOFF,
      endpoints: 2,
      deliveries: burstTimes.length,
      seconds: +burstSeconds.toFixed(2),
      deliveries_per_second: Math.round(burstTimes.length / burstSeconds),
      handoff_to_arrival_ms: { p50: +percentile(burstLatencies, 50).toFixed(1), p99: +percentile(burstLatencies, 99).toFixed(1) },
      cpu_percent: cpuTable(burstCpu),
      cpu_us_per_delivery: cpuPerDelivery(burstCpu, burstTimes.length),
    },
    paced: {
      events_per_second: RATE,
      deliveries: pacedLatencies.length,
      commit_to_arrival_ms: { p50: +percentile(pacedLatencies, 50).toFixed(1), p99: +percentile(pacedLatencies, 99).toFixed(1) },
      cpu_percent: cpuTable(pacedCpu),
      cpu_us_per_delivery: cpuPerDelivery(pacedCpu, pacedLatencies.length),
    },
    receiver: receiver.stats(),
  };
  console.log(JSON.stringify(results, null, 2));
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'deliveries.json'), JSON.stringify(results, null, 2) + '\n');
  for (const [name, c] of [['burst', burstCpu], ['paced', pacedCpu]]) {
    if (c.other !== null && c.other > DISTURBED_PCT) console.error(`!!! ${name}: other programs used ${c.other}% of a core: the figures are disturbed`);
  }
  if (results.receiver.badSignatures > 0) console.error(`!!! ${results.receiver.badSignatures} payloads failed signature verification`);

  worker.kill('SIGTERM');
  await new Promise((r) => worker.once('exit', r));
  worker = undefined;
  await receiver.close();
  await runtime.close();
  // The worker's queues and schedules under this run's prefix (jobs are removed when done; these stay).
  await clearBenchQueue(config.redisUrl, queuePrefix);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
