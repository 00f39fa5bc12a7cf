import { createServer } from 'node:net';
import { Client } from 'pg';
import { eventFanoutQueue } from '../../src/events/jobs';
import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createVerificationSession } from '../helpers/fixtures';

// A write operation's changes, events and idempotent result commit together in the transaction
// the kernel opens; its jobs reach Redis only after that commit, and never hold the answer.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());
afterEach(() => jest.restoreAllMocks());

test('jobs are added only once the change and its event are committed (visible to another connection)', async () => {
  const other = new Client({ connectionString: t.config.databaseUrl });
  await other.connect();
  try {
    const seen: { queue: string; committed: boolean }[] = [];
    const add = t.runtime.queues.add.bind(t.runtime.queues);
    jest.spyOn(t.runtime.queues, 'add').mockImplementation(async (definition, jobs) => {
      const ids = jobs.map((j) => (j.data as { eventId?: string }).eventId).filter(Boolean);
      const { rows } = await other.query('SELECT count(*)::int AS n FROM events WHERE id = ANY($1)', [ids]);
      seen.push({ queue: definition.name, committed: rows[0].n === ids.length && ids.length > 0 });
      return add(definition, jobs);
    });
    await createVerificationSession(t, newTestKey());
    expect(seen).toEqual([{ queue: eventFanoutQueue.name, committed: true }]);
  } finally {
    await other.end();
  }
});

test("a handler's own $transaction joins the operation's: nothing of a failed operation stays", async () => {
  const key = newTestKey();
  const first = await createVerificationSession(t, key);
  // Counted within this key's account: other test files write to the same database meanwhile.
  const { accountId } = await t.runtime.prisma.identityVerificationSession.findUniqueOrThrow({ where: { id: first.id } });
  const before = await t.runtime.prisma.identityVerificationSession.count({ where: { accountId } });
  const events = await t.runtime.prisma.event.count({ where: { accountId } });
  // The session and its event are written, then storing the idempotent result fails.
  jest.spyOn(t.kernel.idempotency, 'complete').mockRejectedValueOnce(new Error('the database went away'));
  const res = await t.http().post('/v1/identity/verification_sessions').auth(key, '').set('Idempotency-Key', `tx-${Date.now()}`).type('form').send('type=document');
  expect(res.status).toBe(500);
  expect(await t.runtime.prisma.identityVerificationSession.count({ where: { accountId } })).toBe(before);
  expect(await t.runtime.prisma.event.count({ where: { accountId } })).toBe(events);
});

describe('with Redis down', () => {
  let down: TestApp;
  beforeAll(async () => {
    // A port where nothing answers.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    down = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  afterAll(() => down.close());

  test('writes still answer at once; their events wait in the database for the reconciler', async () => {
    const key = newTestKey();
    const started = Date.now();
    const session = await createVerificationSession(down, key);
    // Bounded, not a timing assertion on speed: an unbounded wait would never answer at all.
    expect(Date.now() - started).toBeLessThan(5000);
    const event = await down.runtime.prisma.event.findFirstOrThrow({ where: { type: 'identity.verification_session.created', data: { path: ['object', 'id'], equals: session.id } } });
    expect(event.fannedOutAt).toBeNull();
    expect(down.logs.some((l) => l.msg === 'adding jobs failed; the reconciler will add them')).toBe(true);
  });
});
