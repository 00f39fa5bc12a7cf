'use strict';
// The ceilings bench/run.js compares Sandbank with, each run as its own child process:
//   node bench/ceiling.js express   a bare Express app: fixed JSON on GET /v1/things/:id (the framework's ceiling)
//   node bench/ceiling.js node      a bare node:http server: the same fixed JSON (the runtime's ceiling)
//   node bench/ceiling.js read      Express + one `pg` SELECT by primary key per request (the read ceiling)
//   node bench/ceiling.js write     Express + one single-statement INSERT, committed, per request (the write ceiling)
//   node bench/ceiling.js mock      stripe-stateful-mock (npm): a peer, the in-memory Express 4 Stripe mock
// Each listens on 127.0.0.1 on a free port and reports the port to its parent over IPC. read and
// write use DATABASE_URL with a pool of DATABASE_POOL_SIZE, as Sandbank does, and a table of their
// own (schema bench_ceiling) shaped and indexed like webhook_endpoints.

const http = require('node:http');

// About the size and shape of a serialised webhook endpoint, so both sides send similar bytes.
const BODY = {
  id: 'we_1BenchCeilingFixedBody00',
  object: 'webhook_endpoint',
  api_version: null,
  application: null,
  created: 1767225600,
  description: null,
  enabled_events: ['charge.dispute.created'],
  livemode: false,
  metadata: {},
  status: 'enabled',
  url: 'http://127.0.0.1:0/bench/hooks',
};

function bareExpress() {
  const express = require('express');
  const app = express();
  // Same app settings as Sandbank (src/app.ts), so the ceiling is the framework, not its defaults.
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/v1/things/:id', (_req, res) => {
    res.json(BODY);
  });
  return http.createServer(app);
}

function bareNode() {
  return http.createServer((_req, res) => {
    const body = JSON.stringify(BODY);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
}

/** The row the read ceiling loads on every request. */
const READ_ID = 'we_1BenchCeilingReadRow000';
const ACCOUNT_ID = 'acct_1BenchCeiling000';

const SCHEMA = `
  CREATE SCHEMA IF NOT EXISTS bench_ceiling;
  CREATE TABLE IF NOT EXISTS bench_ceiling.things (
    id text PRIMARY KEY,
    seq bigserial UNIQUE,
    account_id text NOT NULL,
    created integer NOT NULL,
    url text NOT NULL,
    enabled_events text[] NOT NULL,
    api_version text,
    description text,
    metadata jsonb NOT NULL DEFAULT '{}',
    status text NOT NULL,
    secret text NOT NULL
  );
  CREATE INDEX IF NOT EXISTS things_account_id_seq_idx ON bench_ceiling.things (account_id, seq);`;

const COLUMNS = 'id, account_id, created, url, enabled_events, api_version, description, metadata, status, secret';

const serialize = (row) => ({
  id: row.id,
  object: 'webhook_endpoint',
  api_version: row.api_version,
  application: null,
  created: row.created,
  description: row.description,
  enabled_events: row.enabled_events,
  livemode: false,
  metadata: row.metadata,
  status: row.status,
  url: row.url,
});

async function databaseCeiling(kind) {
  const express = require('express');
  const { Pool } = require('pg');
  const max = Number(process.env.DATABASE_POOL_SIZE);
  if (!process.env.DATABASE_URL || !Number.isInteger(max) || max < 1) throw new Error('read and write need DATABASE_URL and DATABASE_POOL_SIZE');
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max });
  pool.on('error', () => undefined); // a dropped idle connection is replaced; the load shows any failure
  // Two ceilings may start at once: serialise their CREATE … IF NOT EXISTS, which can race.
  const setup = await pool.connect();
  try {
    await setup.query('SELECT pg_advisory_lock(1701)');
    await setup.query(SCHEMA);
    await setup.query(
      `INSERT INTO bench_ceiling.things (${COLUMNS}) VALUES ($1, $2, 1767225600, 'http://127.0.0.1:0/bench/hooks', '{charge.dispute.created}', NULL, NULL, '{}', 'enabled', 'whsec_x')
       ON CONFLICT (id) DO NOTHING`,
      [READ_ID, ACCOUNT_ID],
    );
    await setup.query('SELECT pg_advisory_unlock(1701)');
  } finally {
    setup.release();
  }

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  if (kind === 'read') {
    app.get('/v1/things/:id', async (req, res) => {
      // Named: planned once per connection, as a tuned hot path would be.
      const { rows } = await pool.query({ name: 'ceiling_read', text: `SELECT ${COLUMNS} FROM bench_ceiling.things WHERE id = $1`, values: [req.params.id] });
      if (rows.length === 0) res.status(404).json({ error: { message: 'No such thing' } });
      else res.json(serialize(rows[0]));
    });
  } else {
    // The body is parsed (the least any create does) and the answer built from what was stored.
    const idPrefix = `we_${process.pid.toString(36)}${Date.now().toString(36)}`;
    let next = 0;
    app.post('/v1/things', express.urlencoded({ extended: false }), async (req, res) => {
      const row = {
        id: `${idPrefix}${(++next).toString(36)}`,
        account_id: ACCOUNT_ID,
        created: Math.floor(Date.now() / 1000),
        url: String(req.body.url ?? ''),
        enabled_events: [String(req.body['enabled_events[0]'] ?? '*')],
        api_version: null,
        description: null,
        metadata: {},
        status: 'enabled',
        secret: 'whsec_x',
      };
      await pool.query({
        name: 'ceiling_write',
        text: `INSERT INTO bench_ceiling.things (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        values: [row.id, row.account_id, row.created, row.url, row.enabled_events, row.api_version, row.description, row.metadata, row.status, row.secret],
      });
      res.json(serialize(row));
    });
  }
  return http.createServer(app);
}

/** stripe-stateful-mock's own app (its CLI listens on every interface; this one on 127.0.0.1 only). */
function statefulMock() {
  require('loglevel').setLevel('warn');
  const { createExpressApp } = require('stripe-stateful-mock');
  return http.createServer(createExpressApp());
}

let server = null;

async function main() {
  const kind = process.argv[2];
  if (kind === 'express') server = bareExpress();
  else if (kind === 'node') server = bareNode();
  else if (kind === 'read' || kind === 'write') server = await databaseCeiling(kind);
  else if (kind === 'mock') server = statefulMock();
  else {
    console.error('usage: node bench/ceiling.js express|node|read|write|mock');
    process.exit(2);
  }
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    if (process.send) process.send({ port });
    else console.log(`listening on http://127.0.0.1:${port}`);
  });
}

const stop = () => {
  if (!server) process.exit(0);
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
};
main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The parent going away (even by SIGKILL) must not leave this process behind.
process.on('disconnect', stop);
