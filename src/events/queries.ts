import { sql } from '../lib/sql';

// The delivery path's hot statements, on the `pg` pool (src/lib/sql.ts: named prepared
// statements). Each takes a whole batch as parallel arrays and is one autocommit statement, so a
// batch is all or nothing.

/**
 * Fan-out: one pending delivery per matching endpoint of each event (`explicitOnly`: the types a `*`
 * endpoint doesn't get). Events are locked in id order so that batches overlapping in events cannot
 * deadlock. Answers the new deliveries (id, event_id).
 */
export const fanOut = (eventIds: readonly string[], explicitOnly: readonly string[]) => sql`
    WITH ev AS (
      SELECT e.id, e.account_id, e.type, a.parent_account_id, e.connected_account_id
      FROM events e JOIN accounts a ON a.id = e.account_id
      WHERE e.id = ANY (${eventIds}::text[]) AND e.fanned_out_at IS NULL
      ORDER BY e.id
      FOR UPDATE OF e
    ),
    targets AS (
      SELECT ev.id AS event_id, w.id AS endpoint_id
      FROM ev JOIN webhook_endpoints w
        ON w.status = 'enabled'
       -- An event about a deleted connected account (connected_account_id) is its platform's, for its Connect endpoints.
       AND ((w.account_id = ev.account_id AND w.connect = (ev.connected_account_id IS NOT NULL)) OR (w.account_id = ev.parent_account_id AND w.connect))
       AND (ev.type = ANY (w.enabled_events) OR ('*' = ANY (w.enabled_events) AND NOT ev.type = ANY (${explicitOnly}::text[])))
    ),
    inserted AS (
      INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, next_attempt_at)
      SELECT 'whdel_' || replace(gen_random_uuid()::text, '-', ''), event_id, endpoint_id, 'pending', CURRENT_TIMESTAMP
      FROM targets
      ON CONFLICT (event_id, endpoint_id, resend_number) DO NOTHING
      RETURNING id, event_id
    ),
    per_event AS (SELECT event_id, count(*) AS n FROM inserted GROUP BY event_id),
    -- Added to, not set: a resend made before fan-out already counted its own delivery.
    marked AS (
      UPDATE events SET fanned_out_at = CURRENT_TIMESTAMP, pending_webhooks = pending_webhooks + COALESCE(per_event.n, 0)
      FROM ev LEFT JOIN per_event ON per_event.event_id = ev.id
      WHERE events.id = ev.id
      RETURNING events.id
    )
    SELECT id, event_id FROM inserted`;

/** One claim: the attempt a job makes of a delivery, the lease's length and holder (the job), and whether it may take over. */
export interface Claim {
  id: string;
  attempt: number;
  lockSeconds: number;
  holder: string;
  /** The job ran before: a lease it holds itself is a dead run's, taken over rather than waited out. */
  takeOver: boolean;
  /** The attempt's row, written as started with the claim (before anything is sent). */
  attemptId: string;
  startedAtMs: number;
}

/** What the log says of an attempt whose worker stopped before recording how it ended. */
export const OUTCOME_UNKNOWN =
  'The worker stopped during this attempt, before its outcome was recorded: the endpoint may have received it.';

/**
 * Claims: only the attempt each job was made for, only while pending, only if nobody holds it (or
 * only a dead run of the same job does). Each claim records its attempt as started, before the
 * request goes out, and marks an attempt a dead run left started as of unknown outcome. Answers
 * each claimed delivery with its event, account and endpoint.
 */
export const claimDeliveries = (items: readonly Claim[]) => sql`
    WITH wanted AS (
      SELECT * FROM unnest(${items.map((i) => i.id)}::text[], ${items.map((i) => i.attempt)}::int[],
                           ${items.map((i) => i.lockSeconds)}::float8[], ${items.map((i) => i.holder)}::text[],
                           ${items.map((i) => i.takeOver)}::bool[], ${items.map((i) => i.attemptId)}::text[],
                           ${items.map((i) => i.startedAtMs)}::float8[])
        AS t(id, attempt, lock_seconds, holder, take_over, attempt_id, started_at_ms)
    ),
    claimed AS (
      UPDATE webhook_deliveries d
      SET locked_until = CURRENT_TIMESTAMP + make_interval(secs => wanted.lock_seconds), locked_by = wanted.holder
      FROM wanted
      WHERE d.id = wanted.id AND d.status = 'pending' AND d.attempts = wanted.attempt
        AND (d.locked_until IS NULL OR d.locked_until < CURRENT_TIMESTAMP OR (wanted.take_over AND d.locked_by = wanted.holder))
      RETURNING d.id, d.endpoint_id, d.event_id, d.attempts, wanted.attempt_id, wanted.started_at_ms
    ),
    unknown AS (
      UPDATE webhook_attempts a SET outcome = 'unknown', error = ${OUTCOME_UNKNOWN}
      FROM claimed c WHERE a.delivery_id = c.id AND a.outcome = 'started'
    ),
    started AS (
      INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_id, attempt, attempted_at, duration_ms, succeeded, outcome)
      SELECT c.attempt_id, c.id, c.endpoint_id, c.event_id, c.attempts + 1, to_timestamp(c.started_at_ms / 1000), 0, false, 'started'
      FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id
      -- A delivery whose endpoint went away is canceled, not attempted.
      WHERE w.status = 'enabled' AND w.url IS NOT NULL AND w.secret IS NOT NULL
    )
    SELECT c.id, c.attempt_id, c.endpoint_id, c.event_id, c.attempts, e.account_id, e.created, e.type, e.api_version, e.data,
           e.request_id, e.idempotency_key, e.pending_webhooks, a.parent_account_id, e.connected_account_id,
           w.url, w.secret, w.api_version AS endpoint_api_version, w.status AS endpoint_status
    FROM claimed c
    JOIN events e ON e.id = c.event_id
    JOIN accounts a ON a.id = e.account_id
    LEFT JOIN webhook_endpoints w ON w.id = c.endpoint_id`;

/** One attempt's outcome, to record. */
export interface Completion {
  attemptId: string;
  deliveryId: string;
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

/**
 * Completions: each attempt's row (started at its claim) is finished, always, even when another
 * run marked it unknown meanwhile; the delivery changes only while still pending (an
 * endpoint disabled or deleted during the request canceled it and counted it off), and each event
 * loses one pending webhook per delivery finished. Answers the deliveries updated.
 */
export const completeAttempts = (items: readonly Completion[]) => {
  const col = <K extends keyof Completion>(k: K) => items.map((i) => i[k]);
  return sql`
    WITH done AS (
      SELECT * FROM unnest(${col('attemptId')}::text[], ${col('deliveryId')}::text[], ${col('attempt')}::int[],
                           ${col('attemptedAtMs')}::float8[], ${col('durationMs')}::int[], ${col('statusCode')}::int[],
                           ${col('error')}::text[], ${col('excerpt')}::text[], ${col('succeeded')}::bool[],
                           ${col('status')}::text[], ${col('delaySeconds')}::float8[])
        AS t(attempt_id, delivery_id, attempt, attempted_at_ms, duration_ms, status_code, error, excerpt, succeeded,
             status, delay_seconds)
    ),
    attempt AS (
      UPDATE webhook_attempts a
      SET attempted_at = to_timestamp(done.attempted_at_ms / 1000), duration_ms = done.duration_ms, status_code = done.status_code,
          error = done.error, response_excerpt = done.excerpt, succeeded = done.succeeded,
          outcome = CASE WHEN done.succeeded THEN 'succeeded' ELSE 'failed' END
      FROM done WHERE a.id = done.attempt_id
    ),
    delivery AS (
      UPDATE webhook_deliveries d
      SET status = done.status, attempts = done.attempt, locked_until = NULL, locked_by = NULL,
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
    SELECT id FROM delivery`;
};
