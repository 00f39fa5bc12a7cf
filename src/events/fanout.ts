import type { SqlClient } from '../lib/sql';
import { fanOut } from './queries';
import { EXPLICIT_SELECTION_EVENT_TYPES } from './types';

const EXPLICIT_ONLY = [...EXPLICIT_SELECTION_EVENT_TYPES];

/**
 * Turns one event into one pending delivery per matching endpoint, in one statement, and marks
 * the event fanned out. Runs at most once per event: the row lock and the `fanned_out_at IS NULL`
 * condition make a second run (relay and reconciler racing) find nothing to do.
 *
 * An endpoint matches when it is enabled, it belongs to the event's account (connect=false) or to
 * that account's platform (connect=true), and its enabled_events name the type, or are `*` and
 * the type doesn't need explicit selection.
 */
export async function fanOutEvent(sql: SqlClient, eventId: string): Promise<string[]> {
  return (await fanOutEvents(sql, [eventId])).get(eventId) ?? [];
}

/** fanOutEvent for many events in one statement: the new delivery ids of each event fanned out now. */
export async function fanOutEvents(sql: SqlClient, eventIds: string[]): Promise<Map<string, string[]>> {
  const rows = await sql.query<{ id: string; event_id: string }>(fanOut(eventIds, EXPLICIT_ONLY));
  const byEvent = new Map<string, string[]>();
  for (const r of rows) {
    const ids = byEvent.get(r.event_id);
    if (ids) ids.push(r.id);
    else byEvent.set(r.event_id, [r.id]);
  }
  return byEvent;
}
