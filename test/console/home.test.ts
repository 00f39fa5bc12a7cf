import { bearer, newTestKey } from '../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { createCustomer } from '../helpers/fixtures';
import { consoleGet, signIn } from '../helpers/console';
import { until } from '../helpers/queues';
import { createReceivingEndpoint } from '../helpers/webhooks';

// The home page with the workers running: an endpoint whose latest delivery attempt failed is
// listed with its answer, one whose latest succeeded is not.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('console_home');
});
afterAll(() => e.close());

test('lists the endpoints whose latest delivery failed, with the status they answered', async () => {
  const key = newTestKey();
  e.receiver.reply('/failing', { status: 500, body: 'boom' });
  const failing = await createReceivingEndpoint(e.t, e.receiver, key, '/failing');
  const healthy = await createReceivingEndpoint(e.t, e.receiver, key, '/healthy');
  await createCustomer(e.t, key, { name: 'Hooked' });
  const attempted = async (endpoint: string) =>
    (await e.t.http().get(`/sandbox/v1/webhook_endpoints/${endpoint}/deliveries`).set(bearer(key))).body.data.length > 0;
  await until(async () => (await attempted(failing.id)) && (await attempted(healthy.id)), 15000, 'a delivery attempt to each endpoint');

  const session = await signIn(e.t, key);
  const home = await consoleGet(e.t, session, '/console');
  expect(home.status).toBe(200);
  const section = /<h2>Failing webhook endpoints<\/h2>([\s\S]*?)<\/section>/.exec(home.text)![1];
  expect(section).toContain(failing.id);
  expect(section).toContain('<span class="badge bad">500</span>');
  expect(section).not.toContain(healthy.id);
});
