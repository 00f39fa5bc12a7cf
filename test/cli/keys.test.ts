import { createRegisteredKey } from '../../src/cli/keys';
import { loadConfig } from '../../src/config';
import { hashKey } from '../../src/kernel/auth';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ AUTH_MODE: 'registered' });
});
afterAll(() => t.close());

test('a key made by the keys command is accepted in registered mode and stored only as a hash', async () => {
  const { key, accountId } = await createRegisteredKey(loadConfig(process.env));
  expect(key).toMatch(/^sk_test_[A-Za-z0-9]{99}$/);

  const res = await t.http().get('/v1/webhook_endpoints').set(bearer(key));
  expect(res.status).toBe(200);

  const rows = await t.runtime.prisma.apiKey.findMany({ where: { accountId } });
  expect(rows).toHaveLength(1);
  expect(rows[0].keyHash).toBe(hashKey(key));
  expect(rows[0].origin).toBe('registered');
  expect(JSON.stringify(rows)).not.toContain(key.slice(8));
});

test('registered mode refuses a well-formed key nobody registered', async () => {
  const res = await t.http().get('/v1/webhook_endpoints').set(bearer(newTestKey()));
  expect(res.status).toBe(401);
  expect(res.body.error.message).toMatch(/^Invalid API Key provided: sk_test_\*+/);
});
