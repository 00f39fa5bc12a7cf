import { Queue, Worker, type ConnectionOptions, type Processor, type WorkerOptions } from 'bullmq';
import type { Config } from '../config';

// A queue is defined once (name, payload type, options) and used by both producer and consumer.
// Payloads carry ids only; processors re-read the database, which is the source of truth.

export interface QueueDefinition<Payload> {
  readonly name: string;
  readonly workerOptions?: Omit<WorkerOptions, 'connection' | 'prefix'>;
  /** Phantom member that ties the payload type to the definition. */
  readonly payload?: Payload;
}

export const defineQueue = <Payload>(name: string, workerOptions?: QueueDefinition<Payload>['workerOptions']): QueueDefinition<Payload> => {
  if (name.includes(':')) throw new Error(`Queue names may not contain ':' (${name})`);
  return { name, workerOptions };
};

const connectionOf = (config: Config): ConnectionOptions => ({ url: config.redisUrl, maxRetriesPerRequest: null });

export function openQueue<P>(definition: QueueDefinition<P>, config: Config): Queue<P> {
  return new Queue<P>(definition.name, { connection: connectionOf(config), prefix: config.queuePrefix });
}

export function openWorker<P>(definition: QueueDefinition<P>, config: Config, processor: Processor<P>): Worker<P> {
  return new Worker<P>(definition.name, processor, {
    ...definition.workerOptions,
    connection: connectionOf(config),
    prefix: config.queuePrefix,
  });
}
