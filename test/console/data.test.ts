import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { consoleGet, consolePost, signIn } from '../helpers/console';
import { createAccount, createCustomer, form } from '../helpers/fixtures';

// The console's data page: a reset through the sandbox's own operation, only with the account id
// typed as the confirmation; the session survives it, and nobody else's data moves.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const customersOf = async (key: string) => (await t.http().get('/v1/customers').set(bearer(key))).body.data as { id: string }[];
const accountOf = async (key: string) => (await t.http().get('/v1/account').set(bearer(key))).body.id as string;

test('a wrong or missing confirmation is refused and deletes nothing', async () => {
  const key = newTestKey();
  const session = await signIn(t, key);
  await createCustomer(t, key);
  const page = await consoleGet(t, session, '/console/data');
  expect(page.status).toBe(200);
  expect(page.text).toContain(`<code>${await accountOf(key)}</code>`);
  for (const confirm of [undefined, '', 'reset', 'acct_somethingelse', `${await accountOf(key)}x`]) {
    const res = await consolePost(t, session, '/console/data/reset', confirm === undefined ? {} : { confirm }, '/console/data');
    expect(res.status).toBe(400);
    expect(res.text).toContain('data-test="reset-refused"');
    expect(res.text).toContain('Nothing was deleted');
  }
  expect(await customersOf(key)).toHaveLength(1);
});

test('the account id typed resets the data through the API; the session, the key and other keys’ data stay', async () => {
  const key = newTestKey();
  const other = newTestKey();
  const session = await signIn(t, key);
  await createCustomer(t, key);
  await createCustomer(t, key);
  const connected = (await createAccount(t, key, { type: 'express' })).id;
  const theirs = await createCustomer(t, other);
  // Viewing as the connected account: the reset is still the platform's, and the session goes back to its own.
  const viewed = await consolePost(t, session, '/console/view-as', { account: connected }, '/console/data');
  expect(viewed.status).toBe(303);
  expect((await consoleGet(t, session, '/console/data')).text).toContain(`<option value="${connected}" selected>`);

  const res = await consolePost(t, session, '/console/data/reset', { confirm: ` ${await accountOf(key)} ` }, '/console/data');
  expect(res.status).toBe(303);
  const deleted = Number(/^\/console\/data\?deleted=(\d+)$/.exec(res.headers.location)![1]);
  expect(deleted).toBeGreaterThanOrEqual(4);
  expect(await customersOf(key)).toEqual([]);
  expect((await t.http().get(`/v1/accounts/${connected}`).set(bearer(key))).status).toBe(404);
  expect((await customersOf(other)).map((c) => c.id)).toEqual([theirs.id]);

  // The same session goes on: the page says what was done, as the key's own account.
  const after = await consoleGet(t, session, res.headers.location);
  expect(after.status).toBe(200);
  expect(after.text).toContain(`The data was reset: ${deleted} objects deleted.`);
  expect(after.text).not.toContain(`<option value="${connected}" selected>`);
});

test('without the session’s CSRF token the reset is refused (403) and nothing is deleted', async () => {
  const key = newTestKey();
  const session = await signIn(t, key);
  await createCustomer(t, key);
  const res = await t.http().post('/console/data/reset').set('Cookie', session.cookie).type('form').send(form({ confirm: await accountOf(key), csrf_token: 'nope' }));
  expect(res.status).toBe(403);
  // An API key on the form is refused before anything runs.
  const withKey = await t.http().post('/console/data/reset').set(bearer(key)).type('form').send(form({ confirm: await accountOf(key) }));
  expect(withKey.status).toBe(403);
  expect(await customersOf(key)).toHaveLength(1);
});
