import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { openRuntime } from '../src/runtime';
import { startApi } from '../src/server';
import { newTestKey } from './helpers/app';
import { CLOSED_ORIGIN } from './helpers/fixtures';

function get(port: number, path: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { Authorization: `Bearer ${key}` } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * One keep-alive connection, spoken to by hand, so a test sees exactly how the server ends it:
 * a clean close (FIN: `end`, then `close` without error) or a reset (an ECONNRESET `error`).
 */
class RawConnection {
  readonly socket: Socket;
  readonly errors: string[] = [];
  /** Resolves when the server closed its side (FIN). */
  readonly ended: Promise<void>;
  /** Resolves when the socket is closed, with whether an error closed it. */
  readonly closed: Promise<boolean>;
  private buffer = '';
  private wake?: () => void;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      this.wake?.();
    });
    this.socket.on('error', (err: NodeJS.ErrnoException) => this.errors.push(err.code ?? err.message));
    this.ended = new Promise((resolve) => this.socket.once('end', () => resolve()));
    this.closed = new Promise((resolve) => this.socket.once('close', (hadError) => resolve(hadError)));
  }

  async get(path: string, key: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nConnection: keep-alive\r\n\r\n`);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.buffer.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length']);
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.slice(end + 4, end + 4 + length);
          this.buffer = this.buffer.slice(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body };
        }
      }
      await new Promise<void>((resolve, reject) => {
        this.wake = resolve;
        this.socket.once('close', () => reject(new Error(`closed before an answer (errors: ${this.errors.join(', ') || 'none'})`)));
      });
    }
  }
}

/** Holds the next statement whose text includes `marker` until `release()`; `entered` resolves once one is held. */
function holdStatement(runtime: ReturnType<typeof openRuntime>, marker: string) {
  const query = runtime.sql.query.bind(runtime.sql);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let enter!: () => void;
  const entered = new Promise<void>((r) => (enter = r));
  let held = false;
  const spy = jest.spyOn(runtime.sql, 'query').mockImplementation(((statement: { text: string }) => {
    if (held || !statement.text.includes(marker)) return query(statement as any);
    held = true;
    enter();
    return gate.then(() => query(statement as any));
  }) as any);
  return { entered, release, restore: () => spy.mockRestore() };
}

test('the API listens on HOST: 127.0.0.1 by default, or the address it is given', async () => {
  const defaults = openRuntime(loadConfig({ ...process.env, HOST: '', PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const api = await startApi(defaults);
  expect((api.server.address() as { address: string }).address).toBe('127.0.0.1');
  const port = (api.server.address() as { port: number }).port;
  expect((await get(port, '/healthz', newTestKey())).status).toBe(200);
  await api.close();
  await defaults.close();

  // Another loopback address (nothing is sent to it): the listener takes exactly what HOST says.
  const other = openRuntime(loadConfig({ ...process.env, HOST: '127.0.0.2', PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const bound = await startApi(other);
  expect((bound.server.address() as { address: string }).address).toBe('127.0.0.2');
  await bound.close();
  await other.close();
});

test('closing the API lets an in-flight request finish and refuses new connections', async () => {
  const runtime = openRuntime(loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const api = await startApi(runtime);
  const port = (api.server.address() as { port: number }).port;
  const key = newTestKey();
  expect((await get(port, '/v1/webhook_endpoints', key)).status).toBe(200);

  // Hold the next list query until the server has begun closing.
  const query = runtime.sql.query.bind(runtime.sql);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  jest.spyOn(runtime.sql, 'query').mockImplementation(((statement: { text: string }) => {
    if (!statement.text.includes('FROM webhook_endpoints')) return query(statement as any);
    entered();
    return gate.then(() => query(statement as any));
  }) as any);

  const inFlight = get(port, '/v1/webhook_endpoints', key);
  await inHandler;
  const closed = api.close();
  await expect(get(port, '/v1/webhook_endpoints', key)).rejects.toThrow(/ECONNREFUSED/);
  release();
  const finished = await inFlight;
  expect(finished.status).toBe(200);
  expect(JSON.parse(finished.body).object).toBe('list');
  await closed;
  await runtime.close();
});

test('closing waits for an operation whose client hung up, so its idempotent result is stored', async () => {
  const runtime = openRuntime(loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const api = await startApi(runtime);
  const port = (api.server.address() as { port: number }).port;
  const key = newTestKey();
  expect((await get(port, '/v1/webhook_endpoints', key)).status).toBe(200);

  const query = runtime.sql.query.bind(runtime.sql);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const spy = jest.spyOn(runtime.sql, 'query').mockImplementation(((statement: { text: string }) => {
    // The create's one statement: the endpoint, its slot, the claim and the answer.
    if (statement.text.includes('INSERT INTO webhook_endpoints')) {
      entered();
      return gate.then(() => query(statement as any));
    }
    return query(statement as any);
  }) as any);

  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/webhook_endpoints',
    headers: { Authorization: `Bearer ${key}`, 'Idempotency-Key': 'hang-up', 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  req.on('error', () => undefined);
  req.end(`url=${CLOSED_ORIGIN}/h&enabled_events[]=*`);
  await inHandler;
  req.destroy(); // the client hangs up mid-request
  const closed = api.close();
  setTimeout(release, 200);
  await closed;
  spy.mockRestore();

  const record = await runtime.prisma.idempotencyRecord.findFirst({ where: { key: 'hang-up' } });
  expect(record?.status).toBe(200);
  // Stored sealed: the create response carries the endpoint's signing secret.
  expect(JSON.parse(await runtime.encryption.open(record!.responseBody!)).object).toBe('webhook_endpoint');
  await runtime.close();
});

test('a request Node refuses before routing (oversized headers) still gets the error shape', async () => {
  const runtime = openRuntime(loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const api = await startApi(runtime);
  const port = (api.server.address() as { port: number }).port;
  const res = await get(port, `/v1/webhook_endpoints?x=${'a'.repeat(20000)}`, newTestKey());
  expect(res.status).toBe(431);
  expect(JSON.parse(res.body).error.type).toBe('invalid_request_error');
  await api.close();
  await runtime.close();
});

test('a cold API under concurrent writes that seal their stored result answers them all (keys are loaded at start, not inside a transaction)', async () => {
  // Two pooled connections, eight creates at once: a key load waiting for a third connection
  // inside a transaction would starve until the pool's timeout and answer 503.
  const runtime = openRuntime(loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2' }), { logger: createLogger('silent') });
  const api = await startApi(runtime);
  const port = (api.server.address() as { port: number }).port;
  const key = newTestKey();
  const create = (i: number) =>
    fetch(`http://127.0.0.1:${port}/v1/identity/verification_sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded', 'Idempotency-Key': `cold-${key}-${i}` },
      body: 'type=document',
    }).then((r) => r.status);
  try {
    expect(await Promise.all(Array.from({ length: 8 }, (_, i) => create(i)))).toEqual(Array(8).fill(200));
  } finally {
    await api.close();
    await runtime.close();
  }
});

test('a graceful stop finishes the request in flight with Connection: close, closes an idle keep-alive connection cleanly, and refuses new connections', async () => {
  const runtime = openRuntime(loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const api = await startApi(runtime);
  const port = (api.server.address() as { port: number }).port;
  const key = newTestKey();

  // A keep-alive connection that answered once and is now idle.
  const idle = new RawConnection(port);
  const first = await idle.get('/v1/webhook_endpoints', key);
  expect(first.status).toBe(200);
  expect(first.headers.connection).toBe('keep-alive');

  // A request in flight on another keep-alive connection when the stop begins.
  const busy = new RawConnection(port);
  expect((await busy.get('/v1/webhook_endpoints', key)).status).toBe(200);
  const held = holdStatement(runtime, 'FROM webhook_endpoints');
  const inFlight = busy.get('/v1/webhook_endpoints', key);
  await held.entered;
  const closed = api.close();

  await expect(get(port, '/v1/webhook_endpoints', key)).rejects.toThrow(/ECONNREFUSED/);
  // The idle connection is closed by a FIN, not a reset, while the other request is still running.
  await idle.ended;
  expect(await idle.closed).toBe(false);
  expect(idle.errors).toEqual([]);

  held.release();
  const answered = await inFlight;
  expect(answered.status).toBe(200);
  expect(JSON.parse(answered.body).object).toBe('list');
  // It tells the client not to send on this connection again, then the server closes it cleanly.
  expect(answered.headers.connection).toBe('close');
  await busy.ended;
  expect(await busy.closed).toBe(false);
  expect(busy.errors).toEqual([]);
  await closed;
  held.restore();
  await runtime.close();
});

test('a request a client sends on its keep-alive connection after the stop began is answered, with Connection: close, not reset', async () => {
  const runtime = openRuntime(loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  // Quiet connections stay open through the drain here, so the request below surely meets its connection open.
  const api = await startApi(runtime, { drainIdleMs: 60_000 });
  const port = (api.server.address() as { port: number }).port;
  const key = newTestKey();
  const conn = new RawConnection(port);
  expect((await conn.get('/v1/webhook_endpoints', key)).status).toBe(200);

  const closed = api.close();
  await expect(get(port, '/v1/webhook_endpoints', key)).rejects.toThrow(/ECONNREFUSED/);
  const after = await conn.get('/v1/webhook_endpoints', key);
  expect(after.status).toBe(200);
  expect(after.headers.connection).toBe('close');
  await conn.ended;
  expect(await conn.closed).toBe(false);
  expect(conn.errors).toEqual([]);
  // The drain ends once its last connection closed (long before the shutdown timeout).
  await closed;
  await runtime.close();
});
