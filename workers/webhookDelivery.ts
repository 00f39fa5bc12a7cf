import type { Queue, Worker } from 'bullmq';
import type { Runtime } from '../src/runtime';
import { attemptDelivery } from '../src/events/delivery';
import { enqueueDeliveries } from '../src/events/reconcile';
import { openWorker } from '../src/lib/queue';
import { deliveryDuration, deliveryOutcomes } from '../src/lib/metrics';
import { webhookDeliveryQueue } from '../src/queues';

/** One attempt per job; a failed attempt schedules the next as a delayed job (the row holds when). */
export function startWebhookDelivery(runtime: Runtime, deliveryQueue: Queue<{ deliveryId: string; attempt: number }>): Worker {
  const { config } = runtime;
  const settings = { timeoutMs: config.webhookTimeoutMs, retrySchedule: config.webhookRetrySchedule };
  const worker = openWorker(webhookDeliveryQueue, config, async (job) => {
    const outcome = await attemptDelivery(runtime.prisma, runtime.clock, settings, job.data.deliveryId, job.data.attempt);
    if (outcome.kind !== 'skipped') deliveryOutcomes.inc({ outcome: outcome.kind });
    if ('durationMs' in outcome) deliveryDuration.observe(outcome.durationMs / 1000);
    if (outcome.kind === 'retry') {
      await enqueueDeliveries(deliveryQueue, [{ id: job.data.deliveryId, attempts: outcome.nextAttempt, delayMs: outcome.delayMs }]);
    }
    return outcome.kind;
  });
  worker.on('failed', (job, err) => runtime.logger.error({ err, delivery: job?.data.deliveryId }, 'webhook delivery job failed'));
  return worker;
}
