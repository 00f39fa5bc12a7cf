import { fanOutEvents } from '../../src/events/fanout';
import { reconcile } from '../../src/events/reconcile';
import { DELIVERIES_PER_JOB, deliveryJobId, EVENTS_PER_FANOUT_JOB, handOffEvents, queueFirstAttempts } from '../../src/events/jobs';
import { newTestKey } from '../helpers/app';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { until } from '../helpers/queues';
import { createReceivingEndpoint, verifyAll, type ReceivingEndpoint } from '../helpers/webhooks';

// Ids that travel together share a job: events handed off in one call, and the first attempts of
// the deliveries fan-out made in one statement. A group job and a single job for the same
// delivery (the reconciler's, say) may both run; the delivery still arrives once.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('jobs', {}, { workers: false });
});
afterAll(() => e.close());
afterEach(() => e.stopWorkers());

const prisma = () => e.t.runtime.prisma;

async function accountWithEndpoints(paths: string[]): Promise<{ account: string; endpoints: ReceivingEndpoint[] }> {
  const key = newTestKey();
  const endpoints: ReceivingEndpoint[] = [];
  for (const path of paths) endpoints.push(await createReceivingEndpoint(e.t, e.receiver, key, path));
  return { account: await accountOfKey(e.t.runtime, key), endpoints };
}

async function emitMany(account: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await emitTestEvent(e.t.runtime, account, 'account.updated', undefined, { handOff: false }));
  return ids;
}

async function delivered(eventIds: string[]): Promise<void> {
  await until(
    async () =>
      (await prisma().event.count({ where: { id: { in: eventIds }, fannedOutAt: null } })) === 0 &&
      (await prisma().webhookDelivery.count({ where: { eventId: { in: eventIds }, status: { not: 'succeeded' } } })) === 0,
    20000,
    'every delivery made',
  );
  await until(
    async () => Object.values(await e.queues.deliveryQueue.getJobCounts('waiting', 'active', 'delayed')).every((n) => n === 0),
    20000,
    'an empty delivery queue',
  );
}

function expectEachOnce(endpoints: ReceivingEndpoint[], eventIds: string[]): void {
  for (const ep of endpoints) {
    expect(verifyAll(e.receiver.on(ep.path), ep.secret).map((ev) => ev.id).sort()).toEqual([...eventIds].sort());
  }
}

test('events handed off together share fan-out jobs, and each endpoint gets each event once', async () => {
  const { account, endpoints } = await accountWithEndpoints(['/jobs/fanout/a', '/jobs/fanout/b']);
  const ids = await emitMany(account, EVENTS_PER_FANOUT_JOB + 2);
  expect(await handOffEvents(e.queues.producer, ids)).toBe(true);
  const jobs = await e.queues.fanoutQueue.getJobs(['waiting']);
  expect(jobs.map((j) => j.id).sort()).toEqual([`${ids[0]}-x${EVENTS_PER_FANOUT_JOB}`, `${ids[EVENTS_PER_FANOUT_JOB]}-x2`].sort());

  await e.startWorkers();
  await delivered(ids);
  expectEachOnce(endpoints, ids);
});

test("the first attempts of deliveries fanned out together share delivery jobs, an event's deliveries in one", async () => {
  const paths = Array.from({ length: 6 }, (_, i) => `/jobs/group/${i}`);
  const { account, endpoints } = await accountWithEndpoints(paths);
  const ids = await emitMany(account, 3);
  const byEvent = await fanOutEvents(e.t.runtime.sql, ids);
  const deliveryIds = ids.flatMap((id) => byEvent.get(id)!);
  expect(deliveryIds).toHaveLength(18);
  await queueFirstAttempts(e.queues.producer, deliveryIds);
  const jobs = await e.queues.deliveryQueue.getJobs(['waiting']);
  expect(jobs.map((j) => j.id).sort()).toEqual(
    [deliveryJobId(deliveryIds[0], 0, DELIVERIES_PER_JOB), deliveryJobId(deliveryIds[DELIVERIES_PER_JOB], 0, 18 - DELIVERIES_PER_JOB)].sort(),
  );
  const first = jobs.find((j) => j.id === deliveryJobId(deliveryIds[0], 0, DELIVERIES_PER_JOB))!;
  expect([first.data.deliveryId, ...first.data.more!]).toEqual(deliveryIds.slice(0, DELIVERIES_PER_JOB));

  await e.startWorkers();
  await delivered(ids);
  expectEachOnce(endpoints, ids);
  expect(await prisma().webhookAttempt.count({ where: { deliveryId: { in: deliveryIds } } })).toBe(18);
});

test('a group job and the single jobs the reconciler adds for the same deliveries make each attempt once', async () => {
  const { account, endpoints } = await accountWithEndpoints(['/jobs/both/a', '/jobs/both/b', '/jobs/both/c']);
  const ids = await emitMany(account, 4);
  const byEvent = await fanOutEvents(e.t.runtime.sql, ids);
  const deliveryIds = ids.flatMap((id) => byEvent.get(id)!);
  await queueFirstAttempts(e.queues.producer, deliveryIds);
  // The reconciler sees them pending and unclaimed, and adds a job of its own for each.
  expect((await reconcile(prisma(), e.queues.producer)).deliveries).toBe(deliveryIds.length);
  expect((await e.queues.deliveryQueue.getJobCounts('waiting')).waiting).toBe(deliveryIds.length + 1);

  await e.startWorkers();
  await delivered(ids);
  expectEachOnce(endpoints, ids);
  expect(await prisma().webhookAttempt.count({ where: { deliveryId: { in: deliveryIds } } })).toBe(deliveryIds.length);
});

test('hand-offs made at once (one per request under load) go to Redis as one add, their events sharing fan-out jobs', async () => {
  const { account, endpoints } = await accountWithEndpoints(['/jobs/merged/a']);
  const ids = await emitMany(account, EVENTS_PER_FANOUT_JOB + 5);
  const bulk = jest.spyOn(e.queues.fanoutQueue.constructor.prototype as { addBulk: () => unknown }, 'addBulk');
  try {
    // Each request hands off its own event, in the same turn of the event loop.
    expect(await Promise.all(ids.map((id) => handOffEvents(e.queues.producer, [id])))).toEqual(ids.map(() => true));
    expect(bulk).toHaveBeenCalledTimes(1);
  } finally {
    bulk.mockRestore();
  }
  const jobs = await e.queues.fanoutQueue.getJobs(['waiting']);
  expect(jobs.map((j) => j.id).sort()).toEqual([`${ids[0]}-x${EVENTS_PER_FANOUT_JOB}`, `${ids[EVENTS_PER_FANOUT_JOB]}-x5`].sort());

  await e.startWorkers();
  await delivered(ids);
  expectEachOnce(endpoints, ids);
});
