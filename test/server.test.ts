import { request as httpRequest } from 'node:http';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { openRuntime } from '../src/runtime';
import { startApi } from '../src/server';
import { newTestKey } from './helpers/app';

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

test('closing the API lets an in-flight request finish and refuses new connections', async () => {
  const runtime = openRuntime(loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const api = await startApi(runtime);
  const port = (api.server.address() as { port: number }).port;
  const key = newTestKey();
  expect((await get(port, '/v1/webhook_endpoints', key)).status).toBe(200);

  // Hold the next list query until the server has begun closing.
  const findMany = runtime.prisma.webhookEndpoint.findMany.bind(runtime.prisma.webhookEndpoint);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  jest.spyOn(runtime.prisma.webhookEndpoint, 'findMany').mockImplementation(((args: any) => {
    entered();
    return gate.then(() => findMany(args));
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

  const queryRaw = runtime.prisma.$queryRaw.bind(runtime.prisma);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const spy = jest.spyOn(runtime.prisma, '$queryRaw').mockImplementation(((...args: any[]) => {
    // The endpoint insert is the second raw query of the request (after the idempotency claim).
    if (String(args[0]?.[0] ?? args[0]?.strings?.[0] ?? '').includes('WITH slot AS')) {
      entered();
      return gate.then(() => (queryRaw as any)(...args));
    }
    return (queryRaw as any)(...args);
  }) as any);

  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/webhook_endpoints',
    headers: { Authorization: `Bearer ${key}`, 'Idempotency-Key': 'hang-up', 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  req.on('error', () => undefined);
  req.end('url=https://example.com/h&enabled_events[]=*');
  await inHandler;
  req.destroy(); // the client hangs up mid-request
  const closed = api.close();
  setTimeout(release, 200);
  await closed;
  spy.mockRestore();

  const record = await runtime.prisma.idempotencyRecord.findFirst({ where: { key: 'hang-up' } });
  expect(record?.status).toBe(200);
  expect(JSON.parse(record!.responseBody!).object).toBe('webhook_endpoint');
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
