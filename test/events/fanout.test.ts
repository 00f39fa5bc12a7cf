import { bearer, newTestKey } from '../helpers/app';
import { accountOfKey, createConnectedAccount, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { createWebhookEndpoint } from '../helpers/fixtures';
import { until } from '../helpers/queues';
import { createReceivingEndpoint, verifyAll, type ReceivingEndpoint } from '../helpers/webhooks';

// Fan-out: which endpoints an event reaches (enabled_events, `*`, explicit-only types, disabled
// endpoints, connect), each exactly once, every payload verified with the official SDK.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('fanout');
});
afterAll(() => e.close());

const endpoint = (key: string, path: string, params: Record<string, unknown>, headers: Record<string, string> = {}) =>
  createReceivingEndpoint(e.t, e.receiver, key, path, params, headers);

/** Waits until the event is fanned out and none of its deliveries is pending any more. */
async function settled(eventId: string): Promise<{ endpointId: string; status: string }[]> {
  const prisma = e.t.runtime.prisma;
  await until(async () => {
    const event = await prisma.event.findUnique({ where: { id: eventId }, select: { fannedOutAt: true } });
    if (!event?.fannedOutAt) return false;
    return (await prisma.webhookDelivery.count({ where: { eventId, status: 'pending' } })) === 0;
  }, 20000, `event ${eventId} delivered`);
  return prisma.webhookDelivery.findMany({ where: { eventId }, select: { endpointId: true, status: true } });
}

const eventIdsAt = (ep: ReceivingEndpoint, secret = ep.secret): string[] => verifyAll(e.receiver.on(ep.path), secret).map((ev) => ev.id);

test('each event reaches exactly the enabled endpoints whose enabled_events match, once each', async () => {
  const key = newTestKey();
  const all = await endpoint(key, '/fan/all', { enabled_events: ['*'] });
  const named = await endpoint(key, '/fan/named', { enabled_events: ['account.updated'] });
  const other = await endpoint(key, '/fan/other', { enabled_events: ['capability.updated'] });
  const disabled = await endpoint(key, '/fan/disabled', { enabled_events: ['*'] });
  const redactedOnly = await endpoint(key, '/fan/redacted', { enabled_events: ['identity.verification_session.redacted'] });
  const both = await endpoint(key, '/fan/both', { enabled_events: ['account.updated', 'identity.verification_session.redacted'] });
  const off = await e.t.http().post(`/v1/webhook_endpoints/${disabled.id}`).set(bearer(key)).type('form').send('disabled=true');
  expect(off.body.status).toBe('disabled');
  const account = await accountOfKey(e.t.runtime, key);

  const updated = await emitTestEvent(e.t.runtime, account, 'account.updated');
  const capability = await emitTestEvent(e.t.runtime, account, 'capability.updated', { id: 'cap_1', object: 'capability' });
  const redacted = await emitTestEvent(e.t.runtime, account, 'identity.verification_session.redacted', {
    id: 'vs_1',
    object: 'identity.verification_session',
  });

  const byEndpoint = (rows: { endpointId: string }[]) => rows.map((r) => r.endpointId).sort();
  expect(byEndpoint(await settled(updated))).toEqual([all.id, named.id, both.id].sort());
  expect(byEndpoint(await settled(capability))).toEqual([all.id, other.id].sort());
  // `*` does not cover a type that needs explicit selection.
  expect(byEndpoint(await settled(redacted))).toEqual([redactedOnly.id, both.id].sort());

  expect(eventIdsAt(all).sort()).toEqual([updated, capability].sort());
  expect(eventIdsAt(named)).toEqual([updated]);
  expect(eventIdsAt(other)).toEqual([capability]);
  expect(eventIdsAt(redactedOnly)).toEqual([redacted]);
  expect(eventIdsAt(both).sort()).toEqual([updated, redacted].sort());
  expect(e.receiver.on(disabled.path)).toEqual([]);

  // Every delivery succeeded, and the events count no pending webhooks any more.
  for (const id of [updated, capability, redacted]) {
    expect((await settled(id)).every((d) => d.status === 'succeeded')).toBe(true);
    const res = await e.t.http().get(`/v1/events/${id}`).set(bearer(key));
    expect(res.body.pending_webhooks).toBe(0);
  }
});

test('the payload is the event as stored, with the type and object it was emitted with', async () => {
  const key = newTestKey();
  const ep = await endpoint(key, '/fan/payload', { enabled_events: ['account.updated'] });
  const account = await accountOfKey(e.t.runtime, key);
  const object = { id: account, object: 'account', business_profile: { name: 'Now' } };
  const id = await emitTestEvent(e.t.runtime, account, 'account.updated', object, { previousAttributes: { business_profile: { name: 'Before' } } });
  await settled(id);
  const [event] = verifyAll(e.receiver.on(ep.path), ep.secret);
  expect(event).toMatchObject({
    id,
    object: 'event',
    type: 'account.updated',
    livemode: false,
    data: { object, previous_attributes: { business_profile: { name: 'Before' } } },
    request: { id: null, idempotency_key: null },
  });
  expect(event).not.toHaveProperty('account');
  const stored = await e.t.http().get(`/v1/events/${id}`).set(bearer(key));
  expect(event.created).toBe(stored.body.created);
  expect(event.data).toEqual(stored.body.data);
});

test("connect endpoints get the connected accounts' events; other endpoints only their own account's", async () => {
  const key = newTestKey();
  const platformConnect = await endpoint(key, '/connect/platform-connect', { enabled_events: ['*'], connect: true });
  const platformOwn = await endpoint(key, '/connect/platform-own', { enabled_events: ['*'] });
  const platform = await accountOfKey(e.t.runtime, key);
  const connected = await createConnectedAccount(e.t.runtime, platform);
  // The connected account's own endpoint, made with Stripe-Account.
  const connectedOwn = await endpoint(key, '/connect/connected-own', { enabled_events: ['*'] }, { 'Stripe-Account': connected });
  // Another platform's connect endpoint hears nothing of this platform's accounts.
  const otherKey = newTestKey();
  const stranger = await endpoint(otherKey, '/connect/stranger', { enabled_events: ['*'], connect: true });

  const fromConnected = await emitTestEvent(e.t.runtime, connected, 'account.updated', { id: connected, object: 'account' });
  const fromPlatform = await emitTestEvent(e.t.runtime, platform, 'account.updated');
  expect((await settled(fromConnected)).map((d) => d.endpointId).sort()).toEqual([platformConnect.id, connectedOwn.id].sort());
  expect((await settled(fromPlatform)).map((d) => d.endpointId)).toEqual([platformOwn.id]);

  const [viaConnect, ...moreConnect] = verifyAll(e.receiver.on(platformConnect.path), platformConnect.secret);
  expect(moreConnect).toEqual([]);
  expect(viaConnect.id).toBe(fromConnected);
  expect(viaConnect.account).toBe(connected);

  const [own, ...moreOwn] = verifyAll(e.receiver.on(platformOwn.path), platformOwn.secret);
  expect(moreOwn).toEqual([]);
  expect(own.id).toBe(fromPlatform);
  expect(own).not.toHaveProperty('account');

  expect(eventIdsAt(connectedOwn)).toEqual([fromConnected]);
  expect(e.receiver.on(stranger.path)).toEqual([]);
});

test('an event with no matching endpoint is fanned out to nothing and counts no pending webhooks', async () => {
  const key = newTestKey();
  await createWebhookEndpoint(e.t, key, { url: e.receiver.url('/fan/none'), enabled_events: ['capability.updated'] });
  const account = await accountOfKey(e.t.runtime, key);
  const id = await emitTestEvent(e.t.runtime, account, 'account.updated');
  expect(await settled(id)).toEqual([]);
  const res = await e.t.http().get(`/v1/events/${id}`).set(bearer(key));
  expect(res.body.pending_webhooks).toBe(0);
  expect(e.receiver.on('/fan/none')).toEqual([]);
});

test("deleting a connected account sends account.application.deauthorized to the platform's Connect endpoints only", async () => {
  const key = newTestKey();
  const platformConnect = await endpoint(key, '/deauth/connect', { enabled_events: ['account.application.deauthorized'], connect: true });
  const everything = await endpoint(key, '/deauth/connect-all', { enabled_events: ['*'], connect: true });
  const platformOwn = await endpoint(key, '/deauth/own', { enabled_events: ['*'] });
  const platform = await accountOfKey(e.t.runtime, key);
  const stripe = e.t.stripe(key);
  const account = await stripe.accounts.create({ type: 'express', country: 'US' });
  const deleted = await stripe.accounts.del(account.id);
  expect(deleted).toMatchObject({ id: account.id, object: 'account', deleted: true });

  const stored = await e.t.runtime.prisma.event.findFirstOrThrow({ where: { accountId: platform, type: 'account.application.deauthorized' } });
  const deliveries = await settled(stored.id);
  expect(deliveries.map((d) => d.endpointId).sort()).toEqual([platformConnect.id, everything.id].sort());
  const [event, ...more] = verifyAll(e.receiver.on(platformConnect.path), platformConnect.secret);
  expect(more).toEqual([]);
  expect(event).toMatchObject({
    id: stored.id,
    type: 'account.application.deauthorized',
    account: account.id,
    data: { object: { id: `ca_${platform.slice(5)}`, object: 'application', name: null } },
  });
  expect(e.receiver.on(platformOwn.path).filter((r) => r.body.includes('account.application.deauthorized'))).toEqual([]);
  // The platform's own event list doesn't show it (it was the connected account's), nor can it be retrieved.
  const listed = await e.t.http().get('/v1/events?type=account.application.deauthorized').set(bearer(key));
  expect(listed.body.data).toEqual([]);
  expect((await e.t.http().get(`/v1/events/${stored.id}`).set(bearer(key))).status).toBe(404);
  // Deleting it again: gone, and no second event.
  const again = await stripe.accounts.del(account.id).catch((err: unknown) => err);
  expect(again).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  expect(await e.t.runtime.prisma.event.count({ where: { accountId: platform, type: 'account.application.deauthorized' } })).toBe(1);
});
