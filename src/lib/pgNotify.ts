import { Client } from 'pg';
import type { Logger } from './logger';

// PostgreSQL's LISTEN/NOTIFY on one connection of the process's own. A notification is sent when
// the transaction that raised it commits, so a cache that forgets on it can't miss a committed
// change while the connection lives. While it is down nothing is heard: `live` is false and
// `onReset` listeners are told, so caches stop trusting what they hold until it is back.

const RECONNECT_MS = [250, 500, 1000, 2000, 5000];
const CHANNEL = /^[a-z_][a-z0-9_]*$/;

export type NotificationHandler = (payload: string) => void;

export class Notifications {
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private attempts = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private readonly resets = new Set<() => void>();
  /** Whether every notification committed from now on will be heard. */
  live = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  /** Calls `handler` with each payload on `channel`; connects on first use. */
  listen(channel: string, handler: NotificationHandler): void {
    if (!CHANNEL.test(channel)) throw new Error(`Bad channel name ${channel}`);
    let set = this.handlers.get(channel);
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    if (this.client && this.live) void this.client.query(`LISTEN ${channel}`).catch((err) => this.lost(err));
    else void this.connect();
  }

  /**
   * Tells this process's listeners at once, before the commit whose NOTIFY tells every process
   * (the same payload then arrives twice here, which listeners take in their stride).
   */
  announce(channel: string, payload: string): void {
    for (const handler of this.handlers.get(channel) ?? []) handler(payload);
  }

  /** Called whenever the connection is lost (notifications may have been missed). */
  onReset(handler: () => void): void {
    this.resets.add(handler);
  }

  private connect(): Promise<void> {
    if (this.closed || this.client) return this.connecting ?? Promise.resolve();
    const client = new Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 5_000 });
    this.client = client;
    client.on('error', (err) => this.lost(err, client));
    client.on('end', () => this.lost(undefined, client));
    client.on('notification', (n) => {
      for (const handler of this.handlers.get(n.channel) ?? []) handler(n.payload ?? '');
    });
    this.connecting = (async () => {
      try {
        await client.connect();
        for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
        if (this.client !== client) return;
        this.attempts = 0;
        this.live = true;
      } catch (err) {
        this.lost(err, client);
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  private lost(err: unknown, client = this.client): void {
    if (client !== this.client || !client) return;
    const wasLive = this.live;
    this.live = false;
    this.client = undefined;
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    for (const reset of this.resets) reset();
    if (this.closed) return;
    if (wasLive) this.logger.warn({ err: err instanceof Error ? err.message : undefined }, 'notification connection lost; reconnecting');
    const delay = RECONNECT_MS[Math.min(this.attempts++, RECONNECT_MS.length - 1)];
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref();
  }

  /** Resolves once listening (or at once when nothing listens yet); for tests and start-up. */
  async ready(): Promise<void> {
    await this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.live = false;
    await this.connecting?.catch(() => undefined);
    await client?.end().catch(() => undefined);
  }
}
