import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queue } from 'bullmq';

// Prometheus metrics of this process. The registry is process-wide (as prom-client intends):
// the API and the workers record into it, and /metrics serves it.

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequests = new Counter({
  name: 'sandbank_http_requests_total',
  help: 'HTTP requests by route, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'sandbank_http_request_duration_seconds',
  help: 'HTTP request latency by route and method',
  labelNames: ['route', 'method'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

export const eventsEmitted = new Counter({
  name: 'sandbank_events_emitted_total',
  help: 'Events written to the outbox, by type',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const deliveryOutcomes = new Counter({
  name: 'sandbank_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome (succeeded, retry, failed, canceled)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const deliveryDuration = new Histogram({
  name: 'sandbank_webhook_delivery_duration_seconds',
  help: 'Time one webhook delivery attempt took, request to response',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const queueDepth = new Gauge({
  name: 'sandbank_queue_jobs',
  help: 'Jobs per queue and state',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
});

const watchedQueues = new Set<Queue>();

/** Queue depths are read from Redis when metrics are scraped. */
export function watchQueueDepth(queue: Queue): () => void {
  watchedQueues.add(queue);
  return () => watchedQueues.delete(queue);
}

/** Queue connections wait for Redis without limit; a scrape must answer anyway. */
const QUEUE_DEPTH_TIMEOUT_MS = 1000;

export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  queueDepth.reset();
  await Promise.all(
    [...watchedQueues].map(async (queue) => {
      // A closed queue (an app or runtime that shut down) has nothing more to report.
      if (queue.closing) {
        watchedQueues.delete(queue);
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), QUEUE_DEPTH_TIMEOUT_MS);
      });
      const counts = await Promise.race([queue.getJobCounts('waiting', 'delayed', 'active', 'failed').catch(() => null), timeout]);
      clearTimeout(timer);
      if (!counts) return;
      for (const [state, n] of Object.entries(counts)) queueDepth.set({ queue: queue.name, state }, n);
    }),
  );
  return { contentType: registry.contentType, body: await registry.metrics() };
}
