import { bearer, newTestKey, type TestApp } from '../helpers/app';
import { COMPLETE_EXPRESS, createAccount, createAccountSession, createVerificationSession, form } from '../helpers/fixtures';
import { EXPIRED_LINK_RETENTION_SECONDS, pruneExpiredLinks } from '../../src/hosted/prune';
import { PRUNE_LINKS } from '../../workers/maintenance';
import { startMaintenanceTestApp, type MaintenanceTestApp } from '../helpers/maintenanceApp';
import { until } from '../helpers/queues';

// Expired hosted links and session secrets are kept a week, then pruned by the maintenance job.

let m: MaintenanceTestApp;
let t: TestApp;
beforeAll(async () => {
  m = await startMaintenanceTestApp('link_prune', { MAINTENANCE_INTERVAL_MS: '1000' });
  t = m.t;
});
afterAll(() => m.close());

const now = () => Math.floor(Date.now() / 1000);

/** One of each kind for a new key; returns the owning key's rows by account. */
async function issueEach(): Promise<{ account: string; session: string }> {
  const key = newTestKey();
  const account = (await createAccount(t, key, COMPLETE_EXPRESS)).id;
  await t.http().post(`/v1/accounts/${account}/login_links`).set(bearer(key)).type('form').send('');
  await t.http().post('/v1/account_links').set(bearer(key)).type('form').send(form({ account, type: 'account_onboarding' }));
  await createAccountSession(t, key);
  const session = (await createVerificationSession(t, key)).id;
  return { account, session };
}

const counts = async (owner: { account: string; session: string }) => {
  const prisma = t.runtime.prisma;
  const parent = (await prisma.account.findUniqueOrThrow({ where: { id: owner.account } })).parentAccountId!;
  return {
    accountLinks: await prisma.accountLink.count({ where: { accountId: owner.account } }),
    accountSessions: await prisma.accountSession.count({ where: { account: { parentAccountId: parent } } }),
    identityLinks: await prisma.identityVerificationLink.count({ where: { sessionId: owner.session } }),
    loginLinks: await prisma.loginLink.count({ where: { accountId: owner.account } }),
  };
};

test('rows expired over a week ago go; recent and expired-this-week ones stay', async () => {
  const old = await issueEach();
  const recent = await issueEach();
  const prisma = t.runtime.prisma;
  const longAgo = now() - EXPIRED_LINK_RETENTION_SECONDS - 10;
  const lastWeek = now() - EXPIRED_LINK_RETENTION_SECONDS + 3600;
  await prisma.accountLink.updateMany({ where: { accountId: old.account }, data: { expiresAt: longAgo } });
  await prisma.accountSession.updateMany({ where: { account: { parentAccountId: (await prisma.account.findUniqueOrThrow({ where: { id: old.account } })).parentAccountId } }, data: { expiresAt: longAgo } });
  await prisma.identityVerificationLink.updateMany({ where: { sessionId: old.session }, data: { expiresAt: longAgo } });
  await prisma.loginLink.updateMany({ where: { accountId: old.account }, data: { expiresAt: longAgo } });
  await prisma.identityVerificationLink.updateMany({ where: { sessionId: recent.session }, data: { expiresAt: lastWeek } });
  await prisma.loginLink.updateMany({ where: { accountId: recent.account }, data: { expiresAt: lastWeek } });

  const pruned = await pruneExpiredLinks(prisma, now());
  expect(pruned).toEqual({ accountLinks: 1, accountSessions: 1, identityLinks: 2, loginLinks: 1 });
  expect(await counts(old)).toEqual({ accountLinks: 0, accountSessions: 0, identityLinks: 0, loginLinks: 0 });
  expect(await counts(recent)).toEqual({ accountLinks: 1, accountSessions: 1, identityLinks: 2, loginLinks: 1 });
  // The session itself stays; a retrieve issues a fresh url.
  expect(await prisma.identityVerificationSession.count({ where: { id: old.session } })).toBe(1);
});

test('the maintenance worker schedules the pruning', async () => {
  const old = await issueEach();
  await t.runtime.prisma.identityVerificationLink.updateMany({ where: { sessionId: old.session }, data: { expiresAt: now() - EXPIRED_LINK_RETENTION_SECONDS - 10 } });
  const running = await m.start();
  expect((await running.queue.getJobSchedulers()).map((s) => s.key ?? s.id)).toContain(PRUNE_LINKS);
  await until(async () => (await counts(old)).identityLinks === 0);
});
