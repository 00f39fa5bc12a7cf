import type { PrismaClient, Tx } from '../lib/prisma';
import type { JobAdder, JobSpec, QueueDefinition } from '../lib/queue';
import { TxSql, type SqlClient } from '../lib/sql';
import type { Deps } from './route';
import { writeThrough } from './writes';

// A write operation runs in one transaction that the kernel opens: everything the handler
// writes, its events (the outbox) and its idempotent result commit together or not at all.
// Handlers need not know: within it, `deps.prisma.$transaction(fn)` runs `fn` in the operation's
// transaction, and jobs are added only once that transaction committed.

/** Longest an operation's transaction may run before PostgreSQL's work is rolled back. */
const TRANSACTION_TIMEOUT_MS = 60_000;
/** Longest it may wait for a pooled connection. */
const TRANSACTION_MAX_WAIT_MS = 10_000;

/** `tx` made to look like the client, with `$transaction` joining the transaction already open. */
function joined(tx: Tx): PrismaClient {
  const client: PrismaClient = new Proxy(tx as PrismaClient, {
    get(target, prop, receiver) {
      if (prop === '$transaction') {
        return (arg: ((tx: PrismaClient) => Promise<unknown>) | Promise<unknown>[]) =>
          typeof arg === 'function' ? arg(client) : Promise.all(arg);
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return client;
}

/** Collects the jobs an operation adds, to add them after its commit. */
export class AfterCommit implements JobAdder {
  private readonly pending: (() => Promise<boolean>)[] = [];

  constructor(private readonly queues: JobAdder) {}

  add<P>(definition: QueueDefinition<P>, jobs: readonly JobSpec<P>[]): Promise<boolean> {
    this.pending.push(() => this.queues.add(definition, jobs));
    return Promise.resolve(true);
  }

  /** Adds are bounded and never throw: a job Redis didn't take is re-added by the reconciler. */
  async flush(): Promise<void> {
    await Promise.all(this.pending.map((add) => add()));
  }
}

/** `deps.prisma` of a `sqlOnly` operation: its statements go through `deps.sql`, so any Prisma call is a mistake. */
export const NO_PRISMA = new Proxy({} as PrismaClient, {
  get(_target, prop) {
    throw new Error(`a sqlOnly operation used deps.prisma (${String(prop)}): its statements go through deps.sql`);
  },
});

/** The code a `sqlOnly` operation throws when it needs Prisma after all (`prismaOf`). */
export const NEEDS_PRISMA = 'SBW02';

export const needsPrisma = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === NEEDS_PRISMA;

/**
 * The operation's Prisma client, for a `sqlOnly` handler that turns out to need another area's
 * Prisma work in its transaction (a PaymentIntent an invoice owns): on the `sqlOnly` path this
 * throws NEEDS_PRISMA and the kernel runs the request again in an ordinary transaction.
 */
export function prismaOf(deps: Pick<Deps, 'prisma'>): PrismaClient {
  if (deps.prisma === NO_PRISMA) throw Object.assign(new Error('this sqlOnly request needs Prisma: it runs the ordinary way'), { code: NEEDS_PRISMA });
  return deps.prisma;
}

/**
 * Runs `work` with deps whose database calls go to one transaction; `beforeCommit` runs last in
 * it (storing the idempotent result). Jobs are added after the commit. A `sqlOnly` operation's
 * transaction is on one pooled connection without Prisma (its statements are all `deps.sql`).
 */
export async function inOperationTransaction<T>(
  deps: Deps,
  work: (deps: Deps) => Promise<T>,
  beforeCommit: (sql: SqlClient, result: T) => Promise<void>,
  options: { sqlOnly?: boolean } = {},
): Promise<T> {
  const afterCommit = new AfterCommit(deps.queues);
  const run = async (sql: SqlClient, prisma: PrismaClient) => {
    const result = await work({ ...deps, prisma, sql, write: writeThrough(sql), queues: afterCommit });
    await beforeCommit(sql, result);
    return result;
  };
  const result = options.sqlOnly
    ? await deps.sql.transaction((sql) => run(sql, NO_PRISMA))
    : await deps.prisma.$transaction((tx) => run(new TxSql(tx), joined(tx)), { maxWait: TRANSACTION_MAX_WAIT_MS, timeout: TRANSACTION_TIMEOUT_MS });
  await afterCommit.flush();
  return result;
}
