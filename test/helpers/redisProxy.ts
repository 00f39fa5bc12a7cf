import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

// A TCP proxy in front of the test Redis, so a test can take Redis away from one app (drop every
// connection and refuse new ones) without touching the Redis other suites share.

export interface RedisProxy {
  /** The app's REDIS_URL: the proxy, on 127.0.0.1. */
  readonly url: string;
  /** Drops every connection through the proxy and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startRedisProxy(redisUrl: string): Promise<RedisProxy> {
  const target = new URL(redisUrl);
  const sockets = new Set<Socket>();
  let refusing = false;
  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 6379), target.hostname);
    const pair = [client, upstream];
    const drop = () => {
      for (const s of pair) {
        s.destroy();
        sockets.delete(s);
      }
    };
    for (const s of pair) {
      sockets.add(s);
      s.on('error', drop);
      s.on('close', drop);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const cutAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  return {
    url: url.toString(),
    cut() {
      refusing = true;
      cutAll();
    },
    restore() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        server.close(() => resolve());
      }),
  };
}
