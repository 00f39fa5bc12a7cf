import type { Queue, Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { unixSeconds } from '../src/lib/clock';
import { IdempotencyStore } from '../src/kernel/idempotency';
import type { EventRelay } from '../src/events/relay';
import { pruneEvents, reconcile } from '../src/events/reconcile';
import { openQueue, openWorker } from '../src/lib/queue';
import { maintenanceQueue } from '../src/queues';
import { sweepExpiredSecrets } from '../src/resources/apps_secrets/service';
import { reconcileIdentity } from '../src/resources/identity/pipeline';
import { pruneExpiredLinks } from '../src/hosted/prune';

// Periodic housekeeping: the reconciler, pruning of expired idempotency records, old events and
// long-expired hosted links, and the app-secret sweep. Schedules are upserted at every worker
// start, so a Redis that lost them gets them back.

export const PRUNE_IDEMPOTENCY = 'prune-idempotency';
export const PRUNE_EVENTS = 'prune-events';
export const RECONCILE = 'reconcile';
export const SWEEP_SECRETS = 'sweep-secrets';
export const PRUNE_LINKS = 'prune-links';

export interface MaintenanceDeps {
  relay: EventRelay;
  deliveryQueue: Queue<{ deliveryId: string; attempt: number }>;
}

export async function startMaintenance(runtime: Runtime, deps: MaintenanceDeps): Promise<{ queue: Queue; worker: Worker }> {
  const { config, prisma, logger } = runtime;
  const store = new IdempotencyStore(prisma, config.idempotencyTtlHours, runtime.encryption);
  const queue = openQueue(maintenanceQueue, config);
  await queue.upsertJobScheduler(PRUNE_IDEMPOTENCY, { every: config.maintenanceIntervalMs }, { name: PRUNE_IDEMPOTENCY, data: {} });
  await queue.upsertJobScheduler(PRUNE_EVENTS, { every: config.maintenanceIntervalMs }, { name: PRUNE_EVENTS, data: {} });
  await queue.upsertJobScheduler(RECONCILE, { every: config.reconcileIntervalMs }, { name: RECONCILE, data: {} });
  await queue.upsertJobScheduler(PRUNE_LINKS, { every: config.maintenanceIntervalMs }, { name: PRUNE_LINKS, data: {} });
  await queue.upsertJobScheduler(SWEEP_SECRETS, { every: config.secretSweepIntervalMs }, { name: SWEEP_SECRETS, data: {} });
  const worker = openWorker(maintenanceQueue, config, async (job) => {
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
      case RECONCILE: {
        const result = await reconcile(prisma, deps.relay, deps.deliveryQueue);
        if (result.events + result.deliveries > 0) logger.info(result, 'reconciled jobs from the database');
        const identity = await reconcileIdentity(prisma, runtime.identity.queue, runtime.clock.nowMs());
        if (identity.processing + identity.redactions > 0) logger.info(identity, 'reconciled identity steps from the database');
        return { ...result, identity };
      }
      case PRUNE_LINKS: {
        const pruned = await pruneExpiredLinks(prisma, unixSeconds(runtime.clock));
        if (pruned.accountLinks + pruned.accountSessions + pruned.identityLinks > 0) logger.info(pruned, 'pruned expired links');
        return pruned;
      }
      case SWEEP_SECRETS: {
        const swept = await sweepExpiredSecrets(prisma, unixSeconds(runtime.clock));
        if (swept > 0) logger.info({ swept }, 'deleted expired app secrets');
        return { swept };
      }
      default:
        throw new Error(`Unknown maintenance job ${job.name}`);
    }
  });
  worker.on('failed', (job, err) => logger.error({ err, job: job?.name }, 'maintenance job failed'));
  return { queue, worker };
}
