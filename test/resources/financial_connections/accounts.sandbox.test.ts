import { newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { createFcSession } from '../../helpers/fixtures';
import { expectError, requestsOf } from '../../helpers/requests';
import { expectMatchesResponseSchema } from '../../helpers/responseSchemas';

// GET /sandbox/v1/financial_connections/sessions: the caller's sessions, newest first, `status`
// filtering (the console lists the pending ones to complete); a pending one with its client secret, no url.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { post, get } = requestsOf(() => t);
const LIST = '/sandbox/v1/financial_connections/sessions';

test('lists the caller’s sessions newest first, filters by status, carries the client secret as retrieve would; another key sees none', async () => {
  const key = newTestKey();
  const a = await createFcSession(t, key);
  const b = await createFcSession(t, key);
  await post(key, `${LIST}/${a.id}/complete`, { institution: 'test_institution', accounts: ['checking'] });
  const all = await get(key, LIST);
  expect(all.status).toBe(200);
  expectMatchesResponseSchema('GetSandboxFinancialConnectionsSessions', 200, all.body);
  expect(all.body.data.map((s: any) => s.id)).toEqual([b.id, a.id]);
  expect(all.body.data[1]).toMatchObject({ status: 'succeeded', accounts: { data: [expect.objectContaining({ object: 'financial_connections.account' })] } });
  // The pending one: the client secret its creation gave, no url; the finished one: none (as its retrieve).
  expect(all.body.data[0]).toMatchObject({ client_secret: b.client_secret, url: null });
  expect(all.body.data[1]).toMatchObject({ client_secret: null, url: null });
  expect((await get(key, `${LIST}?status=pending`)).body.data.map((s: any) => s.id)).toEqual([b.id]);
  expect((await get(key, `${LIST}?status=succeeded`)).body.data.map((s: any) => s.id)).toEqual([a.id]);
  expectError(await get(key, `${LIST}?status=bogus`), 400, { type: 'invalid_request_error', param: 'status' });
  expect((await get(newTestKey(), LIST)).body.data).toEqual([]);
});
