import { sql } from '../../../lib/sql';
import type { Write } from '../../../kernel/writes';

// The statements of Stripe CLI sessions, on the `pg` pool (src/lib/sql.ts).

export interface NewSession {
  id: string;
  created: number;
  deviceName: string;
  feature: string;
  filters: unknown;
}

/** A session starts after the account's newest event: `stripe listen` shows what happens from now on. */
export const insertSession = (row: NewSession, accountId: string, sealedSecret: string, keyId: string | null): Write => ({
  sql: sql`
    INSERT INTO stripecli_sessions (id, account_id, created, device_name, feature, filters, secret, key_id, event_cursor)
    VALUES (${row.id}, ${accountId}, ${row.created}, ${row.deviceName}, ${row.feature},
            ${row.filters === null ? null : JSON.stringify(row.filters)}::jsonb, ${sealedSecret}, ${keyId},
            COALESCE((SELECT max(seq) FROM events), 0))
    RETURNING id`,
});

export interface SessionRow {
  id: string;
  accountId: string;
  feature: string;
  secret: string;
  eventCursor: string;
}

export const selectSession = (id: string) =>
  sql`SELECT id, account_id AS "accountId", feature, secret, event_cursor::text AS "eventCursor" FROM stripecli_sessions WHERE id = ${id}`;

/** The account's events after the cursor, oldest first. */
export const eventsAfter = (accountId: string, cursor: string, limit: number) => sql`
  SELECT id, seq::text AS seq, account_id AS "accountId", created, type, api_version AS "apiVersion", data,
         request_id AS "requestId", idempotency_key AS "idempotencyKey", pending_webhooks AS "pendingWebhooks",
         connected_account_id AS "connectedAccountId"
  FROM events WHERE account_id = ${accountId} AND seq > ${cursor}::bigint ORDER BY seq LIMIT ${limit}`;

/** An `event_ack`: the session's cursor moves past that event (never back). */
export const ackEvent = (sessionId: string, eventId: string) => sql`
  UPDATE stripecli_sessions SET event_cursor = GREATEST(event_cursor, e.seq)
  FROM events e WHERE stripecli_sessions.id = ${sessionId} AND e.id = ${eventId} AND e.account_id = stripecli_sessions.account_id`;

export const insertResponse = (sessionId: string, eventId: string, created: number, forwardUrl: string | null, status: number, body: string) => sql`
  INSERT INTO stripecli_responses (session_id, event_id, created, forward_url, status, body)
  SELECT ${sessionId}, ${eventId}, ${created}, ${forwardUrl}, ${status}, ${body}
  WHERE EXISTS (SELECT 1 FROM events e JOIN stripecli_sessions s ON s.account_id = e.account_id WHERE s.id = ${sessionId} AND e.id = ${eventId})`;

/** The account's newest session secret (sealed): `stripe listen` keeps one secret across sessions, as Stripe does. */
export const latestSecret = (accountId: string) =>
  sql`SELECT secret FROM stripecli_sessions WHERE account_id = ${accountId} ORDER BY created DESC, id LIMIT 1`;
