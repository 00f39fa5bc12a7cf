'use strict';
// Summarises a V8 .cpuprofile (from `node --cpu-prof`): where the time went.
//
//   node bench/cpuprofile-top.js <file.cpuprofile> [--top 30] [--since <seconds>] [--requests N]
//
// Prints self time by package/module (Prisma, pg, pino, ajv, qs, express, node internals,
// Sandbank's own files…), the top functions by self time, and inclusive time of the functions on the
// request path. --since skips the first seconds (start-up, migrations, warm-up); --requests N adds
// µs per request.
// To record one: BENCH_ONLY=get BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=bench/results/profiles" node bench/run.js

const fs = require('node:fs');
const path = require('node:path');

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !/^\d+(\.\d+)?$/.test(a));
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
if (!file) {
  console.error('usage: node bench/cpuprofile-top.js <file.cpuprofile> [--top 30] [--since <seconds>] [--requests N]');
  process.exit(2);
}
const TOP = opt('top', 30);
const SINCE_US = opt('since', 0) * 1e6;
const REQUESTS = opt('requests', 0);

const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);

const ROOT = path.resolve(__dirname, '..');

function packageOf(cf) {
  const url = cf.url || '';
  if (!url) {
    if (cf.functionName.startsWith('(')) return cf.functionName; // (garbage collector), (idle), (program)
    return '(native)';
  }
  if (url.startsWith('wasm://')) return 'wasm';
  if (url.startsWith('node:')) {
    const parts = url.slice(5).split('/');
    return `node:${parts[0] === 'internal' ? `internal/${parts[1] || ''}` : parts[0]}`.replace(/\.js$/, '');
  }
  const p = url.replace(/^file:\/\//, '');
  const nm = p.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = p.slice(nm + 13).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const rel = path.relative(ROOT, p);
  if (rel.startsWith('dist/src/generated')) return 'prisma generated client (dist/src/generated)';
  return rel.startsWith('..') ? p : rel;
}

const keyOf = (cf) => `${cf.functionName || '(anonymous)'} ${packageOf(cf)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;

// Attribute each sample's time delta to the sampled node.
const selfByNode = new Map();
let total = 0;
let elapsed = 0;
const { samples, timeDeltas } = profile;
for (let i = 0; i < samples.length; i++) {
  const dt = timeDeltas[i] || 0;
  elapsed += dt;
  if (elapsed < SINCE_US) continue;
  selfByNode.set(samples[i], (selfByNode.get(samples[i]) || 0) + dt);
  total += dt;
}

const selfByFn = new Map();
const selfByPkg = new Map();
const inclusiveByFn = new Map();
const inclusiveByPkg = new Map();
for (const [id, dt] of selfByNode) {
  const cf = nodes.get(id).callFrame;
  const k = keyOf(cf);
  selfByFn.set(k, (selfByFn.get(k) || 0) + dt);
  const pkg = packageOf(cf);
  selfByPkg.set(pkg, (selfByPkg.get(pkg) || 0) + dt);
  // Inclusive: every distinct function and package on the stack gets the sample once.
  const seenFn = new Set();
  const seenPkg = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const c = nodes.get(cur).callFrame;
    const fk = keyOf(c);
    if (!seenFn.has(fk)) {
      seenFn.add(fk);
      inclusiveByFn.set(fk, (inclusiveByFn.get(fk) || 0) + dt);
    }
    const pk = packageOf(c);
    if (!seenPkg.has(pk)) {
      seenPkg.add(pk);
      inclusiveByPkg.set(pk, (inclusiveByPkg.get(pk) || 0) + dt);
    }
  }
}

const idle = selfByPkg.get('(idle)') || 0;
const busy = total - idle;
const ms = (us) => (us / 1000).toFixed(0).padStart(7);
const pctBusy = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
const perReq = (us) => (REQUESTS > 0 ? `${(us / REQUESTS).toFixed(1).padStart(7)} µs/req` : '');

function print(title, map, n) {
  console.log(`\n${title}`);
  const rows = [...map].filter(([k]) => !k.startsWith('(idle)') && !k.startsWith('(root)')).sort((a, b) => b[1] - a[1]).slice(0, n);
  for (const [k, v] of rows) console.log(`  ${ms(v)} ms ${pctBusy(v)} ${perReq(v)}  ${k}`);
}

console.log(`${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled${SINCE_US ? ` (after the first ${SINCE_US / 1e6} s)` : ''}, ` +
  `${(busy / 1e6).toFixed(1)} s busy (${((busy / total) * 100).toFixed(0)}% of the main thread), ${(idle / 1e6).toFixed(1)} s idle`);
console.log('Percentages are of busy main-thread time.');
print('Self time by package / module:', selfByPkg, 25);
print(`Top ${TOP} functions by self time:`, selfByFn, TOP);
print('Inclusive time by package (a package counts once per sample, nested calls included):', inclusiveByPkg, 25);
const interesting = /runOperation|authenticate|readParams|parseForm|readBody|validate|coerce|claim|complete|fingerprintOf|findOwned|createWebhookEndpoint|retrieveWebhookEndpoint|listWebhookEndpoints|paginate|serialize|accessLog|requestIdentity|newRequestId|randomBase62|hashKey|_request|\$queryRaw|\$executeRaw|findFirst|findUnique|findMany|handle |next |Layer|matchLayer|query |stringify|parse /;
print('Inclusive time of request-path functions:', new Map([...inclusiveByFn].filter(([k]) => interesting.test(k))), TOP);
