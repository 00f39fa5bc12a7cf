'use strict';
// Preloaded by bench/run.js into every process it loads that talks to PostgreSQL (the Sandbank
// server and the read and write ceilings): `node -r ./bench/pgcount.js …`. It counts, in this
// process only, the HTTP requests received and what they asked of PostgreSQL, and answers the
// counters as JSON on http://127.0.0.1:$BENCH_COUNTER_PORT/. Nothing in src/ knows about it.
// In a cluster (API_PROCESSES > 1; the children inherit `-r`), API process n answers on
// $BENCH_COUNTER_PORT + n (its cluster worker id) and the primary on $BENCH_COUNTER_PORT: each
// listens exclusively, or the cluster would share one port among them all.
//
// - queries: every `pg` Client#query call, i.e. one round trip to PostgreSQL each (the pool's,
//   Prisma's adapter's and raw queries all end there);
// - commits: transactions that changed something and committed, i.e. the ones PostgreSQL flushes
//   its WAL for: a COMMIT after a BEGIN whose transaction wrote, or a writing statement run on its
//   own (autocommit). Read-only transactions are counted apart (readOnlyCommits);
// - requests: HTTP requests this process's servers received (aborted ones included, as their
//   queries are too), so per-request figures need no help from the load generator.

const http = require('node:http');
const diagnostics = require('node:diagnostics_channel');
const cluster = require('node:cluster');

const port = Number(process.env.BENCH_COUNTER_PORT) + (cluster.isWorker ? cluster.worker.id : 0);
const counters = { requests: 0, queries: 0, commits: 0, readOnlyCommits: 0, rollbacks: 0 };

const { kindOf } = require('./pgkinds');

const TX = Symbol('benchTransaction');
const pg = require('pg');
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config) {
  counters.queries++;
  const text = typeof config === 'string' ? config : config && typeof config.text === 'string' ? config.text : '';
  const kind = kindOf(text);
  const tx = this[TX];
  if (kind === 'begin') this[TX] = { wrote: false };
  else if (kind === 'commit') {
    if (tx && tx.wrote) counters.commits++;
    else counters.readOnlyCommits++;
    this[TX] = undefined;
  } else if (kind === 'rollback') {
    counters.rollbacks++;
    this[TX] = undefined;
  } else if (kind === 'write') {
    if (tx) tx.wrote = true;
    else counters.commits++;
  }
  return query.apply(this, arguments);
};

let counterServer = null;
diagnostics.subscribe('http.server.request.start', (message) => {
  if (message.server !== counterServer) counters.requests++;
});

if (Number.isInteger(port) && port > 0) {
  counterServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify(counters));
  });
  counterServer.on('error', (err) => console.error(`bench/pgcount.js: counter port ${port}: ${err.message}`));
  counterServer.listen({ port, host: '127.0.0.1', exclusive: true });
  // The counters must never keep the process alive past its own shutdown.
  counterServer.unref();
}
