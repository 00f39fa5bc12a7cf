import type { Queue, Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { unixSeconds } from '../src/lib/clock';
import { redisAnswers } from '../src/lib/redis';
import { IdempotencyStore } from '../src/kernel/idempotency';
import { pruneEvents } from '../src/events/reconcile';
import { defineQueue, logFailedJobs, openWorker } from '../src/lib/queue';
import { sweepExpiredSecrets } from '../src/resources/apps_secrets/service';
import { pruneExpiredLinks } from '../src/hosted/prune';
import { purgeExpiredCvcs } from '../src/resources/payment_methods/service';

// Periodic housekeeping: pruning of expired idempotency records, old events and long-expired
// hosted links, the app-secret sweep and the card CVC purge. BullMQ's schedulers run each once per interval across
// all workers; they live in Redis, so the reconciler (workers/reconciler.ts, a timer of the
// worker process itself) re-creates any that Redis lost.

export const maintenanceQueue = defineQueue<Record<string, never>>('maintenance', { concurrency: 1 });

export const PRUNE_IDEMPOTENCY = 'prune-idempotency';
export const PRUNE_EVENTS = 'prune-events';
export const SWEEP_SECRETS = 'sweep-secrets';
export const PRUNE_LINKS = 'prune-links';
export const PURGE_CVCS = 'purge-cvcs';

export interface Maintenance {
  readonly queue: Queue;
  readonly worker: Worker;
  /** Creates the schedules Redis doesn't have (all of them at start, or after it lost its data); returns how many. */
  ensureSchedules(): Promise<number>;
}

export async function startMaintenance(runtime: Runtime): Promise<Maintenance> {
  const { config, prisma, logger } = runtime;
  const store = new IdempotencyStore(prisma, config.idempotencyTtlHours, runtime.encryption);
  const queue = runtime.queues.of(maintenanceQueue);
  const every: Record<string, number> = {
    [PRUNE_IDEMPOTENCY]: config.maintenanceIntervalMs,
    [PRUNE_EVENTS]: config.maintenanceIntervalMs,
    [PRUNE_LINKS]: config.maintenanceIntervalMs,
    [SWEEP_SECRETS]: config.secretSweepIntervalMs,
    [PURGE_CVCS]: config.secretSweepIntervalMs,
  };
  // Only missing ones: upserting an existing schedule would push its next run back each time.
  const ensureSchedules = async () => {
    let created = 0;
    for (const [name, ms] of Object.entries(every)) {
      if (await queue.getJobScheduler(name)) continue;
      await queue.upsertJobScheduler(name, { every: ms }, { name, data: {} });
      created++;
    }
    return created;
  };
  // With Redis down BullMQ would wait for it here; the reconciler creates them once it answers.
  if (await redisAnswers(runtime.redis)) await ensureSchedules();
  const worker = openWorker(maintenanceQueue, runtime, async (job) => {
    switch (job.name) {
      case PRUNE_IDEMPOTENCY: {
        const pruned = await store.prune();
        if (pruned > 0) logger.info({ pruned }, 'pruned idempotency records');
        return { pruned };
      }
      case PRUNE_EVENTS: {
        const pruned = await pruneEvents(prisma, config.eventRetentionDays, unixSeconds(runtime.clock));
        if (pruned > 0) logger.info({ pruned }, 'pruned events');
        return { pruned };
      }
      case PRUNE_LINKS: {
        const pruned = await pruneExpiredLinks(prisma, unixSeconds(runtime.clock));
        if (Object.values(pruned).some((n) => n > 0)) logger.info(pruned, 'pruned expired links');
        return pruned;
      }
      case SWEEP_SECRETS: {
        const swept = await sweepExpiredSecrets(prisma, unixSeconds(runtime.clock));
        if (swept > 0) logger.info({ swept }, 'deleted expired app secrets');
        return { swept };
      }
      case PURGE_CVCS: {
        const purged = await purgeExpiredCvcs(prisma, unixSeconds(runtime.clock));
        if (purged > 0) logger.info({ purged }, 'purged expired card CVCs');
        return { purged };
      }
      default:
        throw new Error(`Unknown maintenance job ${job.name}`);
    }
  });
  logFailedJobs(worker, logger, 'maintenance job failed');
  return { queue, worker, ensureSchedules };
}
