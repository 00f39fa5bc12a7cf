import type { PrismaClient, Tx } from '../lib/prisma';
import type { JobAdder, JobSpec, QueueDefinition } from '../lib/queue';
import { TxSql } from '../lib/sql';
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

/**
 * Runs `work` with deps whose database calls go to one transaction; `beforeCommit` runs last in
 * it (storing the idempotent result). Jobs are added after the commit.
 */
export async function inOperationTransaction<T>(
  deps: Deps,
  work: (deps: Deps) => Promise<T>,
  beforeCommit: (tx: Tx, result: T) => Promise<void>,
): Promise<T> {
  const afterCommit = new AfterCommit(deps.queues);
  const result = await deps.prisma.$transaction(
    async (tx) => {
      const sql = new TxSql(tx);
      const result = await work({ ...deps, prisma: joined(tx), sql, write: writeThrough(sql), queues: afterCommit });
      await beforeCommit(tx, result);
      return result;
    },
    { maxWait: TRANSACTION_MAX_WAIT_MS, timeout: TRANSACTION_TIMEOUT_MS },
  );
  await afterCommit.flush();
  return result;
}
