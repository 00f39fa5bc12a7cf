import type { PrismaClient } from '../lib/prisma';
import { EXPLICIT_SELECTION_EVENT_TYPES } from './types';

/**
 * Turns one event into one pending delivery per matching endpoint, in one statement, and marks
 * the event fanned out. Runs at most once per event: the row lock and the `fanned_out_at IS NULL`
 * condition make a second run (relay and reconciler racing) find nothing to do.
 *
 * An endpoint matches when it is enabled, it belongs to the event's account (connect=false) or to
 * that account's platform (connect=true), and its enabled_events name the type, or are `*` and
 * the type doesn't need explicit selection.
 */
export async function fanOutEvent(prisma: PrismaClient, eventId: string): Promise<string[]> {
  return (await fanOutEvents(prisma, [eventId])).get(eventId) ?? [];
}

/** fanOutEvent for many events in one statement: the new delivery ids of each event fanned out now. */
export async function fanOutEvents(prisma: PrismaClient, eventIds: string[]): Promise<Map<string, string[]>> {
  const explicitOnly = [...EXPLICIT_SELECTION_EVENT_TYPES];
  // Events are locked in id order so that batches overlapping in events cannot deadlock.
  const rows = await prisma.$queryRaw<{ id: string; event_id: string }[]>`
    WITH ev AS (
      SELECT e.id, e.account_id, e.type, a.parent_account_id
      FROM events e JOIN accounts a ON a.id = e.account_id
      WHERE e.id = ANY (${eventIds}::text[]) AND e.fanned_out_at IS NULL
      ORDER BY e.id
      FOR UPDATE OF e
    ),
    targets AS (
      SELECT ev.id AS event_id, w.id AS endpoint_id
      FROM ev JOIN webhook_endpoints w
        ON w.status = 'enabled'
       AND ((w.account_id = ev.account_id AND NOT w.connect) OR (w.account_id = ev.parent_account_id AND w.connect))
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
  const byEvent = new Map<string, string[]>();
  for (const r of rows) byEvent.set(r.event_id, [...(byEvent.get(r.event_id) ?? []), r.id]);
  return byEvent;
}
