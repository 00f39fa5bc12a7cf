import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import Stripe from 'stripe';
import { sleep } from './services';

// The traffic of a fault scenario: clients that retry as the official SDKs do (same
// Idempotency-Key, on network errors, 409, 429 and 5xx unless told not to), and webhook
// receivers that check every signature.

export interface Answer {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export interface RequestRecord {
  startedAt: number;
  /** Answers and network errors, in order; the last one is the outcome. */
  tries: (number | 'network')[];
  ok: boolean;
  /** When the successful answer arrived. */
  okAt?: number;
  body?: any;
}

export interface ClientTotals {
  requests: number;
  tries: number;
  fiveXx: number;
  networkErrors: number;
  /** Answers no retry turned into a success (or a 4xx the scenario did not expect). */
  failed: RequestRecord[];
}

/** A form body as the SDKs encode it. */
export function form(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

export class ApiClient {
  private readonly agent = new Agent({ connections: 64, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  readonly records: RequestRecord[] = [];

  constructor(
    readonly baseUrl: string,
    readonly key: string,
    /** How long one logical request keeps retrying before it counts as failed. */
    private readonly retryForMs = 120_000,
  ) {}

  async once(method: 'GET' | 'POST', path: string, body?: string, idempotencyKey?: string): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const res = await request(`${this.baseUrl}${path}`, { method, headers, body, dispatcher: this.agent });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.statusCode, body: parsed, headers: res.headers };
  }

  /**
   * One logical request, retried with its key until it succeeds: network errors, 409, 429 and 5xx
   * are retried (as the SDKs do, with a longer budget), other answers end it.
   */
  async send(method: 'GET' | 'POST', path: string, body?: string, idempotencyKey?: string): Promise<RequestRecord> {
    const record: RequestRecord = { startedAt: Date.now(), tries: [], ok: false };
    this.records.push(record);
    const deadline = Date.now() + this.retryForMs;
    for (let attempt = 0; ; attempt++) {
      let retry: boolean;
      try {
        const answer = await this.once(method, path, body, idempotencyKey);
        record.tries.push(answer.status);
        if (answer.status < 300) {
          record.ok = true;
          record.okAt = Date.now();
          record.body = answer.body;
          return record;
        }
        record.body = answer.body;
        retry = answer.status === 409 || answer.status === 429 || (answer.status >= 500 && answer.headers['stripe-should-retry'] !== 'false');
      } catch {
        record.tries.push('network');
        retry = true;
      }
      if (!retry || Date.now() > deadline) return record;
      // The SDKs' backoff: 0.5 s doubling, capped, with jitter.
      await sleep(Math.min(4000, 500 * 2 ** Math.min(attempt, 3)) * (0.5 + Math.random() / 2));
    }
  }

  totals(): ClientTotals {
    const tries = this.records.flatMap((r) => r.tries);
    return {
      requests: this.records.length,
      tries: tries.length,
      fiveXx: tries.filter((t) => typeof t === 'number' && t >= 500).length,
      networkErrors: tries.filter((t) => t === 'network').length,
      failed: this.records.filter((r) => !r.ok),
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Runs `total` tasks from `concurrency` clients; `onDone(n)` after each finishes. */
export async function burst(total: number, concurrency: number, task: (i: number) => Promise<unknown>, onDone: (done: number) => void): Promise<void> {
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        await task(i);
        onDone(++done);
      }
    }),
  );
}

const webhooks = new Stripe('sk_test_faults').webhooks;

/** A webhook endpoint's receiver: verifies each signature, records the first arrival of each event. */
export class Receiver {
  readonly arrivals = new Map<string, number>();
  /** How many times each event arrived (more than once: a duplicate). */
  readonly counts = new Map<string, number>();
  duplicates = 0;
  /** The webhook endpoint this receiver stands behind. */
  endpointId = '';
  badSignatures = 0;
  secret = '';
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        try {
          const event = webhooks.constructEvent(Buffer.concat(chunks).toString('utf8'), req.headers['stripe-signature'] as string, this.secret);
          this.counts.set(event.id, (this.counts.get(event.id) ?? 0) + 1);
          if (this.arrivals.has(event.id)) this.duplicates++;
          else this.arrivals.set(event.id, Date.now());
        } catch {
          this.badSignatures++;
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A forwarding destination: answers every POST after `delayMs` (so forwards are in flight when a
 * fault hits) and counts the arrivals of each forward by the `tag` of its JSON body.
 */
export class ForwardDestination {
  readonly arrivals = new Map<string, number>();
  private server!: Server;
  port = 0;

  constructor(private readonly delayMs: number) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let tag = '';
        try {
          tag = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).tag);
        } catch {
          tag = '(not JSON)';
        }
        this.arrivals.set(tag, (this.arrivals.get(tag) ?? 0) + 1);
        const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), this.delayMs);
        res.on('close', () => clearTimeout(timer));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/vault`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
