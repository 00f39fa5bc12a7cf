import type { Queue } from 'bullmq';
import type { Logger } from '../lib/logger';

/**
 * Hands committed events to fan-out. A failure here loses nothing: the event row is still
 * un-fanned-out in the database and the reconciler hands it over again.
 */
export class EventRelay {
  constructor(
    readonly queue: Queue<{ eventId: string }>,
    private readonly logger: Logger,
  ) {}

  async handOff(eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 0) return;
    try {
      await this.queue.addBulk(
        eventIds.map((eventId) => ({
          name: 'fanout',
          data: { eventId },
          // Failed jobs go too, so the reconciler can hand the event over again under its id.
          opts: { jobId: eventId, removeOnComplete: true, removeOnFail: true },
        })),
      );
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, events: eventIds.length }, 'event hand-off failed; the reconciler will retry');
    }
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
