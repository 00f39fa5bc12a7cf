import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createFcSession } from '../../helpers/fixtures';
import { requestsOf } from '../../helpers/requests';
import { sdkTypeProblems } from '../../helpers/sdkTypes';
import { renderEvent } from '../../../src/events/render';
import { versions } from '../../../src/resources';
import { versionChanges } from '../../../src/resources/financial_connections/versions';
import { LATEST_API_VERSION } from '../../../src/kernel/versions';

// Financial Connections objects at older API versions: a session's `filters.country` (endive,
// 2026-09-30) is `filters.countries`, an array, before it; in answers and in event data, whole or
// partial (previous_attributes). A finished session shows its last client secret before clover.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get } = requestsOf(() => t);
const BASIL = '2025-08-27.basil';

test('the table names the endive rename of filters.countries and the clover nullable client secret', () => {
  expect(versionChanges.map((c) => [c.version, c.object])).toEqual([
    ['2025-11-17.clover', 'financial_connections.session'],
    ['2026-09-30.endive', 'financial_connections.session'],
  ]);
});

test('a finished session shows the last client secret it was given before clover, none from clover on', async () => {
  const key = newTestKey();
  const session = await createFcSession(t, key);
  // A retrieve of a pending session gives a fresh secret: the last one is what a finished session shows.
  const pending = await get(key, `/v1/financial_connections/sessions/${session.id}`);
  expect(pending.body.client_secret).toMatch(/^fcsess_client_secret_/);
  expect(pending.body.client_secret).not.toBe(session.client_secret);
  const done = await t.http().post(`/sandbox/v1/financial_connections/sessions/${session.id}/complete`).set(bearer(key)).set('Stripe-Version', BASIL).type('form').send({ outcome: 'cancelled' });
  expect(done.status).toBe(200);
  expect(done.body.client_secret).toBe(pending.body.client_secret);
  for (const version of ['2020-08-27', '2024-04-10', '2025-10-29.clover']) {
    expect((await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': version })).body.client_secret).toBe(pending.body.client_secret);
  }
  expect((await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': '2025-11-17.clover' })).body.client_secret).toBeNull();
  // (The sandbox call pinned the account to basil: the newest version is asked for by name.)
  expect((await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': LATEST_API_VERSION })).body.client_secret).toBeNull();
  // Sealed at rest: the database holds no secret in the clear.
  const row = await t.runtime.prisma.financialConnectionsSession.findUniqueOrThrow({ where: { id: session.id } });
  expect(row.clientSecret).toMatch(/^sealed:v1:/);
  expect(row.clientSecret).not.toContain(pending.body.client_secret);
});

// Reading stripe 18's types (the TypeScript compiler, once) takes a while on a busy machine.
test('a session with a country filter shows filters.countries before endive, filters.country from it', async () => {
  const key = newTestKey();
  const session = await createFcSession(t, key, { filters: { country: 'us', account_subcategories: ['checking'] } });
  const newest = await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': LATEST_API_VERSION });
  expect(newest.body.filters).toMatchObject({ country: 'US', account_subcategories: ['checking'] });

  const older = await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': BASIL });
  expect(older.status).toBe(200);
  expect(older.body.filters).toEqual({ countries: ['US'], account_subcategories: ['checking'] });
  // What basil's SDK declares of the filters is there.
  expect(sdkTypeProblems(older.body, 'stripe-v18').filter((p) => p.includes('filters'))).toEqual([]);

  // The newest version keeps its own shape.
  const endive = await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': '2026-09-30.endive' });
  expect(endive.body.filters.country).toBe('US');
}, 120_000);

test('a session without filters is left as it is at an older version', async () => {
  const key = newTestKey();
  const session = await createFcSession(t, key);
  const older = await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': BASIL });
  expect(older.body.filters).toBeUndefined();
  expect(older.body.id).toBe(session.id);
});

test("an event's session and its previous_attributes move only the filters they have", () => {
  const object = { id: 'fcsess_1', object: 'financial_connections.session', filters: { account_subcategories: null, country: 'US' }, status: 'pending' };
  const row = {
    id: 'evt_1',
    accountId: 'acct_1',
    created: 1800000000,
    type: 'financial_connections.session.updated',
    apiVersion: BASIL,
    data: { object, previous_attributes: { filters: { country: null } } } as any,
    requestId: null,
    idempotencyKey: null,
    pendingWebhooks: 0,
  };
  const event = renderEvent(row, versions, { connected: false });
  expect(event.data.object).toEqual({ ...object, filters: { account_subcategories: null, countries: ['US'] } });
  expect(event.data.previous_attributes).toEqual({ filters: { countries: null } });
  // A part without filters, and the newest version: untouched.
  expect(renderEvent({ ...row, data: { object, previous_attributes: { status: 'pending' } } as any }, versions, { connected: false }).data.previous_attributes).toEqual({
    status: 'pending',
  });
  expect(renderEvent({ ...row, apiVersion: '2026-10-28.endive' }, versions, { connected: false }).data.object).toEqual(object);
});
