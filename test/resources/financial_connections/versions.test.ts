import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createFcSession } from '../../helpers/fixtures';
import { requestsOf } from '../../helpers/requests';
import { sdkTypeProblems } from '../../helpers/sdkTypes';
import { renderEvent } from '../../../src/events/render';
import { versions } from '../../../src/resources';
import { versionChanges } from '../../../src/resources/financial_connections/versions';

// Financial Connections objects at older API versions: a session's `filters.country` (endive,
// 2026-09-30) is `filters.countries`, an array, before it; in answers and in event data, whole or
// partial (previous_attributes).

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get } = requestsOf(() => t);
const BASIL = '2025-08-27.basil';

test('the table names the endive rename of filters.countries', () => {
  expect(versionChanges.map((c) => [c.version, c.object])).toEqual([['2026-09-30.endive', 'financial_connections.session']]);
});

// Reading stripe 18's types (the TypeScript compiler, once) takes a while on a busy machine.
test('a session with a country filter shows filters.countries before endive, filters.country from it', async () => {
  const key = newTestKey();
  const session = await createFcSession(t, key, { filters: { countries: ['us'], account_subcategories: ['checking'] } });
  const newest = await get(key, `/v1/financial_connections/sessions/${session.id}`);
  expect(newest.body.filters).toMatchObject({ country: 'US', account_subcategories: ['checking'] });

  const older = await get(key, `/v1/financial_connections/sessions/${session.id}`, { 'Stripe-Version': BASIL });
  expect(older.status).toBe(200);
  expect(older.body.filters).toEqual({ countries: ['US'], account_subcategories: ['checking'] });
  // What basil's SDK declares of the filters is there (a retrieved session has no client secret: docs/versions.md).
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
