'use strict';
// Memory under a long mixed load: `npm run bench:soak` (builds, then runs this file).
//
// The API (dist/src/server.js, one process) and the worker (dist/workers/index.js) against a bench
// database of their own, two webhook endpoints on a local receiver (127.0.0.1, answers 200 at
// once), and a paced mix for BENCH_SOAK_SECONDS (default 600) at BENCH_SOAK_RATE requests/s
// (default 200): customer creates (each an event, delivered twice), updates (events with
// previous_attributes), retrieves, lists and event lists. Each process's RSS is read from /proc
// every 5 s; readings after BENCH_SOAK_WARMUP seconds (default 60) are measured. Prints and writes
// bench/results/soak.json: the median RSS of the first and of the last third of them, the peak,
// and whether each stayed flat (the last within 10% or 20 MB of the first). Loads only 127.0.0.1.

const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { clearBenchQueue, resetBenchDatabase } = require('./database');

const ROOT = path.resolve(__dirname, '..');
const dist = (p) => require(path.join(ROOT, 'dist', p));

const int = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const SECONDS = int('BENCH_SOAK_SECONDS', 600);
const WARMUP = Math.min(int('BENCH_SOAK_WARMUP', 60), Math.floor(SECONDS / 2));
const RATE = int('BENCH_SOAK_RATE', 200);
const SAMPLE_MS = 5_000;
const DATABASE_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/sandbank_bench_soak';
if (!/bench/.test(new URL(DATABASE_URL).pathname)) throw new Error('BENCH_DATABASE_URL must name a database containing "bench" (it is dropped)');
const HOST = '127.0.0.1';
const KEY = `sk_test_soak${crypto.randomBytes(12).toString('hex')}`;

const children = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

/** Starts a process; resolves once `ready()` is true (polled), rejects if it exits first. */
function start(name, entry, env, ready) {
  const child = spawn(process.execPath, [path.join(ROOT, entry)], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  const onData = (chunk) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${output}`)));
    const poll = async () => ((await ready(() => output).catch(() => false)) ? resolve(child) : setTimeout(poll, 200));
    void poll();
  });
}

/** Resident set size of a process, in MB, from /proc. */
function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

async function call(base, method, p, body) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: body && new URLSearchParams(body).toString(),
  });
  if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function main() {
  await resetBenchDatabase(DATABASE_URL);
  let delivered = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.end('ok');
    });
  });
  await new Promise((resolve) => receiver.listen(0, HOST, resolve));
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const env = {
    ...process.env,
    DATABASE_URL,
    PORT: String(port),
    PUBLIC_URL: base,
    API_PROCESSES: '1',
    LOG_LEVEL: 'warn',
    AUTH_MODE: 'open',
    QUEUE_PREFIX: `sandbankbenchsoak${crypto.randomBytes(4).toString('hex')}`,
    WORKER_METRICS_PORT: '0',
    WEBHOOK_LOOPBACK_ONLY: 'true',
    SECRETS_ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64'),
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'sandbank-soak-')),
  };
  // The API logs at warn (a line per request would be the load's cost); the worker at info, to say it started.
  const api = await start('api', 'dist/src/server.js', env, async () => (await fetch(`${base}/readyz`)).status === 200);
  const worker = await start('worker', 'dist/workers/index.js', { ...env, LOG_LEVEL: 'info' }, async (output) => output().includes('workers started'));

  const receiverUrl = `http://${HOST}:${receiver.address().port}/hook`;
  for (let i = 0; i < 2; i++) await call(base, 'POST', '/v1/webhook_endpoints', { url: receiverUrl, 'enabled_events[]': '*' });
  const customer = (await call(base, 'POST', '/v1/customers', { name: 'Soak' })).id;
  const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/x-www-form-urlencoded' };
  let n = 0;
  const requests = [
    { method: 'POST', path: '/v1/customers', headers: auth, setupRequest: (r) => ({ ...r, body: `name=soak${n++}&metadata[n]=${n}` }) },
    { method: 'POST', path: `/v1/customers/${customer}`, headers: auth, setupRequest: (r) => ({ ...r, body: `metadata[n]=${n++}` }) },
    { method: 'GET', path: `/v1/customers/${customer}`, headers: auth },
    { method: 'GET', path: '/v1/customers?limit=10', headers: auth },
    { method: 'GET', path: '/v1/events?limit=10', headers: auth },
  ];

  const samples = [];
  const sample = () => samples.push({ at: (Date.now() - started) / 1000, api: rssMb(api.pid), worker: rssMb(worker.pid), delivered });
  const started = Date.now();
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  console.log(`soak: ${SECONDS} s at ${RATE} requests/s (baseline after ${WARMUP} s), API pid ${api.pid}, worker pid ${worker.pid}`);
  const result = await autocannon({ url: base, connections: 16, overallRate: RATE, duration: SECONDS, requests });
  clearInterval(timer);
  sample();

  // RSS saws up and down with garbage collection: compare medians of the first and last thirds
  // after the warm-up, not two single readings.
  const measured = samples.filter((s) => s.at >= WARMUP);
  const third = Math.max(1, Math.floor(measured.length / 3));
  const median = (list, who) => list.map((s) => s[who]).sort((x, y) => x - y)[Math.floor(list.length / 2)];
  const first = measured.slice(0, third);
  const last = measured.slice(-third);
  const baseline = { at: first[0].at, api: median(first, 'api'), worker: median(first, 'worker') };
  const end = { ...samples[samples.length - 1], api: median(last, 'api'), worker: median(last, 'worker') };
  const flat = (b, e) => e - b <= Math.max(0.1 * b, 20);
  const report = {
    seconds: SECONDS,
    rate: RATE,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    delivered: end.delivered,
    api: { baselineMb: baseline.api, endMb: end.api, peakMb: Math.max(...samples.map((s) => s.api)), flat: flat(baseline.api, end.api) },
    worker: { baselineMb: baseline.worker, endMb: end.worker, peakMb: Math.max(...samples.map((s) => s.worker)), flat: flat(baseline.worker, end.worker) },
    samples,
  };
  for (const who of ['api', 'worker']) {
    const r = report[who];
    console.log(`${who.padEnd(6)} RSS median ${r.baselineMb.toFixed(1)} MB in the first third → ${r.endMb.toFixed(1)} MB in the last (peak ${r.peakMb.toFixed(1)} MB): ${r.flat ? 'flat' : 'GREW'}`);
  }
  console.log(`${report.requests} requests (${report.non2xx} non-2xx, ${report.errors} errors), ${report.delivered} deliveries`);
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'soak.json'), JSON.stringify(report, null, 2));
  receiver.close();
  for (const child of children) child.kill('SIGKILL');
  await clearBenchQueue(process.env.REDIS_URL || 'redis://127.0.0.1:6379', env.QUEUE_PREFIX);
  process.exit(report.api.flat && report.worker.flat && report.non2xx === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
