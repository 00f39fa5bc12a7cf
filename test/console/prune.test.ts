import { newTestKey, type TestApp } from '../helpers/app';
import { consoleGet, signIn } from '../helpers/console';
import { startMaintenanceTestApp, type MaintenanceTestApp } from '../helpers/maintenanceApp';
import { until } from '../helpers/queues';
import { pruneConsoleSessions } from '../../src/console/sessions';
import { PRUNE_CONSOLE_SESSIONS } from '../../workers/maintenance';

// Ended console sessions (past their end, or idle too long) are deleted by the maintenance worker,
// not only when their cookie comes back: nobody's ended session stays at rest.

let m: MaintenanceTestApp;
let t: TestApp;
beforeAll(async () => {
  m = await startMaintenanceTestApp('console_prune', { MAINTENANCE_INTERVAL_MS: '1000' });
  t = m.t;
});
afterAll(() => m.close());

const sessionsOf = (accountId: string) => t.runtime.prisma.consoleSession.findMany({ where: { accountId }, select: { tokenHash: true } });

async function signedIn(): Promise<{ accountId: string; cookie: string }> {
  const session = await signIn(t, newTestKey());
  const home = await consoleGet(t, session, '/console');
  expect(home.status).toBe(200);
  const [row] = await t.runtime.prisma.consoleSession.findMany({ orderBy: { createdAt: 'desc' }, take: 1 });
  return { accountId: row.accountId, cookie: session.cookie };
}

test('past its end or idle too long goes; a live session stays and still signs its cookie in', async () => {
  const ended = await signedIn();
  const idle = await signedIn();
  const live = await signedIn();
  const prisma = t.runtime.prisma;
  const now = Date.now();
  await prisma.consoleSession.updateMany({ where: { accountId: ended.accountId }, data: { expiresAt: new Date(now - 1000) } });
  await prisma.consoleSession.updateMany({ where: { accountId: idle.accountId }, data: { lastSeenAt: new Date(now - (t.runtime.config.consoleSessionIdleSeconds + 60) * 1000) } });

  expect(await pruneConsoleSessions(prisma, t.runtime.config, now)).toBe(2);
  expect(await sessionsOf(ended.accountId)).toEqual([]);
  expect(await sessionsOf(idle.accountId)).toEqual([]);
  expect(await sessionsOf(live.accountId)).toHaveLength(1);
  expect((await consoleGet(t, { cookie: live.cookie }, '/console')).status).toBe(200);
});

test('the maintenance worker schedules it', async () => {
  const ended = await signedIn();
  await t.runtime.prisma.consoleSession.updateMany({ where: { accountId: ended.accountId }, data: { expiresAt: new Date(Date.now() - 1000) } });
  const running = await m.start();
  expect((await running.queue.getJobSchedulers()).map((s) => s.key ?? s.id)).toContain(PRUNE_CONSOLE_SESSIONS);
  await until(async () => (await sessionsOf(ended.accountId)).length === 0);
});
