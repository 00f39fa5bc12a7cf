import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../lib/prisma';
import type { Deps } from '../kernel/route';
import { createBatcher } from '../lib/batcher';
import { Encryption } from '../lib/encryption';
import { newId } from '../lib/ids';
import { checkHost, DestinationRefusedError, findRefusal, guardedLookup, type DestinationPolicy } from '../lib/netguard';
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
  url: string | null;
  /** Sealed, or plain text in a row an earlier version wrote and start-up hasn't sealed yet. */
  secret: string | null;
  endpoint_api_version: string | null;
  endpoint_status: string | null;
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

/**
 * `takeOver`: the job ran before and its worker stopped renewing its lock (killed, say), so the
 * row's lease is that dead worker's and is taken over instead of waited out.
 */
export async function attemptDelivery(
  { prisma, clock, encryption }: Pick<Deps, 'prisma' | 'clock' | 'encryption'>,
  settings: DeliverySettings,
  deliveryId: string,
  attempt: number,
  takeOver = false,
): Promise<AttemptOutcome> {
  // Claim: only the attempt the job was made for, only while pending, only if nobody holds it.
  // The lease outlasts the request (bounded by the timeout) and the recording of its outcome.
  const lockSeconds = Math.ceil(settings.timeoutMs / 1000) + 5;
  const d = await batchersOf(prisma).claim({ id: deliveryId, attempt, lockSeconds, takeOver });
  if (!d) return { kind: 'skipped' };
  if (d.endpoint_status !== 'enabled' || !d.url || !d.secret) {
    await cancelPendingDeliveries(prisma, { deliveryIds: [d.id] });
    return { kind: 'canceled' };
  }
  const secret = Encryption.isSealed(d.secret) ? await encryption.open(d.secret) : d.secret;

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
  };
  const payload = JSON.stringify(renderDelivery(row, { connected: d.parent_account_id !== null, apiVersion: d.endpoint_api_version }));
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

  const stillPending = await batchersOf(prisma).complete({
    attemptId: newId('whatt'),
    deliveryId: d.id,
    endpointId: d.endpoint_id,
    eventId: d.event_id,
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

interface ClaimRequest {
  id: string;
  attempt: number;
  lockSeconds: number;
  takeOver: boolean;
}

interface Completion {
  attemptId: string;
  deliveryId: string;
  endpointId: string;
  eventId: string;
  attempt: number;
  attemptedAtMs: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
  succeeded: boolean;
  status: 'succeeded' | 'pending' | 'failed';
  delaySeconds: number;
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

/** Claims many deliveries in one statement; a delivery asked for twice in a batch goes to the first asker. */
async function claimBatch(prisma: PrismaClient, items: ClaimRequest[]): Promise<(ClaimedDelivery | undefined)[]> {
  const rows = await retryingDeadlocks(() => prisma.$queryRaw<ClaimedDelivery[]>`
    WITH wanted AS (
      SELECT * FROM unnest(${items.map((i) => i.id)}::text[], ${items.map((i) => i.attempt)}::int[],
                           ${items.map((i) => i.lockSeconds)}::float8[], ${items.map((i) => i.takeOver)}::bool[])
        AS t(id, attempt, lock_seconds, take_over)
    ),
    claimed AS (
      UPDATE webhook_deliveries d SET locked_until = CURRENT_TIMESTAMP + make_interval(secs => wanted.lock_seconds)
      FROM wanted
      WHERE d.id = wanted.id AND d.status = 'pending' AND d.attempts = wanted.attempt
        AND (d.locked_until IS NULL OR d.locked_until < CURRENT_TIMESTAMP OR wanted.take_over)
      RETURNING d.id, d.endpoint_id, d.event_id, d.attempts
    )
    SELECT c.id, c.endpoint_id, c.event_id, c.attempts, e.account_id, e.created, e.type, e.api_version, e.data,
           e.request_id, e.idempotency_key, e.pending_webhooks, a.parent_account_id,
           w.url, w.secret, w.api_version AS endpoint_api_version, w.status AS endpoint_status
    FROM claimed c
    JOIN events e ON e.id = c.event_id
    JOIN accounts a ON a.id = e.account_id
    LEFT JOIN webhook_endpoints w ON w.id = c.endpoint_id`);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return items.map((i) => {
    const row = byId.get(i.id);
    if (!row || row.attempts !== i.attempt) return undefined;
    byId.delete(i.id);
    return row;
  });
}

/**
 * Records many attempts in one statement. The attempt is always recorded; the delivery only
 * changes while still pending: an endpoint disabled or deleted during the request canceled it
 * (and counted it off pending_webhooks). Each event loses one pending webhook per delivery finished.
 */
async function completeBatch(prisma: PrismaClient, items: Completion[]): Promise<boolean[]> {
  const col = <K extends keyof Completion>(k: K) => items.map((i) => i[k]);
  const rows = await retryingDeadlocks(() => prisma.$queryRaw<{ id: string }[]>`
    WITH done AS (
      SELECT * FROM unnest(${col('attemptId')}::text[], ${col('deliveryId')}::text[], ${col('endpointId')}::text[],
                           ${col('eventId')}::text[], ${col('attempt')}::int[], ${col('attemptedAtMs')}::float8[],
                           ${col('durationMs')}::int[], ${col('statusCode')}::int[], ${col('error')}::text[],
                           ${col('excerpt')}::text[], ${col('succeeded')}::bool[], ${col('status')}::text[],
                           ${col('delaySeconds')}::float8[])
        AS t(attempt_id, delivery_id, endpoint_id, event_id, attempt, attempted_at_ms, duration_ms, status_code, error,
             excerpt, succeeded, status, delay_seconds)
    ),
    attempt AS (
      INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_id, attempt, attempted_at, duration_ms, status_code, error, response_excerpt, succeeded)
      SELECT attempt_id, delivery_id, endpoint_id, event_id, attempt, to_timestamp(attempted_at_ms / 1000), duration_ms,
             status_code, error, excerpt, succeeded
      FROM done
    ),
    delivery AS (
      UPDATE webhook_deliveries d
      SET status = done.status, attempts = done.attempt, locked_until = NULL,
          next_attempt_at = CASE WHEN done.status = 'pending' THEN CURRENT_TIMESTAMP + make_interval(secs => done.delay_seconds) END,
          completed_at = CASE WHEN done.status = 'pending' THEN NULL ELSE CURRENT_TIMESTAMP END
      FROM done
      WHERE d.id = done.delivery_id AND d.status = 'pending'
      RETURNING d.id, d.event_id, d.status
    ),
    per_event AS (SELECT event_id, count(*) AS n FROM delivery WHERE status <> 'pending' GROUP BY event_id),
    counted AS (
      UPDATE events SET pending_webhooks = GREATEST(pending_webhooks - per_event.n, 0)
      FROM per_event WHERE events.id = per_event.event_id
    )
    SELECT id FROM delivery`);
  const updated = new Set(rows.map((r) => r.id));
  return items.map((i) => updated.has(i.deliveryId));
}

// Per client, so each database (tests run several) gets its own batches.
const batchers = new WeakMap<PrismaClient, { claim: (r: ClaimRequest) => Promise<ClaimedDelivery | undefined>; complete: (c: Completion) => Promise<boolean> }>();

function batchersOf(prisma: PrismaClient) {
  let b = batchers.get(prisma);
  if (!b) {
    b = {
      claim: createBatcher((items: ClaimRequest[]) => claimBatch(prisma, items), { maxItems: 200, maxConcurrent: 2 }),
      complete: createBatcher((items: Completion[]) => completeBatch(prisma, items), { maxItems: 200, maxConcurrent: 1 }),
    };
    batchers.set(prisma, b);
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
  return prisma.$executeRaw`
    WITH canceled AS (
      UPDATE webhook_deliveries SET status = 'canceled', locked_until = NULL, next_attempt_at = NULL, completed_at = CURRENT_TIMESTAMP
      WHERE ${which} AND status = 'pending'
      RETURNING event_id
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
