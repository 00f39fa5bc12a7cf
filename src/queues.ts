import { defineQueue } from './lib/queue';

// Every queue, defined once: producers (API, reconciler) and consumers (workers/) import these.
// Payloads are ids only; the database is the source of truth.

export const maintenanceQueue = defineQueue<Record<string, never>>('maintenance', { concurrency: 1 });

/**
 * Hands a committed event to fan-out; the job id is the event id, so handing it twice is harmless.
 * Concurrent jobs share one statement (workers/eventFanout.ts), so more of them make fuller batches.
 */
export const eventFanoutQueue = defineQueue<{ eventId: string }>('event-fanout', { concurrency: 64 });

/** One HTTP attempt of one delivery; the job id is `<delivery id>-<attempt>`. */
export const webhookDeliveryQueue = defineQueue<{ deliveryId: string; attempt: number }>('webhook-delivery', { concurrency: 64 });

/**
 * One step of an Identity verification session: finish a submission's processing, or finish a
 * redaction. Job ids name the session (and submission), so adding one twice is harmless.
 */
export const identityQueue = defineQueue<{ sessionId: string; step: 'process' | 'redact' }>('identity', { concurrency: 8 });
