'use strict';
// The two ceilings bench/run.js compares Sandbank with, each run as its own child process:
//   node bench/ceiling.js express   a bare Express app: fixed JSON on GET /v1/things/:id (the framework's ceiling)
//   node bench/ceiling.js node      a bare node:http server: the same fixed JSON (the runtime's ceiling)
// Each listens on 127.0.0.1 on a free port and reports the port to its parent over IPC.

const http = require('node:http');

// About the size and shape of a serialised webhook endpoint, so both sides send similar bytes.
const BODY = {
  id: 'we_1BenchCeilingFixedBody00',
  object: 'webhook_endpoint',
  api_version: null,
  application: null,
  created: 1767225600,
  description: null,
  enabled_events: ['charge.succeeded'],
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

const kind = process.argv[2];
const server = kind === 'express' ? bareExpress() : kind === 'node' ? bareNode() : undefined;
if (!server) {
  console.error('usage: node bench/ceiling.js express|node');
  process.exit(2);
}
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  if (process.send) process.send({ port });
  else console.log(`listening on http://127.0.0.1:${port}`);
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The parent going away (even by SIGKILL) must not leave this process behind.
process.on('disconnect', stop);
