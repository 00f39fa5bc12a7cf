import type { Queue, Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import type { Schedule } from '../src/kernel/route';
import { unixSeconds } from '../src/lib/clock';
import { redisAnswers } from '../src/lib/redis';
import { IdempotencyStore } from '../src/kernel/idempotency';
import { pruneEvents } from '../src/events/reconcile';
import { defineQueue, FINISHED_JOBS, logFailedJobs, openWorker } from '../src/lib/queue';
import { pruneExpiredLinks } from '../src/hosted/prune';
import { pruneConsoleSessions } from '../src/console/sessions';
import { schedules as resourceSchedules } from '../src/resources';

// Periodic housekeeping: the kernel's own (pruning expired idempotency records, old events and
// long-expired hosted links) and every resource's declared schedules. BullMQ's schedulers run
// each once per interval across all workers; they live in Redis, so the reconciler
// (workers/reconciler.ts, a timer of the worker process itself) re-creates any that Redis lost.

export const maintenanceQueue = defineQueue<Record<string, never>>('maintenance', { concurrency: 1 });

export const PRUNE_IDEMPOTENCY = 'prune-idempotency';
export const PRUNE_EVENTS = 'prune-events';
export const PRUNE_LINKS = 'prune-links';
export const PRUNE_CONSOLE_SESSIONS = 'prune-console-sessions';

const kernelSchedules: readonly Schedule[] = [
  {
    name: PRUNE_IDEMPOTENCY,
    everyMs: (config) => config.maintenanceIntervalMs,
    run: async ({ prisma, sql, config, encryption }) => ({ pruned: await new IdempotencyStore(prisma, sql, config.idempotencyTtlHours, encryption).prune() }),
  },
  {
    name: PRUNE_EVENTS,
    everyMs: (config) => config.maintenanceIntervalMs,
    run: async ({ prisma, config }, now) => ({ pruned: await pruneEvents(prisma, config.eventRetentionDays, now) }),
  },
  { name: PRUNE_LINKS, everyMs: (config) => config.maintenanceIntervalMs, run: async ({ prisma }, now) => ({ ...(await pruneExpiredLinks(prisma, now)) }) },
  // Ended console sessions are deleted when used or when their account signs in again; these are the rest.
  { name: PRUNE_CONSOLE_SESSIONS, everyMs: (config) => config.maintenanceIntervalMs, run: async ({ prisma, config, clock }) => ({ pruned: await pruneConsoleSessions(prisma, config, clock.nowMs()) }) },
];

export interface Maintenance {
  readonly queue: Queue;
  readonly worker: Worker;
  /** Creates the schedules Redis doesn't have (all of them at start, or after it lost its data); returns how many. */
  ensureSchedules(): Promise<number>;
}

export async function startMaintenance(runtime: Runtime, extra: readonly Schedule[] = resourceSchedules): Promise<Maintenance> {
  const { config, logger } = runtime;
  const byName = new Map([...kernelSchedules, ...extra].map((s) => [s.name, s]));
  const queue = runtime.queues.of(maintenanceQueue);
  // Only missing ones: upserting an existing schedule would push its next run back each time.
  const ensureSchedules = async () => {
    let created = 0;
    for (const [name, schedule] of byName) {
      if (await queue.getJobScheduler(name)) continue;
      // Each run is a new job: without a cap, Redis would keep every one (FINISHED_JOBS). The
      // worker applies the same cap to runs of a schedule made before the template carried it.
      await queue.upsertJobScheduler(name, { every: schedule.everyMs(config) }, { name, data: {}, opts: FINISHED_JOBS });
      created++;
    }
    return created;
  };
  // With Redis down BullMQ would wait for it here; the reconciler creates them once it answers.
  if (await redisAnswers(runtime.redis)) await ensureSchedules();
  const worker = openWorker(maintenanceQueue, runtime, async (job) => {
    const schedule = byName.get(job.name);
    if (!schedule) throw new Error(`Unknown maintenance job ${job.name}`);
    const counts = await schedule.run(runtime, unixSeconds(runtime.clock));
    if (Object.values(counts).some((n) => n > 0)) logger.info({ job: job.name, ...counts }, 'maintenance job done');
    return counts;
  });
  logFailedJobs(worker, logger, 'maintenance job failed');
  return { queue, worker, ensureSchedules };
}
