import Stripe from 'stripe';
import { pruneEvents } from '../../../src/events/reconcile';
import { EVENT_TYPES } from '../../../src/events/types';
import { unixSeconds } from '../../../src/lib/clock';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { accountOfKey, createConnectedAccount, emitTestEvent } from '../../helpers/events';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';

// The events API: list filters, retrieve, the event's shape, isolation between accounts,
// connected accounts, retention; over HTTP and through the official SDK. No workers run here:
// events are emitted without hand-off, and delivery states are written to the database.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
// close() also removes the app's queue keys from Redis.
afterAll(() => t.close());

type Res = { status: number; body: any };
const get = (key: string, path: string, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().get(path).set(bearer(key)).set(headers) as unknown as Promise<Res>;

/** A fresh key, registered (its first request makes its account), and that account. */
async function freshAccount(): Promise<{ key: string; account: string }> {
  const key = newTestKey();
  const res = await get(key, '/v1/events');
  expect(res.status).toBe(200);
  return { key, account: await accountOfKey(t.runtime, key) };
}

const emit = (account: string, type: Parameters<typeof emitTestEvent>[2] = 'account.updated', object?: Record<string, unknown>, previousAttributes?: Record<string, unknown>) =>
  emitTestEvent(t.runtime, account, type, object, { handOff: false, previousAttributes });

const ids = (res: Res): string[] => res.body.data.map((ev: { id: string }) => ev.id);

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

describe('the event object', () => {
  test('an automatic event: object, livemode, request with null ids, data.object as emitted', async () => {
    const { key, account } = await freshAccount();
    const object = { id: account, object: 'account', email: 'a@example.com' };
    const id = await emit(account, 'account.updated', object);
    const res = await get(key, `/v1/events/${id}`);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('GetEventsId', 200, res.body);
    expect(res.body).toEqual({
      id,
      object: 'event',
      api_version: LATEST_API_VERSION,
      created: expect.any(Number),
      data: { object },
      livemode: false,
      pending_webhooks: 0,
      request: { id: null, idempotency_key: null },
      type: 'account.updated',
    });
    expect(id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
    expect(Math.abs(res.body.created - unixSeconds(t.runtime.clock))).toBeLessThanOrEqual(5);
  });

  test('data.previous_attributes is there when the event was emitted with it', async () => {
    const { key, account } = await freshAccount();
    const id = await emit(account, 'account.updated', { id: account, object: 'account', email: 'new@example.com' }, { email: 'old@example.com' });
    const res = await get(key, `/v1/events/${id}`);
    expect(res.body.data).toEqual({ object: { id: account, object: 'account', email: 'new@example.com' }, previous_attributes: { email: 'old@example.com' } });
  });

  test('the frozen object does not change with later events', async () => {
    const { key, account } = await freshAccount();
    const first = await emit(account, 'account.updated', { id: account, object: 'account', email: 'one@example.com' });
    await emit(account, 'account.updated', { id: account, object: 'account', email: 'two@example.com' });
    expect((await get(key, `/v1/events/${first}`)).body.data.object.email).toBe('one@example.com');
  });
});

describe('retrieve', () => {
  test('unknown, malformed and other accounts\' ids are 404 resource_missing', async () => {
    const { key } = await freshAccount();
    const other = await freshAccount();
    const theirs = await emit(other.account);
    for (const id of ['evt_doesnotexist', theirs, 'nope', `${theirs}%00`, '%00']) {
      const res = await get(key, `/v1/events/${id}`);
      expectError(res, 404, { type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
      expect(res.body.error.message).toMatch(/^No such event: '/);
    }
    expect((await get(other.key, `/v1/events/${theirs}`)).status).toBe(200);
  });
});

describe('list filters', () => {
  test('type, a type with a wildcard, and types[]', async () => {
    const { key, account } = await freshAccount();
    const updated = await emit(account, 'account.updated');
    const authorized = await emit(account, 'account.application.authorized', { id: 'ca_1', object: 'application' });
    const capability = await emit(account, 'capability.updated', { id: 'card_payments', object: 'capability' });
    const subscription = await emit(account, 'customer.subscription.updated', { id: 'sub_1', object: 'subscription' });

    expect(ids(await get(key, '/v1/events?type=account.updated'))).toEqual([updated]);
    expect(ids(await get(key, '/v1/events?type=account.*'))).toEqual([authorized, updated]);
    expect(ids(await get(key, '/v1/events?type=*.updated'))).toEqual([subscription, capability, updated]);
    expect(ids(await get(key, '/v1/events?type=customer.*'))).toEqual([subscription]);
    expect(ids(await get(key, '/v1/events?type=charge.succeeded'))).toEqual([]);
    expect(ids(await get(key, '/v1/events?type=*'))).toEqual([subscription, capability, authorized, updated]);
    expect(ids(await get(key, '/v1/events?types[]=capability.updated&types[]=account.updated'))).toEqual([capability, updated]);
    expect(ids(await get(key, '/v1/events?types[0]=customer.subscription.updated'))).toEqual([subscription]);
    expect(ids(await get(key, '/v1/events?types[]=not.a.type&types[]=account.updated'))).toEqual([updated]);
    expect(ids(await get(key, '/v1/events'))).toEqual([subscription, capability, authorized, updated]);
  });

  test('types[] takes up to 20 types, and not together with type', async () => {
    const { key } = await freshAccount();
    const twenty = EVENT_TYPES.slice(0, 20).map((type) => `types[]=${type}`).join('&');
    expect((await get(key, `/v1/events?${twenty}`)).status).toBe(200);
    const tooMany = await get(key, `/v1/events?${twenty}&types[]=${EVENT_TYPES[20]}`);
    expectError(tooMany, 400, { type: 'invalid_request_error', param: 'types' });
    expect(tooMany.body.error.message).toContain('20');
    const both = await get(key, '/v1/events?type=account.updated&types[]=capability.updated');
    expectError(both, 400, { type: 'invalid_request_error', code: 'parameters_exclusive' });
    expect(both.body.error.message).toContain('type');
    expect(both.body.error.message).toContain('types');
    // Any string is a type, as in the public API: one that doesn't exist matches nothing.
    const unknown = await get(key, '/v1/events?types[]=not.a.type');
    expect(unknown.status).toBe(200);
    expect(unknown.body.data).toEqual([]);
  });

  test('created', async () => {
    const { key, account } = await freshAccount();
    const now = unixSeconds(t.runtime.clock);
    const old = await t.runtime.prisma.event.create({
      data: { id: 'evt_createdfilter' + account.slice(5), accountId: account, created: now - 3600, type: 'account.updated', apiVersion: LATEST_API_VERSION, data: { object: {} } },
    });
    const recent = await emit(account);
    expect(ids(await get(key, `/v1/events?created[lt]=${now - 60}`))).toEqual([old.id]);
    expect(ids(await get(key, `/v1/events?created[gte]=${now - 60}`))).toEqual([recent]);
    expect(ids(await get(key, `/v1/events?created=${now - 3600}`))).toEqual([old.id]);
    expect(ids(await get(key, `/v1/events?created[gte]=${now - 3600}&type=account.updated`))).toEqual([recent, old.id]);
  });

  test('delivery_success: false while any delivery is pending or failed; true once none is', async () => {
    const { key, account } = await freshAccount();
    const prisma = t.runtime.prisma;
    const make = async (statuses: string[]) => {
      const id = await emit(account);
      await prisma.event.update({ where: { id }, data: { fannedOutAt: new Date() } });
      await prisma.webhookDelivery.createMany({
        data: statuses.map((status, i) => ({ id: `whdel_${id.slice(4)}${i}`, eventId: id, endpointId: `we_test${i}`, status })),
      });
      return id;
    };
    const none = await make([]);
    const succeeded = await make(['succeeded', 'succeeded']);
    const canceled = await make(['succeeded', 'canceled']);
    const pending = await make(['succeeded', 'pending']);
    const failed = await make(['failed', 'succeeded']);
    expect(ids(await get(key, '/v1/events?delivery_success=true'))).toEqual([canceled, succeeded, none]);
    expect(ids(await get(key, '/v1/events?delivery_success=false'))).toEqual([failed, pending]);
    expectError(await get(key, '/v1/events?delivery_success=maybe'), 400, { type: 'invalid_request_error', param: 'delivery_success' });
  });
});

describe('accounts', () => {
  test("an account sees only its own events", async () => {
    const a = await freshAccount();
    const b = await freshAccount();
    const mine = await emit(a.account);
    const theirs = await emit(b.account);
    expect(ids(await get(a.key, '/v1/events'))).toEqual([mine]);
    expect(ids(await get(b.key, '/v1/events'))).toEqual([theirs]);
  });

  test("a connected account's events carry `account` and are seen with Stripe-Account, not by the platform", async () => {
    const platform = await freshAccount();
    const connected = await createConnectedAccount(t.runtime, platform.account);
    const own = await emit(platform.account);
    const theirs = await emit(connected, 'account.updated', { id: connected, object: 'account' });
    const asConnected = { 'Stripe-Account': connected };

    const list = await get(platform.key, '/v1/events', asConnected);
    expect(ids(list)).toEqual([theirs]);
    expect(list.body.data[0].account).toBe(connected);
    expectMatchesResponseSchema('GetEvents', 200, list.body);
    const one = await get(platform.key, `/v1/events/${theirs}`, asConnected);
    expect(one.body).toMatchObject({ id: theirs, account: connected, data: { object: { id: connected } } });

    const platformList = await get(platform.key, '/v1/events');
    expect(ids(platformList)).toEqual([own]);
    expect(platformList.body.data[0]).not.toHaveProperty('account');
    expect((await get(platform.key, `/v1/events/${theirs}`)).status).toBe(404);
    expect((await get(platform.key, `/v1/events/${own}`, asConnected)).status).toBe(404);
  });
});

describe('retention', () => {
  test('events older than the retention are neither listed nor retrievable, and the sweep deletes them', async () => {
    const { key, account } = await freshAccount();
    const prisma = t.runtime.prisma;
    const now = unixSeconds(t.runtime.clock);
    const days = t.config.eventRetentionDays;
    const expired = await prisma.event.create({
      data: { id: `evt_expired${account.slice(5)}`, accountId: account, created: now - days * 86400 - 60, type: 'account.updated', apiVersion: LATEST_API_VERSION, data: { object: {} } },
    });
    const lastDay = await prisma.event.create({
      data: { id: `evt_lastday${account.slice(5)}`, accountId: account, created: now - days * 86400 + 3600, type: 'account.updated', apiVersion: LATEST_API_VERSION, data: { object: {} } },
    });
    const fresh = await emit(account);

    expect(ids(await get(key, '/v1/events'))).toEqual([fresh, lastDay.id]);
    expect((await get(key, `/v1/events/${expired.id}`)).status).toBe(404);
    expect((await get(key, `/v1/events/${lastDay.id}`)).status).toBe(200);

    expect(await pruneEvents(prisma, days, now)).toBeGreaterThanOrEqual(1);
    expect(await prisma.event.findUnique({ where: { id: expired.id } })).toBeNull();
    expect(await prisma.event.count({ where: { id: { in: [lastDay.id, fresh] } } })).toBe(2);
  });
});

describe('through the official SDK', () => {
  test('events.list with filters and auto-pagination, and events.retrieve', async () => {
    const { key, account } = await freshAccount();
    const stripe = t.stripe(key);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await emit(account));
    const capability = await emit(account, 'capability.updated', { id: 'card_payments', object: 'capability' });

    const page = await stripe.events.list({ type: 'account.updated', limit: 2 });
    expect(page.data.map((ev) => ev.id)).toEqual([made[4], made[3]]);
    expect(page.has_more).toBe(true);
    const all: string[] = [];
    for await (const ev of stripe.events.list({ types: ['account.updated'], limit: 2 })) all.push(ev.id);
    expect(all).toEqual([...made].reverse());

    const event: Stripe.Event = await stripe.events.retrieve(capability);
    expect(event).toMatchObject({ id: capability, object: 'event', type: 'capability.updated', livemode: false, data: { object: { id: 'card_payments' } } });
    expect(event.request).toEqual({ id: null, idempotency_key: null });

    await expect(stripe.events.retrieve('evt_missing')).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 404,
      code: 'resource_missing',
    });
    await expect(stripe.events.list({ type: 'account.updated', types: ['capability.updated'] } as any)).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'parameters_exclusive',
    });
  });
});
