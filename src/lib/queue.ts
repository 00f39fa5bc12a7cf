import { Queue, Worker, type ConnectionOptions, type Processor, type WorkerOptions } from 'bullmq';
import type { Config } from '../config';
import type { Logger } from './logger';
import { causeOf, healingLog } from './healingLog';
import { isDatabaseUnavailable } from './prisma';
import { createBatcher } from './batcher';

// A queue is defined once (name, payload type, options) and used by both producer and consumer.
// Payloads carry ids only; processors re-read the database, which is the source of truth.

export interface QueueDefinition<Payload> {
  readonly name: string;
  readonly workerOptions?: Omit<WorkerOptions, 'connection' | 'prefix'>;
  /**
   * How the jobs of adds made together (by concurrent requests, say) combine into fewer jobs: one
   * job costs Redis and the worker about what a statement costs, whatever it carries.
   */
  readonly merge?: (jobs: readonly JobSpec<Payload>[]) => JobSpec<Payload>[];
  /** Its worker's concurrency from a setting (wins over workerOptions'), for queues an operator sizes. */
  readonly concurrencyOf?: (config: Config) => number;
  /** Phantom member that ties the payload type to the definition. */
  readonly payload?: Payload;
}

/**
 * Worker settings every queue starts from. A worker killed with `kill -9` leaves its jobs active
 * until their lock expires and a stall check moves them back: short locks (renewed every half
 * lock while the process lives) make that take seconds, not BullMQ's default minute.
 */
const WORKER_DEFAULTS = { lockDuration: 8_000, stalledInterval: 4_000, maxStalledCount: 2 } as const;

/**
 * What BullMQ keeps of finished jobs, for every queue (a definition may override it in its
 * workerOptions; a job's own options win over both). BullMQ's default keeps every one forever, in
 * a Redis that must run `noeviction`: a scheduler every minute is ~1,440 job hashes a day. A
 * completed job says nothing the database and the log don't, so only the latest few stay; a
 * failed one stays a week (1,000 at most) to read why, as BullMQ recommends. Jobs added by id
 * (JobQueues.add) remove themselves at once either way: see there.
 */
export const FINISHED_JOBS = { removeOnComplete: { count: 10 }, removeOnFail: { age: 7 * 24 * 3600, count: 1_000 } } as const;

export const defineQueue = <Payload>(
  name: string,
  workerOptions?: QueueDefinition<Payload>['workerOptions'],
  merge?: QueueDefinition<Payload>['merge'],
): QueueDefinition<Payload> => {
  if (name.includes(':')) throw new Error(`Queue names may not contain ':' (${name})`);
  return { name, workerOptions, merge };
};

/** One job to add: its id makes adding it twice harmless. */
export interface JobSpec<Payload> {
  readonly id: string;
  readonly data: Payload;
  readonly delayMs?: number;
}

/** Adds jobs; what the shared dependencies carry, so producers need no queue of their own. */
export interface JobAdder {
  /** Resolves true once Redis took the jobs, false (logged) when it didn't; never rejects. */
  add<P>(definition: QueueDefinition<P>, jobs: readonly JobSpec<P>[]): Promise<boolean>;
}

// Producers fail fast while Redis is away (no offline queue): every job is also a database row
// that the reconciler re-adds, so a write never waits for Redis.
const producerConnection = (config: Config): ConnectionOptions => ({ url: config.redisUrl, maxRetriesPerRequest: 1, enableOfflineQueue: false });
const workerConnection = (config: Config): ConnectionOptions => ({ url: config.redisUrl, maxRetriesPerRequest: null });

/** What opening a queue or a worker needs: where Redis is, and where its errors go. */
export interface QueueContext {
  readonly config: Config;
  readonly logger: Logger;
}

/**
 * Every BullMQ object gets its `error` listener where it is made, so none can be without one:
 * BullMQ prints an unheard error's stack to stderr, and a Redis that restarts, is flushed or
 * drops its connections makes many (failed reconnects, "Missing key for job …"). They are
 * expected and BullMQ recovers from them, so each is one warn line: the message, no stack.
 */
function logErrors(emitter: { on(event: 'error', listener: (err: Error) => void): unknown }, logger: Logger, name: string, what: string): void {
  // Every queue and worker of the process reconnects: one line per cause per interval for them all.
  const healing = healingLog(logger);
  emitter.on('error', (err: unknown) => healing.warn(`${what}: ${causeOf(err)}`, { err: err instanceof Error ? err.message : String(err), queue: name }, what));
}

export function openQueue<P>(definition: QueueDefinition<P>, { config, logger }: QueueContext): Queue<P> {
  const queue = new Queue<P>(definition.name, { connection: producerConnection(config), prefix: config.queuePrefix });
  logErrors(queue, logger, definition.name, 'queue connection error');
  return queue;
}

export function openWorker<P>(definition: QueueDefinition<P>, { config, logger }: QueueContext, processor: Processor<P>): Worker<P> {
  const worker = new Worker<P>(definition.name, processor, {
    ...WORKER_DEFAULTS,
    ...FINISHED_JOBS,
    ...definition.workerOptions,
    ...(definition.concurrencyOf ? { concurrency: definition.concurrencyOf(config) } : {}),
    connection: workerConnection(config),
    prefix: config.queuePrefix,
  });
  logErrors(worker, logger, definition.name, 'queue worker error');
  return worker;
}

/** How long closing a worker waits for its running jobs and Redis: a lock's length, after which a job is retried anyway. */
const CLOSE_GRACE_MS = WORKER_DEFAULTS.lockDuration;

/** Resolves true if `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Closes a worker, letting running jobs finish. BullMQ's close waits forever on a connection
 * that is reconnecting (Redis away, or just cut off); past the grace, the connections are dropped
 * (what a running job had not finished is retried once its lock expires), so a process stops.
 */
export async function closeWorker(worker: Worker, logger: Logger, graceMs: number = CLOSE_GRACE_MS): Promise<void> {
  const closing = worker.close();
  if (await settlesWithin(closing, graceMs)) return;
  logger.warn({ queue: worker.name, graceMs }, 'the worker did not close in time (Redis away?); dropping its connections');
  const backend = worker.getBackend();
  for (const connection of [backend.connection, backend.blockingConnection]) connection?.disconnect(false).catch(() => undefined);
  // BullMQ stops its lock-renewal timer only after the wait that never ends; without this, the
  // timer keeps the process (or a test's worker) alive. Not in its types, hence the cast.
  await (worker as unknown as { lockManager?: { close(): Promise<void> } }).lockManager?.close().catch(() => undefined);
  await settlesWithin(closing, 1_000);
}

/**
 * Logs a worker's failed jobs (each is retried, then re-added by the reconciler). What heals (a
 * database outage, a transaction that could not start in time, a job Redis lost) and an attempt
 * that will be retried are warnings, one line per cause per interval (src/lib/healingLog.ts);
 * only the last attempt of a failure that doesn't heal is an error, with its stack.
 */
export function logFailedJobs<P>(worker: Worker<P>, logger: Logger, message: string, fields: (data: P) => Record<string, unknown> = () => ({})): void {
  const healing = healingLog(logger);
  worker.on('failed', (job, err) => {
    const context = { ...(job ? fields(job.data) : {}), job: job?.name, attempts: job?.attemptsMade };
    const retried = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1);
    if (isDatabaseUnavailable(err)) healing.warn(`${message}: database unavailable`, { ...context, err: err.message }, `${message}: database unavailable`);
    else if (heals(err) || retried) healing.warn(`${message}: ${causeOf(err)}`, { ...context, err: err.message, retried }, message);
    else logger.error({ ...context, err }, message);
  });
}

/** Prisma: a transaction could not start in time (P2028), a write conflict or deadlock (P2034); the step is retried. */
const TRANSIENT_PRISMA = new Set(['P2028', 'P2034']);
/** PostgreSQL: serialization failure, deadlock, lock not available, statement canceled. */
const TRANSIENT_SQLSTATE = new Set(['40001', '40P01', '55P03', '57014']);
/** Redis away, or BullMQ's jobs lost with it (a flush): the reconciler re-adds what was lost. */
const TRANSIENT_MESSAGE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection is closed|Redis did not answer|Missing (key|lock) for job|Unable to start a transaction in the given time|Transaction already closed/;

/** Whether `err` is a failure that heals by itself (retried, or re-added by the reconciler): a warning, not an error. */
export function heals(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (typeof e.code === 'string' && (TRANSIENT_PRISMA.has(e.code) || TRANSIENT_SQLSTATE.has(e.code))) return true;
    if (typeof e.meta?.code === 'string' && TRANSIENT_SQLSTATE.has(e.meta.code)) return true;
    if (typeof e.message === 'string' && TRANSIENT_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/** About 15 s of retries (0.5, 1, 2, 4, 8 s), the length of a database restart. */
const RETRIES = { attempts: 6, backoff: { type: 'exponential', delay: 500 } } as const;

/** Longest an add waits for Redis (a first connection that never comes, say) before giving up. */
const ADD_BOUND_MS = 500;

/**
 * Adds to one queue in flight at once; the ones made meanwhile wait (one Redis round trip at most)
 * and go together. Each bulk add costs ~100 µs of CPU whatever it carries (BullMQ's pipeline
 * copies every script onto itself), so fewer, fuller ones are cheaper.
 */
const ADDS_IN_FLIGHT = 1;

/**
 * The process's producers: one queue per definition, opened on first use. Adds to one queue made
 * together (concurrent requests handing off their events, say) go as one bulk add, their jobs
 * merged where the queue says how: one round trip to Redis instead of one per request.
 */
export class JobQueues implements JobAdder {
  private readonly opened = new Map<string, Queue>();
  private readonly batched = new Map<string, (jobs: readonly JobSpec<unknown>[]) => Promise<boolean>>();

  constructor(
    readonly config: Config,
    readonly logger: Logger,
  ) {}

  of<P>(definition: QueueDefinition<P>): Queue<P> {
    let queue = this.opened.get(definition.name);
    if (!queue) {
      queue = openQueue(definition, this) as Queue;
      this.opened.set(definition.name, queue);
    }
    return queue as Queue<P>;
  }

  add<P>(definition: QueueDefinition<P>, jobs: readonly JobSpec<P>[]): Promise<boolean> {
    if (jobs.length === 0) return Promise.resolve(true);
    let add = this.batched.get(definition.name);
    if (!add) {
      const run = async (adds: (readonly JobSpec<P>[])[]): Promise<boolean[]> => {
        const all = adds.flat();
        const added = await this.addNow(definition, definition.merge ? definition.merge(all) : all);
        return adds.map(() => added);
      };
      add = createBatcher(run, { maxItems: 256, maxConcurrent: ADDS_IN_FLIGHT }) as (jobs: readonly JobSpec<unknown>[]) => Promise<boolean>;
      this.batched.set(definition.name, add);
    }
    return add(jobs);
  }

  private async addNow<P>(definition: QueueDefinition<P>, jobs: readonly JobSpec<P>[]): Promise<boolean> {
    const queue = this.of(definition) as Queue;
    const added = queue.addBulk(
      jobs.map((j) => ({
        name: definition.name,
        data: j.data,
        // Removed when done or failed, not kept as FINISHED_JOBS would: while an id exists, adding
        // it again does nothing, and the reconciler could never re-add the job (a failure is in the
        // worker's log instead). Every job is safe to repeat, so a failure (the database
        // restarting, say) is retried soon rather than left to the reconciler.
        opts: { jobId: j.id, delay: j.delayMs, removeOnComplete: true, removeOnFail: true, ...RETRIES },
      })),
    );
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ADD_BOUND_MS)));
    try {
      const outcome = await Promise.race([added, bound]);
      if (outcome === 'timeout') throw new Error(`Redis did not answer within ${ADD_BOUND_MS} ms`);
      return true;
    } catch (err) {
      added.catch(() => undefined);
      healingLog(this.logger).warn(`adding jobs failed: ${causeOf(err)}`, { err: (err as Error).message, queue: definition.name, jobs: jobs.length }, 'adding jobs failed; the reconciler will add them');
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  all(): Queue[] {
    return [...this.opened.values()];
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all().map((q) => q.close()));
  }
}
