import { join, raw, sql, TxSql, type Sql, type SqlClient } from '../lib/sql';
import type { Tx } from '../lib/prisma';
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

/** Where a change is read and written: an operation's deps (`Pick<Deps, 'sql' | 'write'>`), or a transaction's. */
export interface Db {
  readonly sql: SqlClient;
  readonly write: WriteRunner;
}

/** Reads and writes at once on `sql`. */
export const dbOf = (sql: SqlClient): Db => ({ sql, write: writeThrough(sql) });

/** Reads and writes at once in a Prisma transaction (a worker's, a page's). */
export const prismaDb = (tx: Pick<Tx, '$queryRawUnsafe'>): Db => dbOf(new TxSql(tx));

/** The runners that hold their writes rather than send them. */
const holding = new WeakSet<WriteRunner>();

/** Holds an operation's writes to send as one statement. */
export class HeldWrites {
  readonly writes: Write[] = [];
  readonly run: WriteRunner = (write) => {
    this.writes.push(write);
    return Promise.resolve();
  };

  constructor() {
    holding.add(this.run);
  }
}

/** The SQLSTATE `sandbank_assert` raises (migration 20261220000001). */
export const NOT_APPLIED = 'SBW01';

export const isNotApplied = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === NOT_APPLIED;

/**
 * Called by a handler about to read back (or update) a row it wrote: held writes aren't in the
 * database yet, so on the one-statement path this throws NOT_APPLIED, and the kernel runs the
 * request again the ordinary way, where every write is sent at once. Elsewhere it does nothing.
 */
export function readsItsWrites(db: Pick<Db, 'write'>): void {
  if (holding.has(db.write)) throw Object.assign(new Error('this request reads back its own writes: it runs the ordinary way'), { code: NOT_APPLIED });
}

/**
 * `writes` as one statement, each a CTE, with `claim`; it fails with NOT_APPLIED, committing
 * nothing (the claim included), when a write that must change a row changed none or the claim was
 * refused; undefined when there is nothing to send. Writes that must change a row (a limit's slot,
 * a row that may be gone) go last: the row such a write locks stays locked until the commit, and
 * every other create of its account waits for it, so it is taken as late as it can be (creates on
 * one account: ~2,000 statements/s with the slot first, against the ~3,700/s of a bare UPDATE).
 */
export function oneStatement(writes: readonly Write[], claim?: Sql): Sql | undefined {
  // Plain writes in their order, then the claim (before any row lock is taken), then the writes
  // that must change a row; the final check reads the claim and those by EXISTS.
  const plain = writes.filter((w) => !w.orElse);
  const ordered = [...plain, ...writes.filter((w) => w.orElse)].map((w, i) => ({ name: `w${i}`, sql: w.sql, required: w.orElse !== undefined }));
  if (claim) ordered.splice(plain.length, 0, { name: 'claim', sql: claim, required: true });
  if (ordered.length === 0) return undefined;
  const ctes = ordered.map((s) => sql`${raw(`${s.name} AS (`)}${s.sql})`);
  // Each CTE is read in turn, so they run in this order (events keep their order by seq); one that
  // nothing read would run at the end, in no promised order.
  const reads = ordered.map((s) => (s.required ? `EXISTS (SELECT 1 FROM ${s.name})` : `(SELECT count(*) FROM ${s.name}) >= 0`));
  return sql`WITH ${join(ctes, ', ')} SELECT sandbank_assert(${raw(reads.join(' AND '))})`;
}
