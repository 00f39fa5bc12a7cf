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
