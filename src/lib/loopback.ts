import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import qs from 'qs';
import { Pool } from 'undici';

// An app on an ephemeral loopback port of its own, and connections to it: how in-process callers
// (the seed, the console) make requests through the app's whole pipeline (auth, validation,
// idempotency, versions, the request log), exactly as a client's would go, without the API having
// to listen yet, and whatever address and protocol it listens on.

export type LoopbackMethod = 'GET' | 'POST' | 'DELETE';

export interface LoopbackAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

/** Form encoding as the SDKs write it (`a[b]=…`, `list[0]=…`). */
export const formEncode = (params: Record<string, unknown>): string => qs.stringify(params, { arrayFormat: 'indices' });

export class LoopbackServer {
  private constructor(
    private readonly server: Server,
    private readonly pool: Pool,
  ) {}

  /** `connections`: how many requests may be in flight at once (each its own keep-alive connection). */
  static async open(app: RequestListener, connections = 1): Promise<LoopbackServer> {
    const server = createServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    return new LoopbackServer(server, new Pool(`http://127.0.0.1:${port}`, { connections }));
  }

  /** One request; GET and DELETE parameters go in the query string, POST's in a form body. */
  async request(method: LoopbackMethod, path: string, params: Record<string, unknown>, headers: Record<string, string>): Promise<LoopbackAnswer> {
    const form = formEncode(params);
    const inBody = method === 'POST';
    const res = await this.pool.request({
      method,
      path: inBody || form === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${form}`,
      headers: { ...(inBody ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body: inBody ? form : undefined,
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
