import type { Redis } from '../lib/redis';
import { hasIdShape } from '../lib/ids';

// Every error body of an authenticated request links its request's log (`request_log_url`,
// shaped as the public API's `…/test/logs/req_…?t=…`). The link points at the sandbox, not at a
// dashboard that never saw the request: a page that shows what failed, to the platform whose key
// made the request (src/hosted/requestLogPage.ts renders it). Each process keeps its latest
// failed requests in memory and, when given Redis, also in Redis, so the page opens on any API
// process or replica (a log, not data: a Redis that lost its keys forgets them, and the page says
// where else to look).
//
// What a request can make the log keep is bounded three ways, the oldest entries going first: a
// count, bytes per entry (a longer body is cut) and bytes in all, in each process and in Redis
// (which runs `noeviction` for BullMQ, so a full Redis would stop every queue).

/** How many failed requests are remembered (per process, and in Redis). */
export const KEPT = 1_000;
/**
 * Bytes one entry may take, as stored (JSON); a longer error body is cut to fit. Errors repeat at
 * most 200 characters of what a client sent (kernel/errors.ts), so only an unusual body (a card
 * error with its PaymentIntent, say) comes near this.
 */
export const ENTRY_BYTES = 16 * 1024;
/** Bytes all entries of one process may take: KEPT typical entries (~0.5 KB each) fit many times over. */
export const PROCESS_BYTES = 4 * 1024 * 1024;
/** Bytes all entries in Redis may take, for every process together. */
export const REDIS_BYTES = 8 * 1024 * 1024;
/** How long Redis keeps one, besides the count and the bytes. */
const KEPT_SECONDS = 24 * 3600;

export const REQUEST_LOG_PATH = '/test/logs';

export interface FailedRequest {
  readonly requestId: string;
  /**
   * The platform account whose key made the request: only its key opens the entry. A request that
   * never authenticated has no entry (no account could be shown it), nor a request_log_url.
   */
  readonly account: string;
  /** Unix seconds. */
  readonly receivedAt: number;
  readonly method: string;
  /** The route template (`/v1/customers/{customer}`), never the raw path: a hosted path is a credential. */
  readonly route: string;
  readonly status: number;
  /** The error body as sent (cut to fit ENTRY_BYTES). */
  readonly body: string;
}

/** Room in an entry for everything but the body: ids, route template, method. */
const ENTRY_OVERHEAD = 1024;
/**
 * The body is JSON, so stored inside the entry's JSON each `"` and `\` doubles: at most twice its
 * bytes. Cut to this, any body fits ENTRY_BYTES.
 */
const BODY_BYTES = (ENTRY_BYTES - ENTRY_OVERHEAD) / 2;

/** The entry as stored, and its size in bytes. */
function serialize(entry: FailedRequest): { entry: FailedRequest; json: string; bytes: number } {
  const bodyBytes = Buffer.byteLength(entry.body);
  if (bodyBytes > BODY_BYTES) {
    const note = ` … (cut: the body was ${bodyBytes} bytes)`;
    // A cut inside a multi-byte character decodes to U+FFFD; dropped with what follows it.
    const cut = Buffer.from(entry.body).subarray(0, BODY_BYTES - Buffer.byteLength(note)).toString('utf8').replace(/\uFFFD+$/, '');
    entry = { ...entry, body: cut + note };
  }
  const json = JSON.stringify(entry);
  return { entry, json, bytes: Buffer.byteLength(json) };
}

// One ring for all processes: the ids and sizes of its entries, newest first ("req_… 512"), and
// their total. Past KEPT entries or REDIS_BYTES, the oldest go. Every key expires a day after the
// last record, so an idle deployment's log leaves nothing behind.
//   KEYS: ring, total, entry key prefix; ARGV: id, entry JSON, its bytes, KEPT, REDIS_BYTES, TTL.
const RECORD = `
redis.call('SET', KEYS[3] .. ARGV[1], ARGV[2], 'EX', ARGV[6])
redis.call('LPUSH', KEYS[1], ARGV[1] .. ' ' .. ARGV[3])
local total = redis.call('INCRBY', KEYS[2], ARGV[3])
while redis.call('LLEN', KEYS[1]) > tonumber(ARGV[4]) or total > tonumber(ARGV[5]) do
  local oldest = redis.call('RPOP', KEYS[1])
  if not oldest then
    redis.call('SET', KEYS[2], 0)
    break
  end
  local space = string.find(oldest, ' ', 1, true)
  redis.call('DEL', KEYS[3] .. string.sub(oldest, 1, space - 1))
  total = redis.call('DECRBY', KEYS[2], tonumber(string.sub(oldest, space + 1)))
end
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('EXPIRE', KEYS[2], ARGV[6])`;

export interface SharedLog {
  readonly redis: Redis;
  /** QUEUE_PREFIX: the deployment's keys in Redis. */
  readonly prefix: string;
}

/** The Redis keys of a deployment's log: the ring, its byte total, and the prefix of each entry's key. */
export const requestLogKeys = (prefix: string) => ({ ring: `${prefix}:requestlog`, bytes: `${prefix}:requestlog-bytes`, entry: `${prefix}:requestlog:` });

export class RequestLog {
  /** Insertion order is age: the first key is the oldest. */
  private readonly failed = new Map<string, { entry: FailedRequest; bytes: number }>();
  private bytes = 0;

  constructor(
    readonly publicUrl: string,
    private readonly shared?: SharedLog,
  ) {}

  /** The `request_log_url` of a request. */
  urlOf(requestId: string, receivedAt: number): string {
    return `${this.publicUrl}${REQUEST_LOG_PATH}/${requestId}?t=${receivedAt}`;
  }

  /** What this process holds: entries and their bytes as stored. */
  usage(): { entries: number; bytes: number } {
    return { entries: this.failed.size, bytes: this.bytes };
  }

  record(failed: FailedRequest): void {
    const { entry, json, bytes } = serialize(failed);
    this.forget(entry.requestId);
    this.failed.set(entry.requestId, { entry, bytes });
    this.bytes += bytes;
    while (this.failed.size > KEPT || this.bytes > PROCESS_BYTES) this.forget(this.failed.keys().next().value!);
    if (this.shared) {
      const { redis, prefix } = this.shared;
      const keys = requestLogKeys(prefix);
      // Best effort, never awaited: a Redis that is away costs the answer nothing.
      redis.eval(RECORD, 3, keys.ring, keys.bytes, keys.entry, entry.requestId, json, bytes, KEPT, REDIS_BYTES, KEPT_SECONDS).catch(() => undefined);
    }
  }

  private forget(requestId: string): void {
    const kept = this.failed.get(requestId);
    if (!kept) return;
    this.failed.delete(requestId);
    this.bytes -= kept.bytes;
  }

  /** The entry of a request, whoever it belongs to: the page checks the account. */
  async find(requestId: string): Promise<FailedRequest | undefined> {
    if (!hasIdShape('req', requestId)) return undefined;
    const own = this.failed.get(requestId);
    if (own || !this.shared) return own?.entry;
    const stored = await this.shared.redis.get(`${requestLogKeys(this.shared.prefix).entry}${requestId}`).catch(() => null);
    return stored === null ? undefined : (JSON.parse(stored) as FailedRequest);
  }
}
