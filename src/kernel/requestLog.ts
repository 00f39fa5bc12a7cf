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
  /** Every recent request of each account, failed or not (the console's request log). */
  readonly recent: RecentRequests;

  constructor(
    readonly publicUrl: string,
    private readonly shared?: SharedLog,
  ) {
    this.recent = new RecentRequests(shared);
  }

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

// Recent requests, failed or not, of each platform account: what the console's request log shows
// (src/console/requests.ts). An entry is the request's line, never a body: method, path, status,
// ids, the idempotency key and the key's masked hint. Recording sits on every API request's path,
// so it only writes the request's raw fields into a fixed ring per account (and a buffer): cutting,
// the key hint's short form and serializing happen when they are read or flushed, off the request
// path. The buffer goes to Redis in one script call per RECENT_FLUSH_MS (or RECENT_BATCH entries),
// not one round trip per request. Bounded as the failed ones are: RECENT_PER_ACCOUNT entries of at
// most RECENT_ENTRY_BYTES for at most RECENT_ACCOUNTS accounts (the least recently active go
// first), in each process and in Redis.

/** Recent requests kept per account. */
export const RECENT_PER_ACCOUNT = 100;
/** Accounts whose recent requests are kept (each process, and Redis). */
export const RECENT_ACCOUNTS = 200;
/** Bytes one recent entry may take: its fields are cut to fit. So at most 200 × 100 × 1 KB = 20 MB, about 6 MB in practice. */
export const RECENT_ENTRY_BYTES = 1024;
const RECENT_FLUSH_MS = 200;
const RECENT_BATCH = 500;
/** Unflushed entries held while Redis is away; past this the newest are dropped from Redis's copy (the process's ring keeps them). */
const RECENT_BUFFER_MAX = 5_000;
const PATH_CHARS = 300;

export interface RecentRequest {
  readonly requestId: string;
  /** The platform account whose key made the request: its console lists it. */
  readonly account: string;
  /** Unix milliseconds (sorts requests made in the same second). */
  readonly receivedAtMs: number;
  readonly method: string;
  /**
   * The path as requested, without its query (ids, never a credential: those go in bodies and
   * headers). Recorded as the raw URL; its query goes when the entry is read.
   */
  readonly path: string;
  /** The route template; `unmatched` for an unknown URL. */
  readonly route: string;
  readonly status: number;
  readonly idempotencyKey: string | null;
  /** The key's masked form, `sk_test_…abcd` (recorded as kernel/auth.ts masks it: shortened when read). */
  readonly key: string;
  /** The connected account it acted as (`Stripe-Account`), if any. */
  readonly stripeAccount: string | null;
  /** Made by the console for a signed-in browser. */
  readonly console: boolean;
}

/** `sk_test_****abcd` (kernel/auth.ts maskKey) as `sk_test_…abcd`. */
export const shortKeyHint = (hint: string): string => hint.replace(/\*+/, '…');

function withoutQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** A recorded entry as shown and stored: fields cut to fit RECENT_ENTRY_BYTES, and its JSON. */
function cutRecent(entry: RecentRequest): { entry: RecentRequest; json: string } {
  const cut: RecentRequest = {
    ...entry,
    path: withoutQuery(entry.path).slice(0, PATH_CHARS),
    route: entry.route.slice(0, PATH_CHARS),
    method: entry.method.slice(0, 10),
    idempotencyKey: entry.idempotencyKey === null ? null : entry.idempotencyKey.slice(0, 255),
    key: shortKeyHint(entry.key).slice(0, 40),
    stripeAccount: entry.stripeAccount === null ? null : entry.stripeAccount.slice(0, 64),
  };
  // Cut as above, the JSON fits RECENT_ENTRY_BYTES unless a field is multi-byte text; then the path and key go.
  let json = JSON.stringify(cut);
  if (json.length * 3 > RECENT_ENTRY_BYTES && Buffer.byteLength(json) > RECENT_ENTRY_BYTES) {
    const smaller = { ...cut, path: cut.route, idempotencyKey: cut.idempotencyKey === null ? null : cut.idempotencyKey.slice(0, 40) };
    return { entry: smaller, json: JSON.stringify(smaller) };
  }
  return { entry: cut, json };
}

// One call per flush. KEYS: the accounts' sorted set (score: last write); ARGV: the list key
// prefix, RECENT_PER_ACCOUNT, RECENT_ACCOUNTS, TTL, now, then account and entry JSON pairs, oldest
// first. Past RECENT_ACCOUNTS accounts, the least recently written go with their lists.
const RECORD_RECENT = `
local prefix, kept, accounts, ttl, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
for i = 6, #ARGV, 2 do
  local key = prefix .. ARGV[i]
  redis.call('LPUSH', key, ARGV[i + 1])
  redis.call('LTRIM', key, 0, kept - 1)
  redis.call('EXPIRE', key, ttl)
  redis.call('ZADD', KEYS[1], now, ARGV[i])
end
local over = redis.call('ZCARD', KEYS[1]) - accounts
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[1], over)
  for j = 1, #gone, 2 do redis.call('DEL', prefix .. gone[j]) end
end
redis.call('EXPIRE', KEYS[1], ttl)`;

/** The Redis keys of the recent requests: the accounts' set, and the prefix of each account's list. */
export const recentLogKeys = (prefix: string) => ({ accounts: `${prefix}:recentlog-accounts`, list: `${prefix}:recentlog:` });

/** One account's latest entries, as recorded: a fixed ring, the oldest overwritten. */
class Ring {
  readonly entries: (RecentRequest | undefined)[] = new Array(RECENT_PER_ACCOUNT);
  next = 0;
  size = 0;
  /** The record tick of its last write: the least recently written account goes first. */
  used = 0;

  push(entry: RecentRequest): void {
    this.entries[this.next] = entry;
    this.next = this.next + 1 === RECENT_PER_ACCOUNT ? 0 : this.next + 1;
    if (this.size < RECENT_PER_ACCOUNT) this.size++;
  }

  newestFirst(): RecentRequest[] {
    const out: RecentRequest[] = [];
    for (let i = 1; i <= this.size; i++) out.push(this.entries[(this.next - i + RECENT_PER_ACCOUNT) % RECENT_PER_ACCOUNT]!);
    return out;
  }
}

/** Each process's recent requests, and its buffer for Redis. */
export class RecentRequests {
  private readonly byAccount = new Map<string, Ring>();
  private tick = 0;
  private buffer: RecentRequest[] = [];
  private flushing: NodeJS.Timeout | undefined;

  constructor(private readonly shared?: SharedLog) {}

  /** Keeps the request's raw fields; nothing is cut or serialized here (see cutRecent). */
  record(request: RecentRequest): void {
    let ring = this.byAccount.get(request.account);
    if (!ring) {
      if (this.byAccount.size >= RECENT_ACCOUNTS) this.forgetLeastRecent();
      ring = new Ring();
      this.byAccount.set(request.account, ring);
    }
    ring.used = ++this.tick;
    ring.push(request);
    if (!this.shared || this.buffer.length >= RECENT_BUFFER_MAX) return;
    this.buffer.push(request);
    if (this.buffer.length >= RECENT_BATCH) void this.flush();
    else this.flushing ??= setTimeout(() => void this.flush(), RECENT_FLUSH_MS).unref();
  }

  /** Only when a new account makes one too many: a scan of RECENT_ACCOUNTS rings. */
  private forgetLeastRecent(): void {
    let oldest: string | undefined;
    let used = Infinity;
    for (const [account, ring] of this.byAccount) {
      if (ring.used < used) {
        used = ring.used;
        oldest = account;
      }
    }
    if (oldest !== undefined) this.byAccount.delete(oldest);
  }

  /** Sends the buffer to Redis (best effort, never awaited by a request). */
  flush(): Promise<void> {
    clearTimeout(this.flushing);
    this.flushing = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (!this.shared || batch.length === 0) return Promise.resolve();
    const { redis, prefix } = this.shared;
    const keys = recentLogKeys(prefix);
    const args: string[] = [];
    for (const entry of batch) args.push(entry.account, cutRecent(entry).json);
    return redis
      .eval(RECORD_RECENT, 1, keys.accounts, keys.list, RECENT_PER_ACCOUNT, RECENT_ACCOUNTS, KEPT_SECONDS, Date.now(), ...args)
      .then(() => undefined)
      .catch(() => undefined);
  }

  /** An account's recent requests, newest first: every process's (Redis), else this one's. */
  async of(account: string): Promise<RecentRequest[]> {
    const own = (this.byAccount.get(account)?.newestFirst() ?? []).map((entry) => cutRecent(entry).entry);
    if (!this.shared) return own;
    const stored = await this.shared.redis.lrange(`${recentLogKeys(this.shared.prefix).list}${account}`, 0, RECENT_PER_ACCOUNT - 1).catch(() => undefined);
    if (stored === undefined) return own;
    // What this process hasn't flushed yet is in its own ring only.
    const seen = new Set<string>();
    const all: RecentRequest[] = [];
    for (const entry of [...own, ...stored.map((s) => JSON.parse(s) as RecentRequest)]) {
      if (seen.has(entry.requestId)) continue;
      seen.add(entry.requestId);
      all.push(entry);
    }
    return all.sort((a, b) => b.receivedAtMs - a.receivedAtMs).slice(0, RECENT_PER_ACCOUNT);
  }

  /** What this process holds. */
  usage(): { accounts: number; entries: number } {
    let entries = 0;
    for (const ring of this.byAccount.values()) entries += ring.size;
    return { accounts: this.byAccount.size, entries };
  }
}
