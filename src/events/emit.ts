import type { Prisma } from '../generated/prisma/client';
import { newId } from '../lib/ids';
import { join, sql, TxSql, type Fragment } from '../lib/sql';
import { writeThrough, type Db, type Write } from '../kernel/writes';
import { eventsEmitted } from '../lib/metrics';
import type { RequestContext } from '../kernel/route';
import { embeddedOf } from '../kernel/versions';
import type { EventType } from './types';

export type Tx = Prisma.TransactionClient;

/** The request that caused an event, or none for events the system raised itself. */
export interface EventCause {
  readonly requestId: string | null;
  readonly idempotencyKey: string | null;
}

export const automaticCause: EventCause = { requestId: null, idempotencyKey: null };

export const causeOf = (ctx: RequestContext): EventCause => ({ requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey ?? null });

/** The options of an event a request's change raises: the caller's account, at its default version. */
export const requestEventOptions = (ctx: RequestContext, created: number): EmitOptions => ({
  accountId: ctx.caller.accountId,
  apiVersion: ctx.caller.defaultApiVersion,
  created,
  cause: causeOf(ctx),
});

export interface EmitOptions {
  /** The account the event belongs to (a connected account's events go to its platform's connect endpoints). */
  readonly accountId: string;
  /** The version `data.object` was rendered at: the account's default. */
  readonly apiVersion: string;
  readonly created: number;
  readonly cause: EventCause;
  /** On `*.updated`: the old values of the fields that changed. */
  readonly previousAttributes?: Record<string, unknown>;
  /**
   * A platform's event about a connected account whose row is gone (deleted: the event must
   * outlive it): it goes to the platform's Connect endpoints only and names that account.
   */
  readonly connectedAccountId?: string;
}

/**
 * The version an account's events are rendered at when no endpoint pins one: its platform's
 * default (the version the platform's first request pinned), else DEFAULT_API_VERSION (`fallback`).
 * A connected account's events go to its platform's endpoints, so they follow the platform.
 */
export async function accountApiVersion(tx: Tx, accountId: string, fallback: string): Promise<string> {
  const rows = await tx.$queryRaw<{ version: string | null }[]>`
    SELECT platform.default_api_version AS version
    FROM accounts a JOIN accounts platform ON platform.id = COALESCE(a.parent_account_id, a.id)
    WHERE a.id = ${accountId}`;
  return rows[0]?.version ?? fallback;
}

/**
 * The event's INSERT, as one of an operation's writes (`deps.write`), so it commits exactly when
 * the change it reports does (the outbox). Hand `id` to the relay once that commit happened.
 */
export function eventInsert(type: EventType, object: Record<string, unknown>, options: EmitOptions): { id: string; write: EventWrite } {
  const id = newId('evt');
  const data: Record<string, unknown> = { object };
  if (options.previousAttributes) data.previous_attributes = options.previousAttributes;
  // What older versions show whole in the object (see `embed`), for rendering it at them later.
  const embedded = embeddedOf(object);
  if (embedded) data.embedded = embedded;
  eventsEmitted.inc({ type });
  const row = sql`(${id}, ${options.accountId}, ${options.created}, ${type}, ${options.apiVersion}, ${JSON.stringify(data)}::jsonb, ${options.cause.requestId}, ${options.cause.idempotencyKey}, ${options.connectedAccountId ?? null})`;
  return { id, write: { sql: eventsInsert([row]), eventRow: row } };
}

/** An event's INSERT, with its row of values, so that several can go as one statement (`holdingEvents`). */
export interface EventWrite extends Write {
  readonly eventRow: Fragment;
}

const eventsInsert = (rows: readonly Fragment[]) =>
  sql`INSERT INTO events (id, account_id, created, type, api_version, data, request_id, idempotency_key, connected_account_id) VALUES ${join(rows, ', ')} RETURNING id`;

/**
 * `db`, but the events written through it wait and go as one INSERT at `flush` (in emit order, so
 * `seq` keeps it): a transaction that writes many (a renewal writes nine) sends one statement for
 * them. Nothing in a transaction reads its own events back; its owner calls `flush` before it commits.
 */
export function holdingEvents(db: Db): Db & { flush(): Promise<void> } {
  let held: Fragment[] = [];
  return {
    sql: db.sql,
    write: (write) => {
      const row = (write as Partial<EventWrite>).eventRow;
      if (row === undefined) return db.write(write);
      held.push(row);
      return Promise.resolve();
    },
    async flush() {
      if (held.length === 0) return;
      const rows = held;
      held = [];
      await db.write({ sql: eventsInsert(rows) });
    },
  };
}

/** Writes the event with `db`'s writes (the outbox: held with them on the one-statement path); returns its id for the relay. */
export async function emitIn(db: Pick<Db, 'write'>, type: EventType, object: Record<string, unknown>, options: EmitOptions): Promise<string> {
  const { id, write } = eventInsert(type, object, options);
  await db.write(write);
  return id;
}

/** Writes the event in the caller's transaction (the outbox); returns its id for the relay. */
export async function emit(tx: Tx, type: EventType, object: Record<string, unknown>, options: EmitOptions): Promise<string> {
  const { id, write } = eventInsert(type, object, options);
  await writeThrough(new TxSql(tx))(write);
  return id;
}

/**
 * `data.previous_attributes` as the public API writes it: the old value of every leaf that
 * changed, nested as in the object (`{metadata: {a: "old"}}`), and `null` for a key that was
 * added. An array that changed, a removed key, and a value that changed kind are given whole.
 */
export function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const changed = oldValues(before, after);
  return changed === UNCHANGED ? {} : (changed as Record<string, unknown>);
}

const UNCHANGED = Symbol('unchanged');

function oldValues(before: unknown, after: unknown): unknown {
  if (!isPlainObject(before) || !isPlainObject(after)) return sameJson(before, after) ? UNCHANGED : before;
  const out: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = own(before, key);
    const is = own(after, key);
    if (was === undefined) {
      if (is !== undefined) out[key] = null;
      continue;
    }
    const old = is === undefined ? was : oldValues(was, is);
    if (old !== UNCHANGED) out[key] = old;
  }
  return Object.keys(out).length > 0 ? out : UNCHANGED;
}

/** Equality of JSON values (key order aside). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  return keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length && keys.every((k) => sameJson(a[k], own(b, k)));
}

/** A member of the object itself: metadata keys such as `constructor` are data, not the prototype's. */
const own = (o: Record<string, unknown>, key: string): unknown => (Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
