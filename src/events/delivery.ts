import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../lib/prisma';
import type { Clock } from '../lib/clock';
import { newId } from '../lib/ids';
import { renderEvent, type EventRow } from './render';
import { signatureHeader } from './signature';

// One HTTP attempt of one delivery: claim it, sign the payload afresh, POST it without following
// redirects, record the attempt, and either finish the delivery or schedule its next attempt.

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
  secret: string | null;
  endpoint_api_version: string | null;
  endpoint_status: string | null;
}

/** Keep-alive connections to receivers, shared by every attempt of this process. */
const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 256 });

export function retryDelayMs(schedule: readonly number[], attemptsMade: number, jitter: number, random = Math.random): number {
  const base = schedule[attemptsMade - 1] * 1000;
  return Math.max(0, Math.round(base * (1 + (random() * 2 - 1) * jitter)));
}

export async function attemptDelivery(
  prisma: PrismaClient,
  clock: Clock,
  settings: DeliverySettings,
  deliveryId: string,
  attempt: number,
): Promise<AttemptOutcome> {
  // Claim: only the attempt the job was made for, only while pending, only if nobody holds it.
  const lockSeconds = Math.ceil(settings.timeoutMs / 1000) + 30;
  const claimed = await prisma.$queryRaw<ClaimedDelivery[]>`
    WITH claimed AS (
      UPDATE webhook_deliveries SET locked_until = CURRENT_TIMESTAMP + make_interval(secs => ${lockSeconds})
      WHERE id = ${deliveryId} AND status = 'pending' AND attempts = ${attempt}
        AND (locked_until IS NULL OR locked_until < CURRENT_TIMESTAMP)
      RETURNING id, endpoint_id, event_id, attempts
    )
    SELECT c.id, c.endpoint_id, c.event_id, c.attempts, e.account_id, e.created, e.type, e.api_version, e.data,
           e.request_id, e.idempotency_key, e.pending_webhooks, a.parent_account_id,
           w.url, w.secret, w.api_version AS endpoint_api_version, w.status AS endpoint_status
    FROM claimed c
    JOIN events e ON e.id = c.event_id
    JOIN accounts a ON a.id = e.account_id
    LEFT JOIN webhook_endpoints w ON w.id = c.endpoint_id`;
  const d = claimed[0];
  if (!d) return { kind: 'skipped' };
  if (d.endpoint_status !== 'enabled' || !d.url || !d.secret) {
    await cancelPendingDeliveries(prisma, { deliveryIds: [d.id] });
    return { kind: 'canceled' };
  }

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
  const payload = JSON.stringify(renderEvent(row, { connected: d.parent_account_id !== null, apiVersion: d.endpoint_api_version }));
  const started = clock.nowMs();
  let statusCode: number | null = null;
  let error: string | null = null;
  let excerpt: string | null = null;
  try {
    const res = await request(d.url, {
      method: 'POST',
      dispatcher,
      body: payload,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': USER_AGENT,
        'stripe-signature': signatureHeader(payload, d.secret, Math.floor(clock.nowMs() / 1000)),
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

  // The attempt is always recorded; the delivery only changes while still pending: an endpoint
  // disabled or deleted during the request canceled it (and counted it off pending_webhooks).
  const updated = await prisma.$queryRaw<{ id: string }[]>`
    WITH attempt AS (
      INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_id, attempt, attempted_at, duration_ms, status_code, error, response_excerpt, succeeded)
      VALUES (${newId('whatt')}, ${d.id}, ${d.endpoint_id}, ${d.event_id}, ${attemptsMade}, ${new Date(started)}, ${durationMs},
              ${statusCode}, ${error}, ${excerpt}, ${succeeded})
    ),
    delivery AS (
      UPDATE webhook_deliveries
      SET status = ${status}, attempts = ${attemptsMade}, locked_until = NULL,
          next_attempt_at = CASE WHEN ${status} = 'pending' THEN CURRENT_TIMESTAMP + make_interval(secs => ${delayMs / 1000}) END,
          completed_at = CASE WHEN ${status} = 'pending' THEN NULL ELSE CURRENT_TIMESTAMP END
      WHERE id = ${d.id} AND status = 'pending'
      RETURNING id, event_id
    ),
    counted AS (
      UPDATE events SET pending_webhooks = GREATEST(pending_webhooks - 1, 0)
      FROM delivery WHERE events.id = delivery.event_id AND ${status} <> 'pending'
    )
    SELECT id FROM delivery`;
  if (updated.length === 0) return { kind: 'canceled' };

  if (succeeded) return { kind: 'succeeded', statusCode: statusCode!, durationMs };
  if (retryable) return { kind: 'retry', nextAttempt: attemptsMade, delayMs, statusCode, error, durationMs };
  return { kind: 'failed', statusCode, error, durationMs };
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

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
    return `Timed out after ${timeoutMs} ms`;
  }
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? 'request failed';
  return (code ? `${code}: ${message}` : message).slice(0, 500);
}
