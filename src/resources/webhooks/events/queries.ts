import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';

// The hot statements of events (the list and retrieve), on the `pg` pool (src/lib/sql.ts). Prisma serves the rest.

/** An event in the row shape rendering takes (src/events/render.ts), and `seq`. */
const SELECT_ROW = raw(`
  SELECT id, seq, account_id AS "accountId", created, type, api_version AS "apiVersion", data, request_id AS "requestId",
         idempotency_key AS "idempotencyKey", pending_webhooks AS "pendingWebhooks"
  FROM events`);

/** A delivery still to make or to retry: `delivery_success` asks whether an event has none. */
const UNFINISHED = raw(`EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status IN ('pending', 'failed'))`);

/** One of the account's events, unless past retention. */
export const selectVisible = (id: string, accountId: string, oldest: number) =>
  sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId} AND created >= ${oldest} AND connected_account_id IS NULL`;

export interface EventFilters {
  readonly accountId: string;
  /** Events created before this are past retention (the sweep may lag). */
  readonly oldest: number;
  /** The `created` filter's conditions (rangeConditions). */
  readonly created: readonly Fragment[];
  readonly types?: readonly string[];
  readonly deliverySuccess?: boolean;
}

/** The account's events for the list, with its filters. */
export function eventRows(f: EventFilters): SqlRows {
  // A platform's events about deleted connected accounts are its Connect endpoints' only, as that account's were.
  const where = [sql`account_id = ${f.accountId}`, sql`created >= ${f.oldest}`, sql`connected_account_id IS NULL`, ...f.created];
  if (f.types !== undefined) where.push(sql`type = ANY(${f.types}::text[])`);
  if (f.deliverySuccess !== undefined) where.push(f.deliverySuccess ? sql`NOT ${UNFINISHED}` : UNFINISHED);
  return { select: SELECT_ROW, where };
}
