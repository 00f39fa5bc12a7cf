import type { Runtime } from '../src/runtime';
import { reconcile } from '../src/events/reconcile';
import { redisAnswers } from '../src/lib/redis';
import { causeOf, healingLog } from '../src/lib/healingLog';
import { firstReconcilers, reconcilers } from '../src/resources';
import type { Maintenance } from './maintenance';

// The reconciler rebuilds from the database whatever Redis should hold: fan-outs, due delivery
// attempts, every resource's due jobs, and the maintenance schedules. It runs on a timer of the worker
// process itself, not as a job in Redis, so a Redis that lost every key (FLUSHALL, a restart
// without persistence) can't take it away; it also runs at once when Redis comes back.

export interface Reconciler {
  /** Runs one pass now (or joins the one running). */
  runNow(): Promise<void>;
  stop(): Promise<void>;
}

export function startReconciler(runtime: Runtime, maintenance: Maintenance): Reconciler {
  const { prisma, queues, logger, config } = runtime;
  let running: Promise<void> | undefined;
  let stopped = false;

  const pass = async () => {
    // BullMQ's calls wait for a connection that is down instead of failing; skip the pass instead
    // (Redis's return runs one at once).
    if (!(await redisAnswers(runtime.redis))) throw new Error('Redis does not answer');
    const due: Record<string, number> = {};
    // What a client is waiting on first: a backlog of fan-outs must not use up a forward's pickup deadline.
    for (const reconcileResource of firstReconcilers) Object.assign(due, await reconcileResource(runtime, runtime.clock.nowMs()));
    const events = await reconcile(prisma, queues);
    for (const reconcileResource of reconcilers) Object.assign(due, await reconcileResource(runtime, runtime.clock.nowMs()));
    const schedules = await maintenance.ensureSchedules();
    if ([events.events, events.deliveries, ...Object.values(due), schedules].some((n) => n > 0)) {
      logger.info({ ...events, ...due, schedules }, 'reconciled jobs from the database');
    }
  };
  const runNow = () => {
    running ??= pass()
      .catch((err) => healingLog(logger).warn(`reconciling failed: ${causeOf(err)}`, { err: (err as Error).message }, 'reconciling failed; the next pass will retry'))
      .finally(() => (running = undefined));
    return running;
  };

  const timer = setInterval(() => {
    if (!stopped) void runNow();
  }, config.reconcileIntervalMs);
  // A Redis that restarted lost what it held (unless it persists): rebuild now, not at the next tick.
  const onReady = () => {
    if (!stopped) void runNow();
  };
  runtime.redis.on('ready', onReady);

  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      runtime.redis.off('ready', onReady);
      await running;
    },
  };
}
