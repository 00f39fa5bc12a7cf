import { defineQueue, type JobAdder, type JobSpec } from '../lib/queue';

// The events area's queues. Both jobs are safe to repeat and safe to lose: the event row (not
// yet fanned out) and the delivery row (pending) are the truth, and the reconciler re-adds them.
// Either job may carry several ids: one job costs Redis and the worker about as much as a
// statement, so ids that travel together share one.

/**
 * Hands committed events to fan-out: one event, or several (`more`) handed off together. A single
 * event's job id is the event id, so handing it twice is harmless; a group's is its first event's
 * and how many (fan-out of an event already fanned out finds nothing to do). Concurrent jobs share
 * one statement (workers/eventFanout.ts), so more of them make fuller batches.
 */
export interface FanoutJob {
  eventId: string;
  /** More events handed off in the same call. */
  more?: string[];
}

/** Concurrent hand-offs (one per request under load) become jobs of up to EVENTS_PER_FANOUT_JOB events. */
export const eventFanoutQueue = defineQueue<FanoutJob>('event-fanout', { concurrency: 64 }, (jobs) => fanoutJobs(jobs.flatMap((j) => eventsOf(j.data))));

/** Events handed off together share a job, up to this many: one job for Redis and the worker instead of one each. */
export const EVENTS_PER_FANOUT_JOB = 50;

/** The events a fan-out job hands on. */
export const eventsOf = (job: FanoutJob): string[] => [job.eventId, ...(job.more ?? [])];

/**
 * The same HTTP attempt of one delivery, or of several (`more`): fan-out puts the first attempts of
 * the events it fanned out together into jobs of up to DELIVERIES_PER_JOB, which costs Redis and
 * the worker one job per group instead of one per delivery. Retries, resends and the reconciler
 * queue one delivery per job.
 */
export interface DeliveryJob {
  deliveryId: string;
  attempt: number;
  /** More deliveries this job makes the same attempt of. */
  more?: string[];
}

export const webhookDeliveryQueue = defineQueue<DeliveryJob>('webhook-delivery', { concurrency: 64 });

export const DELIVERIES_PER_JOB = 16;

/**
 * `<delivery id>-<attempt>` for one delivery; a group's adds how many, so a group never takes the
 * id of a single job the reconciler or a retry adds for its first delivery.
 */
export const deliveryJobId = (deliveryId: string, attempt: number, count = 1): string =>
  count === 1 ? `${deliveryId}-${attempt}` : `${deliveryId}-${attempt}-x${count}`;

/** The deliveries a job makes its attempt of. */
export const deliveriesOf = (job: DeliveryJob): string[] => [job.deliveryId, ...(job.more ?? [])];

/** Hands committed events to fan-out (after their transaction commits), EVENTS_PER_FANOUT_JOB to a job. */
export function handOffEvents(queues: JobAdder, eventIds: readonly string[]): Promise<boolean> {
  return queues.add(eventFanoutQueue, fanoutJobs(eventIds));
}

function fanoutJobs(eventIds: readonly string[]): JobSpec<FanoutJob>[] {
  return inGroups(eventIds, EVENTS_PER_FANOUT_JOB, (eventId, more) =>
    more.length === 0 ? { id: eventId, data: { eventId } } : { id: `${eventId}-x${more.length + 1}`, data: { eventId, more } },
  );
}

/** `ids` cut into groups of up to `size`, each made into a job by `job(first, rest)`. */
function inGroups<J>(ids: readonly string[], size: number, job: (first: string, more: string[]) => J): J[] {
  const jobs: J[] = [];
  for (let i = 0; i < ids.length; i += size) {
    const [first, ...more] = ids.slice(i, i + size);
    jobs.push(job(first, more));
  }
  return jobs;
}

/** Queues delivery attempts, one per job; `attempts` is the attempt the job makes (0 for the first). */
export function queueDeliveries(queues: JobAdder, deliveries: readonly { id: string; attempts: number; delayMs?: number }[]): Promise<boolean> {
  return queues.add(
    webhookDeliveryQueue,
    deliveries.map((d) => ({ id: deliveryJobId(d.id, d.attempts), data: { deliveryId: d.id, attempt: d.attempts }, delayMs: d.delayMs })),
  );
}

/** Queues the first attempts of deliveries fan-out just made, DELIVERIES_PER_JOB to a job, in the order given. */
export function queueFirstAttempts(queues: JobAdder, deliveryIds: readonly string[]): Promise<boolean> {
  const jobs = inGroups(deliveryIds, DELIVERIES_PER_JOB, (deliveryId, more) => ({
    id: deliveryJobId(deliveryId, 0, more.length + 1),
    data: more.length === 0 ? { deliveryId, attempt: 0 } : { deliveryId, attempt: 0, more },
  }));
  return queues.add(webhookDeliveryQueue, jobs);
}
