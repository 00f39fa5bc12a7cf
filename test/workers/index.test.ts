import type { AddressInfo } from 'node:net';
import { serveWorkerMetrics } from '../../workers/index';

test('a worker on its own serves /metrics, and nothing else, on the address it is given (HOST)', async () => {
  const server = await serveWorkerMetrics(0, '127.0.0.1');
  expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain('# TYPE sandbank_webhook_delivery_attempts_total counter');
    expect(text).toContain('# TYPE sandbank_queue_jobs gauge');
    expect((await fetch(`${base}/other`)).status).toBe(404);
  } finally {
    server.close();
  }
});
