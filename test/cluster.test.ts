import cluster from 'node:cluster';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { forkApiProcesses } from '../src/cluster';
import { createLogger } from '../src/lib/logger';

// The primary's supervision of its API processes, with stand-in children (tiny scripts) in place
// of the API: only when and how they listen or exit matters here.

const dir = mkdtempSync(path.join(tmpdir(), 'sandbank-cluster-'));
const script = (name: string, body: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, body);
  return file;
};
const exitsAtOnce = script('exits.js', 'process.exit(3);\n');
// Listens on a port of its own (0), then exits when told to stop, as the API does.
const listens = script('listens.js', "const s = require('node:http').createServer((q, r) => r.end('ok')).listen(0, '127.0.0.1');\nprocess.on('message', () => s.close(() => process.exit(0)));\n");

const quietLogger = () => createLogger('info', new Writable({ write: (_c, _e, done) => done() }));

test('the start fails when its first API process exits before it listens, and nothing is restarted', async () => {
  cluster.setupPrimary({ exec: exitsAtOnce, silent: true });
  await expect(forkApiProcesses(2, quietLogger())).rejects.toThrow('the first API process exited before it listened (code 3');
  // No restart is scheduled (it would fork within RESTART_DELAY_MS).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
});

test('the start resolves once the first listens; its siblings follow and all stop when asked', async () => {
  cluster.setupPrimary({ exec: listens, silent: true });
  const children = await forkApiProcesses(2, quietLogger());
  const deadline = Date.now() + 20_000;
  while (Object.keys(cluster.workers ?? {}).length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(Object.keys(cluster.workers ?? {})).toHaveLength(2);
  await children.stop(10_000);
  expect(Object.keys(cluster.workers ?? {})).toHaveLength(0);
});
