import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import qs from 'qs';
import { RedisServer, waitFor } from '../faults/services';
import { randomBase62 } from '../src/lib/ids';
import { freePort, newTestKey } from './helpers/app';
import { startWebhookReceiver } from './helpers/webhookReceiver';

// What a user meets at start: `npm start` (the built service, as they run it) stopped by a
// signal, a PostgreSQL that isn't there or wants a password, and a Redis that comes up late.
// The processes are real ones, each with a queue prefix and port of its own.

const ROOT = path.join(__dirname, '..');
const REGISTER = path.join(ROOT, 'scripts', 'swc-register.js');

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function startProcess(command: string, args: string[], env: Record<string, string>): Started {
  let output = '';
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, QUEUE_PREFIX: `test${randomBase62(8)}`, WORKER_METRICS_PORT: '0', LOG_LEVEL: 'info', API_PROCESSES: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The API and the workers in one process (src/main.ts, what `npm start` runs), from the sources. */
const startMain = (env: Record<string, string>): Started => startProcess(process.execPath, ['-r', REGISTER, 'src/main.ts'], env);

const answers = async (url: string, status = 200): Promise<boolean> => (await fetch(url)).status === status;

/**
 * The port the process's API listens on. Started with PORT=0: a port picked beforehand could be
 * taken meanwhile by another suite's short-lived server, which would then answer in its place.
 */
async function listeningPort(p: Started, ms: number): Promise<number> {
  let port: number | undefined;
  const found = await waitFor(async () => {
    port = Number(/"port":(\d+)[^\n]*"msg":"api listening"/.exec(p.output())?.[1]) || undefined;
    return port !== undefined;
  }, ms, 250);
  if (!found) throw new Error(`the API did not say it listens within ${ms} ms:\n${p.output()}`);
  return port!;
}

function stopProcess(p: Started): Promise<unknown> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  return p.exited;
}

describe('PostgreSQL that is missing or wants a password', () => {
  /** A server that speaks just enough of PostgreSQL's protocol to refuse the way a real one does. */
  async function fakePostgres(mode: 'wants-password' | 'wrong-password'): Promise<Server> {
    const message = (type: string, body: Buffer) => {
      const out = Buffer.alloc(5 + body.length);
      out.write(type, 0);
      out.writeInt32BE(4 + body.length, 1);
      body.copy(out, 5);
      return out;
    };
    const auth = (kind: number, data: string) => {
      const body = Buffer.alloc(4 + Buffer.byteLength(data));
      body.writeInt32BE(kind, 0);
      body.write(data, 4);
      return message('R', body);
    };
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => {
        if (mode === 'wrong-password') {
          socket.end(message('E', Buffer.from('SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user "postgres"\0\0')));
          return;
        }
        // SCRAM: the client answers the mechanism list, then needs its password for the server's first message.
        socket.once('data', () => socket.write(auth(11, 'r=abc,s=c2FsdA==,i=4096')));
        socket.write(auth(10, 'SCRAM-SHA-256\0\0'));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  async function failedStart(databaseUrl: string): Promise<{ code: number | null; output: string }> {
    const p = startProcess(process.execPath, ['-r', REGISTER, 'src/server.ts'], { DATABASE_URL: databaseUrl, PORT: String(await freePort()) });
    const code = await p.exited;
    return { code, output: p.output() };
  }

  test('nothing listening: one line naming the URL tried (without its password) and what to do, no stack', async () => {
    const port = await freePort();
    const { code, output } = await failedStart(`postgresql://postgres:hunter2@127.0.0.1:${port}/sandbank`);
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      `No PostgreSQL answers at postgresql://postgres:***@127.0.0.1:${port}/sandbank (ECONNREFUSED). Start PostgreSQL there, or set DATABASE_URL to one that runs.`,
    ]);
  });

  test('an unknown host: one line', async () => {
    const { code, output } = await failedStart('postgresql://postgres@no-such-host.invalid:5432/sandbank');
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      'Cannot resolve the PostgreSQL host "no-such-host.invalid" of postgresql://postgres@no-such-host.invalid:5432/sandbank. Fix the host in DATABASE_URL.',
    ]);
  });

  test('a server that wants a password and DATABASE_URL has none: says to put it there', async () => {
    const server = await fakePostgres('wants-password');
    const port = (server.address() as AddressInfo).port;
    try {
      const { code, output } = await failedStart(`postgresql://postgres@127.0.0.1:${port}/sandbank`);
      expect(code).toBe(1);
      expect(output.trim().split('\n')).toEqual([
        `PostgreSQL at postgresql://postgres@127.0.0.1:${port}/sandbank wants a password and DATABASE_URL has none. Put it in DATABASE_URL (postgresql://user:password@host:port/database).`,
      ]);
    } finally {
      server.close();
    }
  });

  test('a wrong password: one line', async () => {
    const server = await fakePostgres('wrong-password');
    const port = (server.address() as AddressInfo).port;
    try {
      const { code, output } = await failedStart(`postgresql://postgres:wrong@127.0.0.1:${port}/sandbank`);
      expect(code).toBe(1);
      expect(output.trim().split('\n')).toEqual([
        `PostgreSQL at postgresql://postgres:***@127.0.0.1:${port}/sandbank refused the password (password authentication failed for user "postgres"). Fix the password in DATABASE_URL.`,
      ]);
    } finally {
      server.close();
    }
  });
});

// A redis-server of the test's own comes up late; without the program (a machine where the suite
// runs its services in containers) this part is skipped, except in CI.
const redisServerFound = (process.env.PATH ?? '').split(':').some((dir) => existsSync(path.join(dir, 'redis-server')));
if (!redisServerFound) {
  if (process.env.CI) throw new Error('the Redis-down test needs redis-server (Debian: redis-server)');
  console.warn('SKIPPED: the Redis-down test needs redis-server (Debian: redis-server)');
}

(redisServerFound ? describe : describe.skip)('Redis down at start', () => {
  let dir: string;
  let redis: RedisServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sandbank-redis-late-'));
    // Started once to learn a port of its own, then killed: the service starts with nothing there.
    redis = await RedisServer.start(dir);
    await redis.kill();
  });
  afterAll(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the API listens and answers (/readyz 503 naming Redis), writes succeed, and it all catches up when Redis comes', async () => {
    const receiver = await startWebhookReceiver();
    const p = startMain({ REDIS_URL: redis.url, PORT: '0', RECONCILE_INTERVAL_MS: '60000' });
    try {
      const base = `http://127.0.0.1:${await listeningPort(p, 30_000)}`;
      expect(await answers(`${base}/healthz`)).toBe(true);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'unavailable', postgres: true, redis: false });

      // An event written while Redis is down waits in the database.
      const key = newTestKey();
      const post = (p: string, body: Record<string, unknown>) =>
        fetch(`${base}${p}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: qs.stringify(body),
        });
      expect((await post('/v1/webhook_endpoints', { url: receiver.url('/late'), enabled_events: ['*'], connect: true })).status).toBe(200);
      const account = await post('/v1/accounts', { type: 'custom', country: 'US', capabilities: { transfers: { requested: true } } });
      expect(account.status).toBe(200);
      const { id } = (await account.json()) as { id: string };
      expect((await post(`/v1/accounts/${id}`, { metadata: { late: 'redis' } })).status).toBe(200);

      await redis.startProcess();
      // Caught up on Redis's return, not at the next reconciler tick (a minute away here).
      expect(await waitFor(() => answers(`${base}/readyz`), 15_000)).toBe(true);
      expect(await waitFor(() => receiver.on('/late').some((r) => JSON.parse(r.body).type === 'account.updated'), 15_000)).toBe(true);
    } finally {
      await stopProcess(p);
      await receiver.close();
    }
  });
});

test('the service logs one ready line at every log level, naming the API and the console, and both answer', async () => {
  const p = startMain({ PORT: '0', LOG_LEVEL: 'error', RECONCILE_INTERVAL_MS: '60000' });
  try {
    expect(await waitFor(() => /sandbank ready/.test(p.output()), 60_000, 250)).toBe(true);
    const lines = p.output().split('\n').filter(Boolean);
    const ready = lines.map((l) => JSON.parse(l)).filter((l) => /^sandbank ready/.test(l.msg));
    expect(ready).toHaveLength(1);
    expect(ready[0].api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ready[0].console).toMatch(/\/console$/);
    // At LOG_LEVEL=error it is the only line of a clean start.
    expect(lines).toHaveLength(1);
    expect(await answers(`${ready[0].api}/healthz`)).toBe(true);
  } finally {
    await stopProcess(p);
  }
}, 90_000);

describe('npm start', () => {
  const childrenOf = (pid: number): number[] => {
    try {
      return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    } catch {
      return []; // ps exits 1 when there are none
    }
  };
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  /** Every process under `pid`, deepest first. */
  const treeOf = (pid: number): number[] => childrenOf(pid).flatMap((child) => [...treeOf(child), child]);

  test('kill -TERM of the npm process stops the service (API_PROCESSES=2: a cluster): the port closes and no node stays behind', async () => {
    // npm may need to build dist/ first (a fresh checkout). Cluster workers that listen on port 0
    // all get the one port the primary picked.
    const p = startProcess('npm', ['start', '--silent'], { PORT: '0', API_PROCESSES: '2' });
    // A failing check must not leave the service running: killing npm alone would orphan it.
    let tree: number[] = [];
    const track = setInterval(() => (tree = [...new Set([...tree, ...treeOf(p.child.pid!)])]), 500);
    try {
      const base = `http://127.0.0.1:${await listeningPort(p, 150_000)}`;
      expect(await waitFor(() => answers(`${base}/readyz`), 30_000, 250)).toBe(true);
      const node = childrenOf(p.child.pid!);
      expect(node).toHaveLength(1);
      // The first process runs the workers and supervises two API processes, which both listen.
      expect(await waitFor(async () => childrenOf(node[0]).length === 2 && (p.output().match(/"msg":"api listening"/g) ?? []).length === 2, 30_000)).toBe(true);
      const apis = childrenOf(node[0]);
      const key = newTestKey();
      const created = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(`${base}/v1/customers`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=c' }),
        ),
      );
      expect(created.map((r) => r.status)).toEqual(Array(8).fill(200));

      // An API process that dies is started again.
      process.kill(apis[0], 'SIGKILL');
      expect(await waitFor(() => childrenOf(node[0]).length === 2 && !childrenOf(node[0]).includes(apis[0]), 15_000)).toBe(true);
      // A keep-alive socket to the killed process fails once; the next request finds a live one.
      expect(await waitFor(() => answers(`${base}/healthz`).catch(() => false), 5_000)).toBe(true);
      const running = childrenOf(node[0]);

      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(await waitFor(() => [node[0], ...apis, ...running].every((pid) => !alive(pid)), 15_000)).toBe(true);
      await expect(fetch(`${base}/healthz`)).rejects.toThrow();
      expect(p.output()).toContain('"signal":"SIGTERM","msg":"shutting down"');
    } finally {
      clearInterval(track);
      for (const pid of tree) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await stopProcess(p);
    }
  }, 180_000);
});
