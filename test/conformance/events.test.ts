import Stripe from 'stripe';
import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { bearer, newTestKey } from '../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { form } from '../helpers/fixtures';
import { until } from '../helpers/queues';
import { sdkTypeProblems } from '../helpers/sdkTypes';
import { createReceivingEndpoint, verifyAll } from '../helpers/webhooks';

// Events as the SDKs and webhook receivers see them: previous_attributes holding only what
// changed, a platform's default version (the one its first request pinned), objects rendered
// for an older version (an endpoint's api_version, a request's Stripe-Version), and the types[]
// filter taking any strings.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('conformance_events');
});
afterAll(() => e.close());

type Res = { status: number; body: any; headers: Record<string, string> };
const post = (key: string, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  e.t.http().post(path).set(bearer(key)).set(headers).type('form').send(form(body)) as unknown as Promise<Res>;
const get = (key: string, path: string, headers: Record<string, string> = {}): Promise<Res> =>
  e.t.http().get(path).set(bearer(key)).set(headers) as unknown as Promise<Res>;

const CUSTOM = {
  controller: { stripe_dashboard: { type: 'none' }, requirement_collection: 'application', fees: { payer: 'application' }, losses: { payments: 'application' } },
  capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
  business_type: 'individual',
};

async function accountUpdatedEvents(key: string, account: string): Promise<any[]> {
  const res = await get(key, '/v1/events?type=account.updated&limit=100', { 'Stripe-Account': account });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('previous_attributes', () => {
  test('holds the changed leaves with their old values, null for added keys, arrays whole; webhooks carry the same', async () => {
    const key = newTestKey();
    const hook = await createReceivingEndpoint(e.t, e.receiver, key, '/conformance/previous', { connect: true, enabled_events: ['account.updated'] });
    const { body: account } = await post(key, '/v1/accounts', { ...CUSTOM, metadata: { a: 'old' }, settings: { payouts: { schedule: { interval: 'daily' } } } });
    const path = `/v1/accounts/${account.id}`;

    expect((await post(key, path, { metadata: { a: 'new' } })).status).toBe(200);
    expect((await post(key, path, { metadata: { b: '2' } })).status).toBe(200);
    expect((await post(key, path, { settings: { payouts: { schedule: { interval: 'weekly', weekly_anchor: 'monday' } } } })).status).toBe(200);
    expect((await post(key, path, { individual: { first_name: 'Jenny' } })).status).toBe(200);

    const events = (await accountUpdatedEvents(key, account.id)).reverse();
    expect(events.slice(0, 3).map((ev) => ev.data.previous_attributes)).toEqual([
      { metadata: { a: 'old' } },
      { metadata: { b: null } },
      { settings: { payouts: { schedule: { interval: 'daily', weekly_anchor: null } } } },
    ]);
    // first_name was null; the requirement it met leaves the arrays, which are given whole.
    const named = events[3].data.previous_attributes;
    expect(named.individual.first_name).toBeNull();
    expect(named.individual).not.toHaveProperty('last_name');
    expect(named.requirements.currently_due).toEqual(account.requirements.currently_due);

    await until(() => e.receiver.on(hook.path).length >= events.length, 15000, 'the account.updated webhooks');
    const delivered = new Map(verifyAll(e.receiver.on(hook.path), hook.secret).map((ev) => [ev.id, ev]));
    for (const ev of events) expect(delivered.get(ev.id)!.data.previous_attributes).toEqual(ev.data.previous_attributes);
  });
});

describe('the default API version', () => {
  test("is the version the platform's first request pinned: its events are written and rendered at it", async () => {
    const key = newTestKey();
    // The first request that names a version pins it; later ones don't move it.
    expect((await get(key, '/v1/account')).headers['stripe-version']).toBe(e.t.config.defaultApiVersion);
    expect((await get(key, '/v1/account', { 'Stripe-Version': '2024-06-20' })).headers['stripe-version']).toBe('2024-06-20');
    expect((await get(key, '/v1/account', { 'Stripe-Version': '2025-03-31.basil' })).headers['stripe-version']).toBe('2025-03-31.basil');
    expect((await get(key, '/v1/account')).headers['stripe-version']).toBe('2024-06-20');

    const { body: account } = await post(key, '/v1/accounts', CUSTOM);
    await post(key, `/v1/accounts/${account.id}`, { metadata: { a: '1' } }, { 'Stripe-Version': LATEST_API_VERSION });
    const [event] = await accountUpdatedEvents(key, account.id);
    expect(event.api_version).toBe('2024-06-20');
  });

  test('without a pinned version it is DEFAULT_API_VERSION, and the official SDK pins the version it sends', async () => {
    const key = newTestKey();
    const { body: account } = await post(key, '/v1/accounts', CUSTOM);
    await post(key, `/v1/accounts/${account.id}`, { metadata: { a: '1' } });
    const [event] = await accountUpdatedEvents(key, account.id);
    expect(event.api_version).toBe(e.t.config.defaultApiVersion);

    const sdkKey = newTestKey();
    const stripe = e.t.stripe(sdkKey, { apiVersion: '2025-09-30.clover' as Stripe.LatestApiVersion });
    const created = await stripe.accounts.create(CUSTOM as Stripe.AccountCreateParams);
    await stripe.accounts.update(created.id, { metadata: { a: '1' } });
    const [sdkEvent] = await accountUpdatedEvents(sdkKey, created.id);
    expect(sdkEvent.api_version).toBe('2025-09-30.clover');
  });
});

describe('objects rendered for an older version', () => {
  test("an endpoint's api_version renders data.object (and previous_attributes and the envelope) for it; the event keeps its own", async () => {
    const key = newTestKey();
    // The platform's default is 2018-11-08: before 2019-02-19, so accounts have business_name.
    await get(key, '/v1/account', { 'Stripe-Version': '2018-11-08' });
    const old = await createReceivingEndpoint(e.t, e.receiver, key, '/conformance/v2017', { connect: true, enabled_events: ['account.updated'], api_version: '2017-04-06' });
    const latest = await createReceivingEndpoint(e.t, e.receiver, key, '/conformance/latest', { connect: true, enabled_events: ['account.updated'], api_version: LATEST_API_VERSION });
    const plain = await createReceivingEndpoint(e.t, e.receiver, key, '/conformance/plain', { connect: true, enabled_events: ['account.updated'] });
    const { body: account } = await post(key, '/v1/accounts', CUSTOM);
    const res = await post(key, `/v1/accounts/${account.id}`, { business_profile: { name: 'Sandbank Shop', url: 'https://shop.example' } }, { 'Idempotency-Key': 'rename-1' });
    expect(res.status).toBe(200);
    // The answer is at the platform's default, 2018-11-08.
    expect(res.body).toMatchObject({ business_name: 'Sandbank Shop', business_url: 'https://shop.example', display_name: 'Sandbank Shop' });
    expect(res.body).not.toHaveProperty('business_profile');
    expect(res.body).not.toHaveProperty('settings');
    expect(res.body.verification).toMatchObject({ fields_needed: expect.any(Array), due_by: null });
    expect(res.body.payout_schedule).toMatchObject({ interval: 'daily' });

    await until(() => [old, latest, plain].every((h) => e.receiver.on(h.path).length === 1), 15000, 'three deliveries');
    const [atOld] = verifyAll(e.receiver.on(old.path), old.secret) as any[];
    const [atLatest] = verifyAll(e.receiver.on(latest.path), latest.secret) as any[];
    const [atPlain] = verifyAll(e.receiver.on(plain.path), plain.secret) as any[];

    expect(atLatest.api_version).toBe(LATEST_API_VERSION);
    // At the newest version, a webhook's event and its object are what the SDK's types describe.
    expect(sdkTypeProblems(atLatest)).toEqual([]);
    expect(atLatest.request).toEqual({ id: expect.stringMatching(/^req_/), idempotency_key: 'rename-1' });
    expect(atLatest.data.object.business_profile).toMatchObject({ name: 'Sandbank Shop', url: 'https://shop.example' });
    expect(atLatest.data.previous_attributes).toMatchObject({ business_profile: { name: null, url: null }, settings: { dashboard: { display_name: null } } });

    // Before 2017-05-25 an event's request was the request id.
    expect(atOld.api_version).toBe('2017-04-06');
    expect(atOld.request).toBe(atLatest.request.id);
    expect(atOld.data.object).toMatchObject({ id: account.id, business_name: 'Sandbank Shop', business_url: 'https://shop.example' });
    expect(atOld.data.object).not.toHaveProperty('business_profile');
    // The url met a requirement: `requirements` (whole arrays) became `verification`.
    expect(atOld.data.previous_attributes).toEqual({
      business_name: null,
      business_url: null,
      display_name: null,
      verification: { fields_needed: atLatest.data.previous_attributes.requirements.currently_due },
    });

    // Without an endpoint version: the version the event was written at, the platform's.
    expect(atPlain.api_version).toBe('2018-11-08');
    expect(atPlain.request).toEqual(atLatest.request);
    expect(atPlain.data).toEqual(atOld.data);

    // GET /v1/events: data stays at the event's version whatever the request's; the envelope follows the request.
    const [stored] = await accountUpdatedEvents(key, account.id);
    expect(stored.api_version).toBe('2018-11-08');
    expect(stored.data).toEqual(atPlain.data);
    const asked = await get(key, `/v1/events/${stored.id}`, { 'Stripe-Account': account.id, 'Stripe-Version': '2016-07-06' });
    expect(asked.body.request).toBe(atLatest.request.id);
    expect(asked.body.data).toEqual(atPlain.data);
  });

  test("a promotion code's webhook carries its coupon whole at an endpoint's version before 2025-09-30.clover, and its id at the newest", async () => {
    const key = newTestKey();
    const events = { enabled_events: ['promotion_code.created', 'promotion_code.updated'] };
    const old = await createReceivingEndpoint(e.t, e.receiver, key, '/conformance/promo-basil', { ...events, api_version: '2025-08-27.basil' });
    const latest = await createReceivingEndpoint(e.t, e.receiver, key, '/conformance/promo-latest', { ...events, api_version: LATEST_API_VERSION });
    const { body: coupon } = await post(key, '/v1/coupons', { percent_off: 10, name: 'Ten' });
    const { body: code } = await post(key, '/v1/promotion_codes', { promotion: { type: 'coupon', coupon: coupon.id } });
    // The coupon changes afterwards: each event keeps it as it was then.
    await post(key, `/v1/coupons/${coupon.id}`, { name: 'Renamed' });
    const { body: updated } = await post(key, `/v1/promotion_codes/${code.id}`, { active: false });

    await until(() => [old, latest].every((h) => e.receiver.on(h.path).length === 2), 15000, 'four deliveries');
    const byType = (h: { path: string; secret: string }) => new Map((verifyAll(e.receiver.on(h.path), h.secret) as any[]).map((ev) => [ev.type, ev]));
    const atOld = byType(old);
    const atLatest = byType(latest);
    expect(atLatest.get('promotion_code.created').data.object).toEqual(code);
    expect(atLatest.get('promotion_code.updated').data.object).toEqual(updated);
    for (const ev of atLatest.values()) expect(sdkTypeProblems(ev)).toEqual([]);
    const { promotion: _promotion, ...rest } = code;
    expect(atOld.get('promotion_code.created').data.object).toEqual({ ...rest, coupon });
    expect(atOld.get('promotion_code.updated').data).toEqual({ object: { ...rest, active: false, coupon: { ...coupon, name: 'Renamed' } }, previous_attributes: { active: true } });
  });

  test("a request's Stripe-Version renders its answer; the newest shape is what the SDK types describe", async () => {
    const key = newTestKey();
    const stripe = e.t.stripe(key);
    const account = await stripe.accounts.create({ ...(CUSTOM as Stripe.AccountCreateParams), business_profile: { name: 'Shop' } });
    expect(account.business_profile?.name).toBe('Shop');

    const old = await get(key, `/v1/accounts/${account.id}`, { 'Stripe-Version': '2019-02-11' });
    expect(old.body).toMatchObject({ id: account.id, object: 'account', business_name: 'Shop', statement_descriptor: null, decline_charge_on: { avs_failure: false, cvc_failure: false } });
    expect(old.body).not.toHaveProperty('business_profile');
    const newer = await get(key, `/v1/accounts/${account.id}`, { 'Stripe-Version': '2019-02-19' });
    expect(newer.body.business_profile.name).toBe('Shop');
    expect(newer.body).not.toHaveProperty('business_name');

    // Lists render every item; an SDK pinned to an old version gets that version.
    const listed = await get(key, '/v1/accounts', { 'Stripe-Version': '2018-02-28' });
    expect(listed.body.data[0]).toMatchObject({ business_name: 'Shop' });
    const oldSdk = e.t.stripe(key, { apiVersion: '2018-02-28' as Stripe.LatestApiVersion });
    expect(((await oldSdk.accounts.retrieve(account.id)) as any).business_name).toBe('Shop');

    // Account sessions lacked two components from 2025-09-30.clover until 2026-04-22.dahlia.
    const components = { account_onboarding: { enabled: true }, balance_report: { enabled: true } };
    const session = (version: string) => post(key, '/v1/account_sessions', { account: account.id, components }, { 'Stripe-Version': version });
    for (const version of ['2025-09-30.clover', '2026-03-25.dahlia']) {
      const { body } = await session(version);
      expect(body.components).toHaveProperty('account_onboarding');
      expect(body.components).not.toHaveProperty('balance_report');
      expect(body.components).not.toHaveProperty('payout_reconciliation_report');
    }
    for (const version of ['2025-08-27.basil', '2026-04-22.dahlia', LATEST_API_VERSION]) {
      const { body } = await session(version);
      expect(body.components).toMatchObject({ balance_report: { enabled: true, features: {} }, payout_reconciliation_report: { enabled: false, features: {} } });
    }
  });
});

describe('GET /v1/events?types[]=', () => {
  test('takes any strings, at most 20; an unknown type matches nothing', async () => {
    const key = newTestKey();
    const stripe = e.t.stripe(key);
    const account = await stripe.accounts.create(CUSTOM as Stripe.AccountCreateParams);
    await stripe.accounts.update(account.id, { metadata: { a: '1' } });
    const opts = { stripeAccount: account.id };
    expect((await stripe.events.list({ types: ['no.such.type'] }, opts)).data).toEqual([]);
    const mixed = await stripe.events.list({ types: ['no.such.type', 'account.updated', 'x'.repeat(300)] }, opts);
    expect(mixed.data.map((ev) => ev.type)).toEqual(['account.updated']);
    const tooMany = await stripe.events.list({ types: Array.from({ length: 21 }, (_, i) => `t${i}`) }, opts).catch((err: unknown) => err);
    expect(tooMany).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((tooMany as Stripe.errors.StripeError).param).toBe('types');
  });
});
