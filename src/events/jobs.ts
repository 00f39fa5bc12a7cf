import type { Queue } from 'bullmq';
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { openQueue } from '../lib/queue';
import { eventFanoutQueue, webhookDeliveryQueue } from '../queues';
import { enqueueDeliveries } from './reconcile';
import { EventRelay } from './relay';

/**
 * The producers the API and the workers share: hand committed events to fan-out, queue delivery
 * attempts. Both are safe to repeat and safe to lose; the reconciler rebuilds from the database.
 */
export class EventJobs {
  readonly relay: EventRelay;
  readonly deliveryQueue: Queue<{ deliveryId: string; attempt: number }>;

  constructor(config: Config, private readonly logger: Logger) {
    this.relay = new EventRelay(openQueue(eventFanoutQueue, config), logger);
    this.deliveryQueue = openQueue(webhookDeliveryQueue, config);
    // Without a listener BullMQ prints every failed reconnect to stderr; these go to the log.
    for (const queue of [this.relay.queue, this.deliveryQueue]) {
      queue.on('error', (err) => logger.warn({ err: err.message, queue: queue.name }, 'queue connection error'));
    }
  }

  handOffEvents(eventIds: readonly string[]): Promise<void> {
    return this.relay.handOff(eventIds);
  }

  async queueDeliveries(deliveries: { id: string; attempts: number; delayMs?: number }[]): Promise<void> {
    try {
      await enqueueDeliveries(this.deliveryQueue, deliveries);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'queueing deliveries failed; the reconciler will retry');
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.relay.close(), this.deliveryQueue.close()]);
  }
}
