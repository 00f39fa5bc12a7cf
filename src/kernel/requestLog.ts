import type { Redis } from '../lib/redis';
import { html, htmlDocument } from '../hosted/html';
import { hostedPage, messagePage, type HostedPage, type PageResult } from '../hosted/pages';

// Every error body links its request's log (`request_log_url`, shaped as the public API's
// `…/test/logs/req_…?t=…`). The link points here, at the sandbox, not at a dashboard that never
// saw the request: a page that shows what failed. Each process keeps its latest failed requests
// in memory and, when given Redis, also in Redis, so the page opens on any API process or
// replica (a log, not data: a Redis that lost its keys forgets them, and the page says where
// else to look).

/** How many failed requests are remembered (per process, and in Redis); each is an error body of a few hundred bytes. */
const KEPT = 1_000;
/** How long Redis keeps one, besides the count. */
const KEPT_SECONDS = 24 * 3600;

export const REQUEST_LOG_PATH = '/test/logs';

export interface FailedRequest {
  readonly requestId: string;
  /** Unix seconds. */
  readonly receivedAt: number;
  readonly method: string;
  /** The route template (`/v1/customers/{customer}`), never the raw path: a hosted path is a credential. */
  readonly route: string;
  readonly status: number;
  /** The error body as sent. */
  readonly body: string;
}

// One ring for all processes: the newest id first; past KEPT the oldest entry goes with its id.
const RECORD = `
redis.call('SET', KEYS[2] .. ARGV[1], ARGV[2], 'EX', ARGV[4])
if redis.call('LPUSH', KEYS[1], ARGV[1]) > tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[2] .. redis.call('RPOP', KEYS[1]))
end`;

export interface SharedLog {
  readonly redis: Redis;
  /** QUEUE_PREFIX: the deployment's keys in Redis. */
  readonly prefix: string;
}

export class RequestLog {
  private readonly failed = new Map<string, FailedRequest>();

  constructor(
    readonly publicUrl: string,
    private readonly shared?: SharedLog,
  ) {}

  /** The `request_log_url` of a request. */
  urlOf(requestId: string, receivedAt: number): string {
    return `${this.publicUrl}${REQUEST_LOG_PATH}/${requestId}?t=${receivedAt}`;
  }

  record(entry: FailedRequest): void {
    this.failed.set(entry.requestId, entry);
    // A Map iterates in insertion order: the first key is the oldest.
    if (this.failed.size > KEPT) this.failed.delete(this.failed.keys().next().value!);
    if (this.shared) {
      const { redis, prefix } = this.shared;
      // Best effort, never awaited: a Redis that is away costs the answer nothing.
      redis.eval(RECORD, 2, `${prefix}:requestlog`, `${prefix}:requestlog:`, entry.requestId, JSON.stringify(entry), KEPT, KEPT_SECONDS).catch(() => undefined);
    }
  }

  async find(requestId: string): Promise<FailedRequest | undefined> {
    const own = this.failed.get(requestId);
    if (own || !this.shared) return own;
    const { redis, prefix } = this.shared;
    const stored = await redis.get(`${prefix}:requestlog:${requestId}`).catch(() => null);
    return stored === null ? undefined : (JSON.parse(stored) as FailedRequest);
  }
}

const when = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');

function entryPage(entry: FailedRequest, nonce: string): PageResult {
  let pretty = entry.body;
  try {
    pretty = JSON.stringify(JSON.parse(entry.body), null, 2);
  } catch {
    // Shown as sent.
  }
  const title = `${entry.method} ${entry.route}`;
  const body = html`<h1>${title}</h1>
<p class="muted">${entry.requestId} · ${when(entry.receivedAt)}</p>
<p>Answered <strong>${entry.status}</strong> with:</p>
<pre>${pretty}</pre>`;
  return { html: htmlDocument({ title, nonce, body }) };
}

/** The log page of each failed request, at REQUEST_LOG_PATH/req_… (HTML, no key: like a hosted page, the link is the credential). */
export function requestLogPage(log: RequestLog): HostedPage {
  return hostedPage('get', '/:requestId', async ({ pathParams, nonce }) => {
    const entry = await log.find(pathParams.requestId);
    if (entry) return entryPage(entry, nonce);
    const missing = `Sandbank keeps its latest ${KEPT.toLocaleString('en-US')} failed requests, and ${pathParams.requestId} is not among them (older, or lost with Redis's data). Every request is in the API's log: search it for "request_id":"${pathParams.requestId}".`;
    return messagePage(nonce, 'No log for this request', missing, 404);
  });
}
