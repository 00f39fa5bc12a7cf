import { bearer, newTestKey, startTestApp, type TestApp } from './helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

test('creates and retrieves a webhook endpoint through HTTP and the SDK', async () => {
  const key = newTestKey();
  const created = await t.http().post('/v1/webhook_endpoints').set(bearer(key)).type('form').send('url=https://example.com/h&enabled_events[]=*');
  expect(created.status).toBe(200);
  const stripe = t.stripe(key);
  const fetched = await stripe.webhookEndpoints.retrieve(created.body.id);
  expect(fetched.url).toBe('https://example.com/h');
  expect(fetched.lastResponse.headers['request-id']).toMatch(/^req_/);
});
