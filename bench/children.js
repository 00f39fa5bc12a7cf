'use strict';
// Child processes of the benchmarks (bench/run.js, bench/clock.js): each one is tracked and stopped
// on the way out, whatever the way out is; free ports; waiting until a child answers; and the
// environment and command line of a Sandbank process (the API or the worker) against a bench database.

const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const HOST = '127.0.0.1';

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

/** Whether nothing listens on this port of HOST. */
function portIsFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

/** Resolves once `url` answers 2xx; rejects when the child exits or `timeoutMs` passes. */
async function waitUntilAnswers(entry, url, timeoutMs, headers = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (entry.exited) throw new Error(describeExit(entry));
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
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

/**
 * The environment of a Sandbank process (API or worker) against a bench database: production mode,
 * open auth, loopback-only deliveries, a secrets key and data directory of its own. `settings`:
 * { databaseUrl, poolSize, logLevel, queuePrefix, maxWebhookEndpoints }; `port` the API's.
 */
function sandbankEnv(settings, port) {
  return {
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
    DATABASE_POOL_SIZE: String(settings.poolSize),
    LOG_LEVEL: settings.logLevel,
    AUTH_MODE: 'open',
    QUEUE_PREFIX: settings.queuePrefix,
    // The POST scenario creates one endpoint per request; the public limit (16) would turn it into
    // an error benchmark after 16 requests.
    MAX_WEBHOOK_ENDPOINTS: String(settings.maxWebhookEndpoints),
    SHUTDOWN_TIMEOUT_MS: '3000',
    // Deliveries may only reach this machine.
    WEBHOOK_LOOPBACK_ONLY: 'true',
  };
}

/**
 * The node arguments that run Sandbank's API (`server`) or worker (`worker`), from dist/ or (fromSource) src/ through swc;
 * `root` another checkout's (bench/compare.js runs a build of another commit).
 */
function sandbankEntryPoint(which, fromSource, root = ROOT) {
  const file = which === 'worker' ? ['workers', 'index'] : ['src', 'server'];
  return fromSource
    ? ['-r', path.join(ROOT, 'scripts', 'swc-register.js'), path.join(root, ...file) + '.ts']
    : [path.join(root, 'dist', ...file) + '.js'];
}

module.exports = { HOST, children, track, stopChild, stopAll, freePort, portIsFree, describeExit, waitUntilAnswers, sandbankEnv, sandbankEntryPoint };
