import { request as httpRequest } from 'node:http';
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
