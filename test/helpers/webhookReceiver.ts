import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local webhook receiver for tests: records every request (raw body and headers) and answers
// as told, per path, so tests can make an endpoint fail, hang, or redirect.

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export type Reply = { status: number; body?: string; delayMs?: number; headers?: Record<string, string> };

export interface WebhookReceiver {
  readonly server: Server;
  readonly received: ReceivedRequest[];
  url(path?: string): string;
  /** Replies for a path, used in order; the last one repeats. Default: 200. */
  reply(path: string, ...replies: Reply[]): void;
  on(path: string): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const scripts = new Map<string, Reply[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() });
      const script = scripts.get(path);
      const reply = script && script.length > 1 ? script.shift()! : (script?.[0] ?? { status: 200, body: '{"received":true}' });
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body ?? '');
      };
      // Unref'd: a late reply still pending when the suite ends must not keep Jest running.
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    received,
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    reply: (path, ...replies) => void scripts.set(path, replies),
    on: (path) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
