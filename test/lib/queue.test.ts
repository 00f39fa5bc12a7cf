import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { closeWorker, defineQueue, JobQueues, openWorker } from '../../src/lib/queue';
import { randomBase62 } from '../../src/lib/ids';
import { bearer, newTestKey } from '../helpers/app';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { deleteQueueKeys } from '../helpers/isolation';
import { until } from '../helpers/queues';
import { startRedisProxy, type RedisProxy } from '../helpers/redisProxy';
import { createReceivingEndpoint } from '../helpers/webhooks';
import { forwardingQueue } from '../../src/resources/forwarding/requests/jobs';

// BullMQ prints the stack of an `error` nobody listens to. Every queue and worker is made with a
// listener that logs one warn line instead; a Redis flushed or cut off under running workers
// (the errors come by the dozen) must print nothing to stderr and log no stack.

/** Everything written to stderr or the console while `during` runs. */
async function printedDuring(during: () => Promise<void>): Promise<string[]> {
  const printed: string[] = [];
  const spies = [
    ...(['error', 'warn', 'log', 'info', 'debug', 'trace'] as const).map((m) =>
      jest.spyOn(console, m).mockImplementation((...args: unknown[]) => void printed.push(`console.${m}: ${args.map(String).join(' ')}`)),
    ),
    jest.spyOn(process.stderr, 'write').mockImplementation(((chunk: unknown) => {
      printed.push(`stderr: ${String(chunk)}`);
      return true;
    }) as typeof process.stderr.write),
  ];
  try {
    await during();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return printed;
}

function capturingLogger() {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('info', sink), lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

test('a queue and a worker log an error as one warn line, message only, and print nothing', async () => {
  const config = loadConfig({ ...process.env, QUEUE_PREFIX: `test${randomBase62(8)}` });
  const { logger, lines } = capturingLogger();
  const definition = defineQueue<{ id: string }>('listener-check');
  const queues = new JobQueues(config, logger);
  const queue = queues.of(definition);
  const worker = openWorker(definition, { config, logger }, async () => undefined);
  try {
    const printed = await printedDuring(async () => {
      // What BullMQ emits when Redis goes away or loses a job under it.
      queue.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6379'));
      worker.emit('error', new Error('Missing key for job 1. moveToFinished'));
    });
    expect(printed).toEqual([]);
    expect(lines().map(({ level, msg, err, queue }) => ({ level, msg, err, queue }))).toEqual([
      { level: 40, msg: 'queue connection error', err: 'connect ECONNREFUSED 127.0.0.1:6379', queue: 'listener-check' },
      { level: 40, msg: 'queue worker error', err: 'Missing key for job 1. moveToFinished', queue: 'listener-check' },
    ]);
  } finally {
    await worker.close();
    await queues.close();
    await deleteQueueKeys(config.redisUrl, config.queuePrefix);
  }
});

test("a queue's concurrency setting sizes its worker: forwards take FORWARDING_CONCURRENCY (64 unless set)", async () => {
  const { logger } = capturingLogger();
  for (const [env, expected] of [[{}, 64], [{ FORWARDING_CONCURRENCY: '5' }, 5]] as const) {
    const config = loadConfig({ ...process.env, FORWARDING_CONCURRENCY: undefined, ...env, QUEUE_PREFIX: `test${randomBase62(8)}` });
    expect(config.forwardingConcurrency).toBe(expected);
    const worker = openWorker(forwardingQueue, { config, logger }, async () => undefined);
    try {
      expect(worker.concurrency).toBe(expected);
      await worker.waitUntilReady();
    } finally {
      await worker.close();
      await deleteQueueKeys(config.redisUrl, config.queuePrefix);
    }
  }
  // A queue without the setting keeps its declared options.
  const config = loadConfig({ ...process.env, QUEUE_PREFIX: `test${randomBase62(8)}` });
  const worker = openWorker(defineQueue<{ id: string }>('fixed-concurrency', { concurrency: 3 }), { config, logger }, async () => undefined);
  try {
    expect(worker.concurrency).toBe(3);
    await worker.waitUntilReady();
  } finally {
    await worker.close();
    await deleteQueueKeys(config.redisUrl, config.queuePrefix);
  }
});

test('a worker closes within its grace while Redis is away, and stops reconnecting', async () => {
  const proxy = await startRedisProxy(loadConfig(process.env).redisUrl);
  const config = loadConfig({ ...process.env, REDIS_URL: proxy.url, QUEUE_PREFIX: `test${randomBase62(8)}` });
  const { logger, lines } = capturingLogger();
  const worker = openWorker(defineQueue<{ id: string }>('close-check'), { config, logger }, async () => undefined);
  try {
    await worker.waitUntilReady();
    proxy.cut();
    // Failed reconnects (one line for all of them, src/lib/healingLog.ts): its connections are reconnecting, where BullMQ's close hangs.
    await until(() => lines().some((l) => l.msg === 'queue worker error'), 15000, 'reconnects failing');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    // BullMQ's own close never returns here (it waits on a reconnecting connection).
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      closeWorker(worker, logger, 500).then(() => 'closed'),
      new Promise((resolve) => (timer = setTimeout(() => resolve('still closing'), 10000))),
    ]).finally(() => clearTimeout(timer));
    expect(outcome).toBe('closed');
    expect(lines().filter((l) => l.msg.startsWith('the worker did not close in time'))).toHaveLength(1);
    // Its connections were dropped for good: no more reconnect attempts, so no more errors.
    const errors = lines().length;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(lines().slice(errors)).toEqual([]);
  } finally {
    proxy.restore();
    await proxy.close();
    await deleteQueueKeys(loadConfig(process.env).redisUrl, config.queuePrefix);
  }
}, 30000);

describe('Redis flushed and cut off under running workers', () => {
  let proxy: RedisProxy;
  let e: EventsTestApp;
  beforeAll(async () => {
    proxy = await startRedisProxy(loadConfig(process.env).redisUrl);
    e = await startEventsTestApp('queue_errors', { REDIS_URL: proxy.url, RECONCILE_INTERVAL_MS: '300' });
  });
  afterAll(async () => {
    proxy.restore();
    await e.close();
    await proxy.close();
  });

  test('prints nothing to stderr, logs each error as one line without a stack, and recovers', async () => {
    const key = newTestKey();
    // Deliveries that take a while: jobs are running when their keys vanish.
    const slow = await createReceivingEndpoint(e.t, e.receiver, key, '/outage/slow');
    e.receiver.reply(slow.path, { status: 200, delayMs: 1500 });
    const account = await accountOfKey(e.t.runtime, key);
    for (let i = 0; i < 3; i++) await emitTestEvent(e.t.runtime, account);
    await until(() => e.receiver.on(slow.path).length > 0, 15000, 'a delivery under way');
    const before = e.t.logs.length;

    const printed = await printedDuring(async () => {
      // A FLUSHALL, as this app sees it (the Redis is shared: only its keys go).
      await deleteQueueKeys(e.t.config.redisUrl, e.t.config.queuePrefix);
      await until(() => e.t.logs.slice(before).some((l) => String(l.err).startsWith('Missing key for job')), 15000, 'a job finishing without its key');
      // Then Redis goes away for a while, and comes back.
      proxy.cut();
      await until(() => e.t.logs.slice(before).some((l) => l.msg === 'queue worker error' && /ECONNREFUSED|ECONNRESET|closed/.test(String(l.err))), 15000, 'worker errors');
      // A while of failed reconnects: counted, not each logged.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      proxy.restore();
      // Back in business: a new event is delivered (the workers reconnected and the reconciler re-added it).
      e.receiver.reply(slow.path, { status: 200 });
      await emitTestEvent(e.t.runtime, account);
      const delivered = e.receiver.on(slow.path).length;
      await until(() => e.receiver.on(slow.path).length > delivered, 20000, 'a delivery after the outage');
    });

    expect(printed).toEqual([]);
    const lines = e.t.logs.slice(before);
    const errors = lines.filter((l) => l.msg === 'queue worker error' || l.msg === 'queue connection error');
    expect(errors.length).toBeGreaterThan(0);
    for (const line of errors) {
      expect(line.level).toBe(40);
      expect(typeof line.err).toBe('string');
      expect(line.err).not.toContain('\n');
    }
    // No line logged during the outage carries a stack, whatever its message.
    expect(JSON.stringify(lines)).not.toMatch(/\\n\s+at /);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    // The API still answers (producers fail fast and the reconciler re-adds what Redis lost).
    expect((await e.t.http().get('/v1/events?limit=1').set(bearer(key))).status).toBe(200);
  }, 60000);
});
