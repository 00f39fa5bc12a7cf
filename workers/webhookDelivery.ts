import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { attemptDelivery } from '../src/events/delivery';
import { deliveriesOf, queueDeliveries, webhookDeliveryQueue } from '../src/events/jobs';
import { createLimiter } from '../src/lib/limiter';
import { logFailedJobs, openWorker } from '../src/lib/queue';
import { deliveryDuration, deliveryOutcomes } from '../src/lib/metrics';

/**
 * Attempts in flight in this process, whatever the jobs: a slot is taken before the claim, so a
 * lease only starts when its request is about to be sent, and no request waits in undici's queue.
 */
const ATTEMPTS_IN_FLIGHT = 128;

/** Each job's attempts, concurrently; a failed attempt schedules the next as a delayed job of its own (the row holds when). */
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
  const inFlight = createLimiter(ATTEMPTS_IN_FLIGHT);
  const worker = openWorker(webhookDeliveryQueue, runtime, async (job) => {
    // A job back from a stall was active in a worker that stopped renewing its lock (killed), and
    // a retried one failed after its claims, maybe: a lease this very job holds is a run of it
    // that ended, so it is taken over rather than waited out.
    const lease = { attempt: job.data.attempt, holder: job.id!, takeOver: job.stalledCounter > 0 || job.attemptsMade > 0 };
    const settled = await Promise.allSettled(
      deliveriesOf(job.data).map((deliveryId) =>
        inFlight(async () => {
          const outcome = await attemptDelivery(runtime, settings, { deliveryId, ...lease });
          if (outcome.kind !== 'skipped') deliveryOutcomes.inc({ outcome: outcome.kind });
          if ('durationMs' in outcome) deliveryDuration.observe(outcome.durationMs / 1000);
          // Queued as soon as this attempt ends, not when the job's others do: retries keep to the schedule.
          if (outcome.kind === 'retry') await queueDeliveries(runtime.queues, [{ id: deliveryId, attempts: outcome.nextAttempt, delayMs: outcome.delayMs }]);
          return outcome.kind;
        }),
      ),
    );
    // Every attempt has ended before the job fails: a run of it again never overlaps one of this run.
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const kinds = settled.map((s) => (s as PromiseFulfilledResult<string>).value);
    return kinds.length === 1 ? kinds[0] : kinds;
  });
  logFailedJobs(worker, runtime.logger, 'webhook delivery job failed', (d) => ({ delivery: d.deliveryId, deliveries: d.more ? d.more.length + 1 : undefined }));
  return worker;
}
