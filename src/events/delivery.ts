import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../lib/prisma';
import { recordingDespiteOutages } from '../lib/outage';
import type { SqlClient } from '../lib/sql';
import type { Deps } from '../kernel/route';
import { createBatcher } from '../lib/batcher';
import { Encryption } from '../lib/encryption';
import { newId } from '../lib/ids';
import { checkHost, DestinationRefusedError, findRefusal, guardedLookup, type DestinationPolicy } from '../lib/netguard';
import { claimDeliveries, completeAttempts, OUTCOME_UNKNOWN, type Claim, type Completion } from './queries';
import type { VersionRenderer } from '../kernel/versions';
import { renderDelivery, type EventRow } from './render';
import { signatureHeader } from './signature';

// One HTTP attempt of one delivery: claim it, sign the payload afresh (with the endpoint's secret,
// unsealed), POST it without following redirects, record the attempt, and either finish the
// delivery or schedule its next attempt. The destination's addresses are checked first
// (src/lib/netguard.ts): a refused one is recorded as a failed attempt saying why, and nothing is sent.

/** Delivery ids; fan-out makes the same shape in SQL (`'whdel_' || replace(gen_random_uuid()::text, '-', '')`). */
export const newDeliveryId = (): string => `whdel_${randomUUID().replace(/-/g, '')}`;

export const USER_AGENT = 'Stripe/1.0 (+https://stripe.com/docs/webhooks)';
const EXCERPT_LIMIT = 1000;

export interface DeliverySettings {
  timeoutMs: number;
  /** Seconds before each retry. */
  retrySchedule: readonly number[];
  /** ±fraction applied to each retry delay, so retries of many deliveries spread out. */
  jitter?: number;
  /** Which addresses a delivery may reach. */
  destinations: DestinationPolicy;
}

export type AttemptOutcome =
  | { kind: 'skipped' }
  | { kind: 'canceled' }
  | { kind: 'succeeded'; statusCode: number; durationMs: number }
  | { kind: 'retry'; nextAttempt: number; delayMs: number; statusCode: number | null; error: string | null; durationMs: number }
  | { kind: 'failed'; statusCode: number | null; error: string | null; durationMs: number };

interface ClaimedDelivery {
  id: string;
  /** The claim that took the delivery: one asked for twice in a batch goes to one of them. */
  attempt_id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  account_id: string;
  created: number;
  type: string;
  api_version: string;
  data: unknown;
  request_id: string | null;
  idempotency_key: string | null;
  pending_webhooks: number;
  parent_account_id: string | null;
  connected_account_id: string | null;
  url: string | null;
  /** Sealed, or plain text in a row an earlier version wrote and start-up hasn't sealed yet. */
  secret: string | null;
  endpoint_api_version: string | null;
  endpoint_status: string | null;
  /** What the deliveries claimed in one batch share. */
  batch: ClaimBatch;
}

/**
 * Keep-alive connections to receivers, shared by every attempt under one policy. Each new
 * connection resolves its host once, checks every address, and connects to those checked
 * addresses (the Host header and TLS servername stay the URL's host).
 */
const dispatchers = new WeakMap<DestinationPolicy, Agent>();

function dispatcherFor(policy: DestinationPolicy): Agent {
  let agent = dispatchers.get(policy);
  if (!agent) {
    agent = new Agent({ keepAliveTimeout: 10_000, connections: 256, connect: { lookup: guardedLookup(policy) } });
    dispatchers.set(policy, agent);
  }
  return agent;
}

export function retryDelayMs(schedule: readonly number[], attemptsMade: number, jitter: number, random = Math.random): number {
  const base = schedule[attemptsMade - 1] * 1000;
  return Math.max(0, Math.round(base * (1 + (random() * 2 - 1) * jitter)));
}

/** Which attempt of which delivery a job makes, and as whom. */
export interface AttemptRequest {
  deliveryId: string;
  /** The attempt the job was made for (0 for the first). */
  attempt: number;
  /** The job making it: the lease's holder. */
  holder: string;
  /**
   * The job ran before and its worker stopped renewing its lock (killed, say), so a lease this job
   * holds is that dead run's and is taken over instead of waited out. Another job's lease never is.
   */
  takeOver?: boolean;
}

export async function attemptDelivery(
  { prisma, sql, clock, encryption, versions }: Pick<Deps, 'prisma' | 'sql' | 'clock' | 'encryption' | 'versions'>,
  settings: DeliverySettings,
  { deliveryId, attempt, holder, takeOver = false }: AttemptRequest,
): Promise<AttemptOutcome> {
  // Claim: only the attempt the job was made for, only while pending, only if nobody holds it.
  // The lease outlasts the request (bounded by the timeout) and the recording of its outcome.
  const lockSeconds = Math.ceil(settings.timeoutMs / 1000) + 5;
  // The attempt is in the log (started) before anything is sent: a worker that dies mid-request
  // leaves it there, and the next claim marks it unknown.
  const attemptId = newId('whatt');
  const d = await batchersOf(sql).claim({ id: deliveryId, attempt, lockSeconds, holder, takeOver, attemptId, startedAtMs: clock.nowMs() });
  if (!d) return { kind: 'skipped' };
  if (d.endpoint_status !== 'enabled' || !d.url || !d.secret) {
    await cancelPendingDeliveries(prisma, { deliveryIds: [d.id] });
    return { kind: 'canceled' };
  }
  const secret = await secretOf(d, d.secret, encryption);

  const payload = payloadOf(d, versions);
  const started = clock.nowMs();
  let statusCode: number | null = null;
  let error: string | null = null;
  let excerpt: string | null = null;
  try {
    // An IP literal is connected to without a lookup, so it is checked here; names are checked
    // by the dispatcher's lookup (and under loopbackOnly refused here, before any DNS query).
    const host = checkHost(new URL(d.url).hostname, settings.destinations);
    if ('refused' in host) throw new DestinationRefusedError(host.refused);
    const res = await request(d.url, {
      method: 'POST',
      dispatcher: dispatcherFor(settings.destinations),
      body: payload,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': USER_AGENT,
        'stripe-signature': signatureHeader(payload, secret, Math.floor(clock.nowMs() / 1000)),
        'cache-control': 'no-cache',
        accept: '*/*; q=0.5, application/xml',
      },
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    statusCode = res.statusCode;
    excerpt = await readExcerpt(res.body);
  } catch (err) {
    error = describeNetworkError(err, settings.timeoutMs);
  }
  const durationMs = Math.max(0, Math.round(clock.nowMs() - started));
  const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
  if (!succeeded && error === null) error = `HTTP ${statusCode}`;
  const attemptsMade = d.attempts + 1;
  const retryable = !succeeded && attemptsMade <= settings.retrySchedule.length;
  const delayMs = retryable ? retryDelayMs(settings.retrySchedule, attemptsMade, settings.jitter ?? 0.1) : 0;
  const status = succeeded ? 'succeeded' : retryable ? 'pending' : 'failed';

  const stillPending = await batchersOf(sql).complete({
    attemptId,
    deliveryId: d.id,
    attempt: attemptsMade,
    attemptedAtMs: started,
    durationMs,
    statusCode,
    error,
    excerpt,
    succeeded,
    status,
    delaySeconds: delayMs / 1000,
  });
  if (!stillPending) return { kind: 'canceled' };

  if (succeeded) return { kind: 'succeeded', statusCode: statusCode!, durationMs };
  if (retryable) return { kind: 'retry', nextAttempt: attemptsMade, delayMs, statusCode, error, durationMs };
  return { kind: 'failed', statusCode, error, durationMs };
}

const isDeadlock = (err: unknown): boolean => /deadlock detected|40P01/.test(String((err as Error)?.message ?? err));

/** Each batch is one autocommit statement, so running it again after a deadlock is safe. */
async function retryingDeadlocks<T>(statement: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await statement();
    } catch (err) {
      if (tries >= 5 || !isDeadlock(err)) throw err;
    }
  }
}


/** Kept only while the batch's attempts run: nothing outlives them. */
interface ClaimBatch {
  /** Payloads by event and version: an event's endpoints share them. */
  payloads: Map<string, string>;
  /** Endpoints' secrets, opened once per batch, by their sealed value. */
  secrets: Map<string, Promise<string>>;
}

/** The endpoint's signing secret, opened (a secret an earlier version stored in plain text is used as it is). */
function secretOf(d: ClaimedDelivery, stored: string, encryption: Encryption): Promise<string> {
  if (!Encryption.isSealed(stored)) return Promise.resolve(stored);
  let opened = d.batch.secrets.get(stored);
  if (!opened) {
    opened = encryption.open(stored);
    d.batch.secrets.set(stored, opened);
  }
  return opened;
}

/**
 * The payload as the delivery's endpoint reads it, rendered once per event and version in a batch:
 * the endpoints of one event (claimed together when fan-out made their jobs together) share it.
 */
function payloadOf(d: ClaimedDelivery, versions: VersionRenderer): string {
  const version = d.endpoint_api_version ?? d.api_version;
  const key = `${d.event_id} ${version}`;
  let payload = d.batch.payloads.get(key);
  if (payload === undefined) {
    const row: EventRow = {
      id: d.event_id,
      accountId: d.account_id,
      created: d.created,
      type: d.type,
      apiVersion: d.api_version,
      data: d.data as EventRow['data'],
      requestId: d.request_id,
      idempotencyKey: d.idempotency_key,
      pendingWebhooks: d.pending_webhooks,
      connectedAccountId: d.connected_account_id,
    };
    payload = JSON.stringify(renderDelivery(row, versions, { connected: d.parent_account_id !== null, apiVersion: version }));
    d.batch.payloads.set(key, payload);
  }
  return payload;
}

/**
 * Claims many deliveries in one statement. A delivery asked for twice in a batch (a group job and
 * the reconciler's single job, say) goes to the asker whose attempt row the statement wrote.
 */
async function claimBatch(sql: SqlClient, items: Claim[]): Promise<(ClaimedDelivery | undefined)[]> {
  const rows = await retryingDeadlocks(() => sql.query<Omit<ClaimedDelivery, 'batch'>>(claimDeliveries(items)));
  const batch: ClaimBatch = { payloads: new Map(), secrets: new Map() };
  const byAttempt = new Map(rows.map((r) => [r.attempt_id, { ...r, batch }]));
  return items.map((i) => {
    const row = byAttempt.get(i.attemptId);
    return row && row.id === i.id && row.attempts === i.attempt ? row : undefined;
  });
}

/**
 * Records many attempts in one statement. The attempt is always recorded; the delivery only
 * changes while still pending: an endpoint disabled or deleted during the request canceled it
 * (and counted it off pending_webhooks). Each event loses one pending webhook per delivery finished.
 */
async function completeBatch(sql: SqlClient, items: Completion[]): Promise<boolean[]> {
  // The requests were sent: a database outage delays their recording, it doesn't repeat them.
  const rows = await recordingDespiteOutages(() => retryingDeadlocks(() => sql.query<{ id: string }>(completeAttempts(items))));
  const updated = new Set(rows.map((r) => r.id));
  return items.map((i) => updated.has(i.deliveryId));
}

// Per client, so each database (tests run several) gets its own batches.
const batchers = new WeakMap<SqlClient, { claim: (r: Claim) => Promise<ClaimedDelivery | undefined>; complete: (c: Completion) => Promise<boolean> }>();

function batchersOf(sql: SqlClient) {
  let b = batchers.get(sql);
  if (!b) {
    b = {
      claim: createBatcher((items: Claim[]) => claimBatch(sql, items), { maxItems: 200, maxConcurrent: 2 }),
      complete: createBatcher((items: Completion[]) => completeBatch(sql, items), { maxItems: 200, maxConcurrent: 1 }),
    };
    batchers.set(sql, b);
  }
  return b;
}

/**
 * Cancels pending deliveries, by id or all of an endpoint's (when it is disabled or deleted, in
 * that transaction), and keeps each event's pending_webhooks true.
 */
export async function cancelPendingDeliveries(
  prisma: Pick<PrismaClient, '$executeRaw'>,
  target: { deliveryIds: string[] } | { endpointId: string },
): Promise<number> {
  const which = 'endpointId' in target ? Prisma.sql`endpoint_id = ${target.endpointId}` : Prisma.sql`id = ANY (${target.deliveryIds}::text[])`;
  // An attempt still started is a dead run's (a live one finishes it anyway, unknown or not).
  return prisma.$executeRaw`
    WITH canceled AS (
      UPDATE webhook_deliveries SET status = 'canceled', locked_until = NULL, locked_by = NULL, next_attempt_at = NULL, completed_at = CURRENT_TIMESTAMP
      WHERE ${which} AND status = 'pending'
      RETURNING id, event_id
    ),
    unknown AS (
      UPDATE webhook_attempts a SET outcome = 'unknown', error = ${OUTCOME_UNKNOWN}
      FROM canceled c WHERE a.delivery_id = c.id AND a.outcome = 'started'
    ),
    per_event AS (SELECT event_id, count(*) AS n FROM canceled GROUP BY event_id)
    UPDATE events SET pending_webhooks = GREATEST(pending_webhooks - per_event.n, 0)
    FROM per_event WHERE events.id = per_event.event_id`;
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    text += chunk.toString('utf8');
    if (text.length >= EXCERPT_LIMIT) {
      body.destroy?.();
      break;
    }
  }
  return text.slice(0, EXCERPT_LIMIT);
}

/** An undici request that ran out of time: the whole call's signal, or the headers' or body's own timeout. */
export function isTimeoutError(err: unknown): boolean {
  const e = err as { name?: string; code?: string };
  return e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT';
}

/** What went wrong with an outbound request, in one line for a record (a refusal says why). */
export function describeNetworkError(err: unknown, timeoutMs: number): string {
  const refused = findRefusal(err);
  if (refused) return refused.message.slice(0, 500);
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (isTimeoutError(err)) return `Timed out after ${timeoutMs} ms`;
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? 'request failed';
  return (code ? `${code}: ${message}` : message).slice(0, 500);
}
