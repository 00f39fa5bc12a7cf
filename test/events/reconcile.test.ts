import { Worker } from 'bullmq';
import { automaticCause, emit } from '../../src/events/emit';
import { fanOutEvent } from '../../src/events/fanout';
import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { reconcile } from '../../src/events/reconcile';
import { deliveryJobId, eventFanoutQueue, handOffEvents, queueDeliveries, webhookDeliveryQueue } from '../../src/events/jobs';
import { newTestKey } from '../helpers/app';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { countQueueKeys, deleteQueueKeys } from '../helpers/isolation';
import { until } from '../helpers/queues';
import { createReceivingEndpoint, verifyAll, type ReceivingEndpoint } from '../helpers/webhooks';

// Nothing lost: the database is the truth, and the reconciler rebuilds from it whatever Redis
// lost or a dead worker left behind. Nothing doubled: relay, fan-out and reconciler may all run
// more than once, at once, and each endpoint still gets each event once.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('reconcile', { RECONCILE_INTERVAL_MS: '500', WEBHOOK_RETRY_SCHEDULE: '0' }, { workers: false });
});
afterAll(() => e.close());
afterEach(() => e.stopWorkers());

const prisma = () => e.t.runtime.prisma;
const wipeRedis = () => deleteQueueKeys(e.t.config.redisUrl, e.t.config.queuePrefix);

async function accountWithEndpoints(paths: string[]): Promise<{ account: string; endpoints: ReceivingEndpoint[] }> {
  const key = newTestKey();
  const endpoints: ReceivingEndpoint[] = [];
  for (const path of paths) endpoints.push(await createReceivingEndpoint(e.t, e.receiver, key, path));
  return { account: await accountOfKey(e.t.runtime, key), endpoints };
}

async function queueIsEmpty(): Promise<boolean> {
  const counts = await Promise.all(
    [e.queues.fanoutQueue, e.queues.deliveryQueue].map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
  );
  return counts.every((c) => Object.values(c).every((n) => n === 0));
}

/**
 * Waits until every event is fanned out and delivered, then reconciles once more and lets the
 * queues drain, so a duplicate anything would have produced has arrived by the time we count.
 */
async function settle(eventIds: string[]): Promise<void> {
  await until(
    async () =>
      (await prisma().event.count({ where: { id: { in: eventIds }, fannedOutAt: null } })) === 0 &&
      (await prisma().webhookDelivery.count({ where: { eventId: { in: eventIds }, status: 'pending' } })) === 0,
    20000,
    'every delivery made',
  );
  await reconcile(prisma(), e.queues.producer);
  await until(queueIsEmpty, 20000, 'empty queues');
}

/** Each endpoint got exactly the given events, once each, all verified. */
function expectEachOnce(endpoints: ReceivingEndpoint[], eventIds: string[]): void {
  for (const ep of endpoints) {
    expect(verifyAll(e.receiver.on(ep.path), ep.secret).map((ev) => ev.id).sort()).toEqual([...eventIds].sort());
  }
}

/** A worker process that took the next job of a queue and died with it failed (or whose processor threw). */
async function failNextJob(queueName: string, jobId: string): Promise<void> {
  const worker = new Worker(queueName, undefined, {
    connection: { url: e.t.config.redisUrl, maxRetriesPerRequest: null },
    prefix: e.t.config.queuePrefix,
    autorun: false,
  });
  try {
    const token = 'crashed-worker';
    const job = await worker.getNextJob(token, { block: false });
    expect(job?.id).toBe(jobId);
    await job!.moveToFailed(new Error('the worker crashed'), token);
  } finally {
    await worker.close();
  }
}

test('Redis losing every key after hand-off and before the workers run loses no delivery and doubles none', async () => {
  const { account, endpoints } = await accountWithEndpoints(['/lost/a', '/lost/b']);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await emitTestEvent(e.t.runtime, account));
  expect((await e.queues.fanoutQueue.getJobCounts('waiting')).waiting).toBe(3);

  expect(await wipeRedis()).toBeGreaterThan(0);
  // A write still on its way when the wipe ran (a BullMQ bookkeeping key) is wiped too: the workers
  // must start on a Redis that holds none of this app's keys.
  await until(async () => (await wipeRedis()) === 0 && (await countQueueKeys(e.t.config.redisUrl, e.t.config.queuePrefix)) === 0, 5000, 'no queue keys left');

  await e.startWorkers();
  await settle(ids);
  expectEachOnce(endpoints, ids);
  expect(await prisma().webhookDelivery.count({ where: { eventId: { in: ids }, status: 'succeeded' } })).toBe(6);
});

test('deliveries fanned out whose jobs Redis lost are made by the reconciler', async () => {
  const { account, endpoints } = await accountWithEndpoints(['/fanned/a', '/fanned/b']);
  const id = await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false });
  // Fan-out made the rows; their jobs never reached Redis (or Redis lost them).
  expect(await fanOutEvent(e.t.runtime.sql, id)).toHaveLength(2);
  expect((await e.queues.deliveryQueue.getJobCounts('waiting')).waiting).toBe(0);
  await wipeRedis();

  await e.startWorkers();
  await settle([id]);
  expectEachOnce(endpoints, [id]);
});

test('a delivery left claimed by a killed worker is made once its lock expires, and not while it holds', async () => {
  await e.startWorkers();
  const { account, endpoints } = await accountWithEndpoints(['/killed/expired', '/killed/held']);
  const [expired, held] = endpoints;
  // What a worker that claimed both deliveries and was killed mid-request leaves behind: locked
  // rows and no jobs (the process held them). One lock has run out, the other has not.
  const eventId = await prisma().$transaction(async (tx) => {
    const id = await emit(tx, 'account.updated', { id: account, object: 'account' }, {
      accountId: account,
      apiVersion: LATEST_API_VERSION,
      created: Math.floor(Date.now() / 1000),
      cause: automaticCause,
    });
    await tx.event.update({ where: { id }, data: { fannedOutAt: new Date(), pendingWebhooks: 2 } });
    const row = (endpointId: string, lockedUntil: Date) => ({
      id: `whdel_${endpointId.slice(3)}${Date.now()}`,
      eventId: id,
      endpointId,
      status: 'pending',
      nextAttemptAt: new Date(Date.now() - 60_000),
      lockedUntil,
    });
    await tx.webhookDelivery.createMany({
      data: [row(expired.id, new Date(Date.now() - 1000)), row(held.id, new Date(Date.now() + 3600_000))],
    });
    return id;
  });
  const heldRow = await prisma().webhookDelivery.findFirstOrThrow({ where: { eventId, endpointId: held.id } });

  // The periodic reconciler finds the expired one.
  await until(async () => (await prisma().webhookDelivery.findFirst({ where: { eventId, endpointId: expired.id } }))?.status === 'succeeded');
  // The held one is left alone by it, and by more runs.
  await reconcile(prisma(), e.queues.producer);
  await reconcile(prisma(), e.queues.producer);
  await until(queueIsEmpty, 15000, 'empty queues');
  expect(e.receiver.on(held.path)).toEqual([]);
  expect(await e.queues.deliveryQueue.getJob(deliveryJobId(heldRow.id, 0))).toBeUndefined();
  expect(await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: heldRow.id } })).toMatchObject({ status: 'pending', attempts: 0 });

  // Once its lock runs out, it is made, once.
  await prisma().webhookDelivery.update({ where: { id: heldRow.id }, data: { lockedUntil: new Date(Date.now() - 1) } });
  await settle([eventId]);
  expectEachOnce(endpoints, [eventId]);
  expect(await prisma().event.findUniqueOrThrow({ where: { id: eventId } })).toMatchObject({ pendingWebhooks: 0 });
});

test('relay, fan-out and reconciler running twice at once still make one delivery per endpoint', async () => {
  await e.startWorkers();
  const { account, endpoints } = await accountWithEndpoints(['/twice/a', '/twice/b', '/twice/c']);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false }));
  const { producer } = e.queues;
  const [, , , , fanA, fanB] = await Promise.all([
    handOffEvents(producer, ids),
    handOffEvents(e.t.runtime.queues, ids),
    reconcile(prisma(), producer),
    reconcile(prisma(), e.t.runtime.queues),
    fanOutEvent(e.t.runtime.sql, ids[0]),
    fanOutEvent(e.t.runtime.sql, ids[0]),
  ]);
  // Whoever fanned the first event out, it was fanned out once.
  expect(fanA.length + fanB.length).toBeLessThanOrEqual(3);
  await settle(ids);
  await Promise.all([reconcile(prisma(), producer), reconcile(prisma(), producer), handOffEvents(producer, ids)]);
  await settle(ids);
  expectEachOnce(endpoints, ids);
  expect(await prisma().webhookDelivery.count({ where: { eventId: { in: ids } } })).toBe(15);
  expect(await prisma().webhookAttempt.count({ where: { eventId: { in: ids } } })).toBe(15);
});

test('a job that failed (its worker crashed or threw) does not keep the reconciler from queueing it again', async () => {
  const { account, endpoints } = await accountWithEndpoints(['/crashed/a']);
  // A fan-out job that failed…
  const handedOff = await emitTestEvent(e.t.runtime, account);
  await failNextJob(eventFanoutQueue.name, handedOff);
  // …and a delivery job that failed.
  const fannedOut = await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false });
  const [deliveryId] = await fanOutEvent(e.t.runtime.sql, fannedOut);
  await queueDeliveries(e.t.runtime.queues, [{ id: deliveryId, attempts: 0 }]);
  await failNextJob(webhookDeliveryQueue.name, deliveryJobId(deliveryId, 0));

  await e.startWorkers();
  await settle([handedOff, fannedOut]);
  expectEachOnce(endpoints, [handedOff, fannedOut]);
});

test('a delivery whose worker was killed mid-attempt is taken over once the stall check gives its job back, without waiting out the row lease', async () => {
  await e.startWorkers();
  const { account, endpoints } = await accountWithEndpoints(['/stalled/a']);
  const eventId = await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false });
  const [deliveryId] = await fanOutEvent(e.t.runtime.sql, eventId);
  // A worker took the job, leased the row for an hour (as that job) and died: it never renews its job lock.
  await prisma().webhookDelivery.update({
    where: { id: deliveryId },
    data: { lockedUntil: new Date(Date.now() + 3600_000), lockedBy: deliveryJobId(deliveryId, 0) },
  });
  const dead = new Worker(webhookDeliveryQueue.name, undefined, {
    connection: { url: e.t.config.redisUrl, maxRetriesPerRequest: null },
    prefix: e.t.config.queuePrefix,
    autorun: false,
    lockDuration: 500,
  });
  try {
    // The live workers must not take it first: add it while only the dead worker is asking.
    await e.stopWorkers();
    await queueDeliveries(e.queues.producer, [{ id: deliveryId, attempts: 0 }]);
    const job = await dead.getNextJob('dead-worker', { block: false });
    expect(job?.id).toBe(deliveryJobId(deliveryId, 0));
  } finally {
    await dead.close();
  }
  await e.startWorkers();
  await settle([eventId]);
  expectEachOnce(endpoints, [eventId]);
});
