import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { attemptDelivery } from '../src/events/delivery';
import { queueDeliveries, webhookDeliveryQueue } from '../src/events/jobs';
import { logFailedJobs, openWorker } from '../src/lib/queue';
import { deliveryDuration, deliveryOutcomes } from '../src/lib/metrics';

/** One attempt per job; a failed attempt schedules the next as a delayed job (the row holds when). */
export function startWebhookDelivery(runtime: Runtime): Worker {
  const { config } = runtime;
  const settings = {
    timeoutMs: config.webhookTimeoutMs,
    retrySchedule: config.webhookRetrySchedule,
    destinations: {
      allowPrivateNetwork: config.webhookAllowPrivateNetwork,
      allowedHosts: config.webhookAllowedHosts,
      loopbackOnly: config.webhookLoopbackOnly,
    },
  };
  const worker = openWorker(webhookDeliveryQueue, runtime, async (job) => {
    // A job back from a stall was active in a worker that stopped renewing its lock (killed), and
    // a retried one failed after its claim, maybe: the row's lease is a run of this very job that
    // ended, so it is taken over rather than waited out.
    const takeOver = job.stalledCounter > 0 || job.attemptsMade > 0;
    const outcome = await attemptDelivery(runtime, settings, job.data.deliveryId, job.data.attempt, takeOver);
    if (outcome.kind !== 'skipped') deliveryOutcomes.inc({ outcome: outcome.kind });
    if ('durationMs' in outcome) deliveryDuration.observe(outcome.durationMs / 1000);
    if (outcome.kind === 'retry') {
      await queueDeliveries(runtime.queues, [{ id: job.data.deliveryId, attempts: outcome.nextAttempt, delayMs: outcome.delayMs }]);
    }
    return outcome.kind;
  });
  logFailedJobs(worker, runtime.logger, 'webhook delivery job failed', (d) => ({ delivery: d.deliveryId }));
  return worker;
}
