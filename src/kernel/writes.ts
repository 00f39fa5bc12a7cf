import { join, raw, sql, type Sql, type SqlClient } from '../lib/sql';
import type { ApiError } from './errors';

// An operation's writes as statements the kernel can hold. Run step by step, each goes to the
// operation's transaction at once. An operation that declares `oneStatement` has its writes held
// instead and sent with its idempotency claim and stored answer as one statement: one round trip
// and one commit for the whole request.

/**
 * One INSERT, UPDATE or DELETE with a RETURNING clause, and what it means when it changes no row.
 * Its values are known before it runs (ids and times are made by the caller), so its answer can
 * be rendered before it is sent.
 */
export interface Write {
  readonly sql: Sql;
  /** The error when it changes no row (a limit reached, a row gone); without it, none is fine. */
  readonly orElse?: () => ApiError;
}

export type WriteRunner = (write: Write) => Promise<void>;

/** Runs each write at once on `db` (the operation's transaction, or the pool outside one). */
export const writeThrough =
  (db: SqlClient): WriteRunner =>
  async (write) => {
    const rows = await db.query(write.sql);
    if (rows.length === 0 && write.orElse) throw write.orElse();
  };

/** Holds an operation's writes to send as one statement. */
export class HeldWrites {
  readonly writes: Write[] = [];
  readonly run: WriteRunner = (write) => {
    this.writes.push(write);
    return Promise.resolve();
  };
}

/** The SQLSTATE `sandbank_assert` raises (migration 20261220000001). */
export const NOT_APPLIED = 'SBW01';

export const isNotApplied = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === NOT_APPLIED;

/**
 * `writes` as one statement, each a CTE, followed by `claim` (given the condition that every write
 * that must change a row did). It fails with NOT_APPLIED, committing nothing, when such a write
 * changed none or the claim was refused; undefined when there is nothing to send.
 */
export function oneStatement(writes: readonly Write[], claim?: (applied: Sql) => Sql): Sql | undefined {
  const ctes = writes.map((w, i) => sql`${raw(`w${i} AS (`)}${w.sql})`);
  const required = writes.flatMap((w, i) => (w.orElse ? [`EXISTS (SELECT 1 FROM w${i})`] : []));
  const applied = raw(required.length > 0 ? required.join(' AND ') : 'TRUE');
  if (claim) ctes.push(sql`claim AS (${claim(applied)})`);
  if (ctes.length === 0) return undefined;
  // Each write is read in turn, so they run in the order given (events keep their order by seq);
  // a write nothing reads would run at the end, in no promised order.
  const inOrder = writes.map((_w, i) => `(SELECT count(*) FROM w${i}) >= 0 AND `).join('');
  return sql`WITH ${join(ctes, ', ')} SELECT sandbank_assert(${raw(inOrder)}${claim ? raw('EXISTS (SELECT 1 FROM claim)') : applied})`;
}
