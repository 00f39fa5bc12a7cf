import { financialConnectionsQueue } from '../../../src/resources/financial_connections/accounts/jobs';
import { bearer, newTestKey } from '../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { form, linkFcAccounts } from '../../helpers/fixtures';
import { until } from '../../helpers/queues';
import { sdkTypeProblems } from '../../helpers/sdkTypes';
import { createReceivingEndpoint, verifyAll } from '../../helpers/webhooks';

// Linked accounts' asynchronous half through the real workers: refreshes finishing after
// FC_REFRESH_DELAY_MS with their events delivered, subscriptions refreshing every
// FC_SUBSCRIPTION_INTERVAL_MS until unsubscribed, Inactive Accounts going inactive, and a worker
// restart with a Redis that lost every Financial Connections job.

const REFRESH_MS = 300;
const INTERVAL_MS = 800;

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('financial_connections', {
    FC_REFRESH_DELAY_MS: String(REFRESH_MS),
    FC_SUBSCRIPTION_INTERVAL_MS: String(INTERVAL_MS),
    FC_DEACTIVATION_DELAY_MS: '300',
    FC_REFRESH_COOLDOWN_SECONDS: '0',
    RECONCILE_INTERVAL_MS: '300',
  });
});
afterAll(() => e.close());

const FC = '/v1/financial_connections';
const post = (key: string, path: string, body: Record<string, unknown> = {}) => e.t.http().post(path).set(bearer(key)).type('form').send(form(body));
const get = (key: string, path: string) => e.t.http().get(path).set(bearer(key));
const account = (id: string) => e.t.runtime.prisma.financialConnectionsAccount.findUniqueOrThrow({ where: { id } });
const succeededRefreshes = (id: string, feature = 'transactions') =>
  e.t.runtime.prisma.financialConnectionsRefresh.count({ where: { fcAccountId: id, feature, status: 'succeeded' } });

test('prefetched refreshes stay pending for the delay, then succeed; refreshed_* events are delivered, signed and complete', async () => {
  const key = newTestKey();
  const expected = ['created', 'refreshed_balance', 'refreshed_ownership', 'refreshed_transactions'].map((c) => `financial_connections.account.${c}`);
  const hook = await createReceivingEndpoint(e.t, e.receiver, key, '/fc/all', { enabled_events: expected });
  const started = Date.now();
  const [linked] = await linkFcAccounts(e.t, key, { accounts: ['checking'] }, { prefetch: ['balances', 'ownership', 'transactions'] });
  expect(linked.transaction_refresh.status).toBe('pending');
  await until(async () => ((await account(linked.id)).transactionRefresh as any)?.status === 'succeeded', 15000, 'transaction refresh');
  await until(async () => ((await account(linked.id)).balanceRefresh as any)?.status === 'succeeded', 15000, 'balance refresh');
  await until(async () => ((await account(linked.id)).ownershipRefresh as any)?.status === 'succeeded', 15000, 'ownership refresh');
  expect(Date.now() - started).toBeGreaterThanOrEqual(REFRESH_MS - 50);
  const body = (await get(key, `${FC}/accounts/${linked.id}`)).body;
  expect(body.balance).toMatchObject({ type: 'cash' });
  expect(body.ownership).toMatch(/^fcaowns_/);
  expect((await get(key, `${FC}/transactions?account=${linked.id}`)).body.data.length).toBe(10);

  await until(() => e.receiver.on(hook.path).length >= expected.length, 15000, 'deliveries');
  const received = verifyAll(e.receiver.on(hook.path), hook.secret);
  expect(received.map((ev) => ev.type).sort()).toEqual(expected);
  for (const ev of received) expect(sdkTypeProblems(ev.data.object)).toEqual([]);
  expect(received.find((ev) => ev.type.endsWith('refreshed_transactions'))!.request).toEqual({ id: null, idempotency_key: null });
});

test('a subscription refreshes transactions at once, then every interval, until unsubscribed', async () => {
  const key = newTestKey();
  const [linked] = await linkFcAccounts(e.t, key, { accounts: ['savings'] });
  const subscribed = await post(key, `${FC}/accounts/${linked.id}/subscribe`, { features: ['transactions'] });
  expect(subscribed.body).toMatchObject({ subscriptions: ['transactions'], transaction_refresh: { status: 'pending' } });
  const firstDue = (await account(linked.id)).subscriptionDueAt!;
  await until(async () => (await succeededRefreshes(linked.id)) >= 3, 20000, 'three transaction refreshes');
  expect((await account(linked.id)).subscriptionDueAt!.getTime()).toBeGreaterThan(firstDue.getTime());
  // Each later refresh added transactions.
  const refreshes = await e.t.runtime.prisma.financialConnectionsRefresh.findMany({ where: { fcAccountId: linked.id, status: 'succeeded' }, orderBy: { seq: 'asc' } });
  for (const r of refreshes.slice(1)) {
    expect(await e.t.runtime.prisma.financialConnectionsTransaction.count({ where: { fcAccountId: linked.id, transactionRefresh: r.id } })).toBeGreaterThan(0);
  }

  const off = await post(key, `${FC}/accounts/${linked.id}/unsubscribe`, { features: ['transactions'] });
  expect(off.body.subscriptions).toEqual([]);
  await until(async () => (await e.t.runtime.prisma.financialConnectionsRefresh.count({ where: { fcAccountId: linked.id, status: 'pending' } })) === 0, 15000, 'the last refresh');
  const count = await succeededRefreshes(linked.id);
  await new Promise((r) => setTimeout(r, INTERVAL_MS * 2.5));
  expect(await succeededRefreshes(linked.id)).toBe(count);
  expect((await account(linked.id)).subscriptionDueAt).toBeNull();
});

test('an Inactive Accounts account goes inactive shortly after linking (its subscription stops), and relinking reactivates it', async () => {
  const key = newTestKey();
  const [linked] = await linkFcAccounts(e.t, key, { institution: 'inactive_accounts', accounts: ['savings'] });
  await until(async () => (await account(linked.id)).status === 'inactive', 15000, 'inactive');
  const types = async () => (await get(key, '/v1/events?limit=100')).body.data.map((ev: any) => ev.type);
  expect(await types()).toContain('financial_connections.account.deactivated');
  const [again] = await linkFcAccounts(e.t, key, { institution: 'inactive_accounts', accounts: ['savings'] }, { account_holder: linked.account_holder });
  expect(again).toMatchObject({ id: linked.id, status: 'active' });
  expect(await types()).toContain('financial_connections.account.reactivated');
  await until(async () => (await account(linked.id)).status === 'inactive', 15000, 'inactive again');
});

test('a worker restart with a Redis that lost every Financial Connections job still finishes refreshes, subscriptions and deactivations', async () => {
  const key = newTestKey();
  await e.stopWorkers();
  const [refreshing] = await linkFcAccounts(e.t, key, { accounts: ['checking'] });
  await post(key, `${FC}/accounts/${refreshing.id}/refresh`, { features: ['balance'] });
  const [subscribed] = await linkFcAccounts(e.t, key, { accounts: ['savings'] });
  await post(key, `${FC}/accounts/${subscribed.id}/subscribe`, { features: ['transactions'] });
  const [going] = await linkFcAccounts(e.t, key, { institution: 'inactive_accounts', accounts: ['checking'] });

  const queue = e.t.runtime.queues.of(financialConnectionsQueue);
  expect(await queue.getJobCountByTypes('delayed', 'waiting')).toBeGreaterThanOrEqual(4);
  await queue.obliterate({ force: true });
  expect(await queue.getJobCountByTypes('delayed', 'waiting', 'active')).toBe(0);

  await e.startWorkers();
  await until(async () => ((await account(refreshing.id)).balanceRefresh as any)?.status === 'succeeded', 15000, 'balance refresh');
  await until(async () => (await succeededRefreshes(subscribed.id)) >= 2, 20000, 'the subscription going on');
  await until(async () => (await account(going.id)).status === 'inactive', 15000, 'deactivation');
  // Nothing ran twice: one refresh finished per started refresh, one event each.
  const events = await e.t.runtime.prisma.event.findMany({ where: { type: 'financial_connections.account.refreshed_balance' } });
  expect(events.filter((ev) => (ev.data as any).object.id === refreshing.id)).toHaveLength(1);
  await post(key, `${FC}/accounts/${subscribed.id}/unsubscribe`, { features: ['transactions'] });
});
