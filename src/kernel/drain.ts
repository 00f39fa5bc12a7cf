import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// A graceful stop (src/server.ts) must tell the connections a client may still send on from the
// quiet ones. Each connection's requests are counted from the access log's one `close` listener
// (kernel/http.ts accessLog), so tracking costs a request two field writes, not listeners of its own.

interface Tracked {
  /** Requests on it not yet answered. */
  active: number;
  idleSince: number;
  /** Its latest request's answer: given `Connection: close` when a drain starts before it is sent. */
  res: ServerResponse | undefined;
}

const TRACKED = Symbol('drainTracked');
type TrackedSocket = Socket & { [TRACKED]?: Tracked };

export class ConnectionDrain {
  private readonly sockets = new Set<TrackedSocket>();
  private draining = false;
  private sweep: NodeJS.Timeout | undefined;
  private onEmpty: (() => void) | undefined;

  /** Follows the server's connections (once per connection, not per request). */
  watch(server: Server): void {
    server.on('connection', (socket: TrackedSocket) => {
      socket[TRACKED] = { active: 0, idleSince: Date.now(), res: undefined };
      this.sockets.add(socket);
      socket.once('close', () => {
        this.sockets.delete(socket);
        if (this.sockets.size === 0) this.onEmpty?.();
      });
    });
  }

  /** A request arrives (before any handler): once draining, its answer closes its connection. */
  started(req: IncomingMessage, res: ServerResponse): void {
    const t = (req.socket as TrackedSocket)[TRACKED];
    if (t) {
      t.active++;
      t.res = res;
    }
    if (this.draining) res.setHeader('Connection', 'close');
  }

  /** Its answer is sent, or its client hung up (the response's `close`). */
  ended(req: IncomingMessage): void {
    const t = (req.socket as TrackedSocket)[TRACKED];
    if (!t) return;
    t.active--;
    t.res = undefined;
    t.idleSince = Date.now();
  }

  /** Every answer from now on carries `Connection: close`; connections quiet for `idleMs` are closed. */
  drain(idleMs: number): void {
    this.draining = true;
    for (const socket of this.sockets) {
      const res = socket[TRACKED]!.res;
      if (res && !res.headersSent) res.setHeader('Connection', 'close');
    }
    const closeQuiet = () => {
      const now = Date.now();
      for (const socket of this.sockets) {
        const t = socket[TRACKED]!;
        if (t.active === 0 && now - t.idleSince >= idleMs) socket.destroy();
      }
    };
    closeQuiet();
    this.sweep = setInterval(closeQuiet, 50);
  }

  /** Resolves once every connection is closed (or at `deadline`). */
  closed(deadline: number): Promise<void> {
    if (this.sockets.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.onEmpty = resolve;
      setTimeout(resolve, Math.max(0, deadline - Date.now())).unref();
    });
  }

  stop(): void {
    clearInterval(this.sweep);
  }
}
