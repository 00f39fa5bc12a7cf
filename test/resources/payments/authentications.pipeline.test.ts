import { authenticationQueue, expiryJobId } from '../../../src/resources/payments/authentications/jobs';
import { bearer, newTestKey } from '../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { createCustomer, form } from '../../helpers/fixtures';
import { until } from '../../helpers/queues';
import { createReceivingEndpoint, verifyAll } from '../../helpers/webhooks';

// A 3-D Secure challenge left unanswered, through the real workers: its expiry job is queued once
// the confirmation committed, runs at the challenge's due time and fails the intent (its
// setup_intent.setup_failed delivered); and a worker restart with a Redis that lost every job
// still expires it (the reconciler re-adds what the database says is due).

const TTL_SECONDS = 1;

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('payment_authentications', { THREE_D_SECURE_TTL_SECONDS: String(TTL_SECONDS), RECONCILE_INTERVAL_MS: '300' });
});
afterAll(() => e.close());

const SI = '/v1/setup_intents';
const post = (key: string, path: string, body: Record<string, unknown> = {}) => e.t.http().post(path).set(bearer(key)).type('form').send(form(body));
const retrieve = async (key: string, id: string) => (await e.t.http().get(`${SI}/${id}`).set(bearer(key))).body;

async function challenged(key: string) {
  const customer = (await createCustomer(e.t, key)).id;
  const res = await post(key, SI, { customer, payment_method: 'pm_card_authenticationRequired', confirm: true, return_url: 'http://127.0.0.1:0/back' });
  expect(res.body.status).toBe('requires_action');
  const challenge = await e.t.runtime.prisma.paymentAuthentication.findFirstOrThrow({ where: { intentId: res.body.id } });
  return { intent: res.body, challenge };
}

test('the expiry job is queued after the commit, due at expires_at, and fails the intent then; setup_intent.setup_failed is delivered', async () => {
  const key = newTestKey();
  const hook = await createReceivingEndpoint(e.t, e.receiver, key, '/3ds', { enabled_events: ['setup_intent.setup_failed'] });
  const { intent, challenge } = await challenged(key);
  expect(challenge.expiresAt - challenge.created).toBe(TTL_SECONDS);
  await until(async () => (await retrieve(key, intent.id)).status === 'requires_payment_method', 15000, 'the expiry');
  expect(await retrieve(key, intent.id)).toMatchObject({ last_setup_error: { code: 'setup_intent_authentication_failure' }, next_action: null });
  expect((await e.t.runtime.prisma.paymentAuthentication.findUniqueOrThrow({ where: { id: challenge.id } })).status).toBe('expired');
  await until(() => e.receiver.on(hook.path).length >= 1, 15000, 'the delivery');
  const [delivered] = verifyAll(e.receiver.on(hook.path), hook.secret);
  expect(delivered).toMatchObject({ type: 'setup_intent.setup_failed', data: { object: { id: intent.id, status: 'requires_payment_method' } } });
});

test('a worker restart with a Redis that lost every expiry job still expires the challenge, once', async () => {
  const key = newTestKey();
  await e.stopWorkers();
  const { intent, challenge } = await challenged(key);
  const queue = e.t.runtime.queues.of(authenticationQueue);
  // Queued once the confirmation committed: named by the challenge and its due time, ids only, delayed until then.
  const job = await queue.getJob(expiryJobId(challenge.id, challenge.expiresAt));
  expect(job?.data).toEqual({ id: challenge.id });
  expect(job!.opts.delay).toBeLessThanOrEqual(TTL_SECONDS * 1000);
  expect(await queue.getJobCountByTypes('delayed', 'waiting')).toBeGreaterThanOrEqual(1);
  await queue.obliterate({ force: true });
  expect(await queue.getJobCountByTypes('delayed', 'waiting', 'active')).toBe(0);

  await e.startWorkers();
  await until(async () => (await retrieve(key, intent.id)).status === 'requires_payment_method', 15000, 'the expiry after the restart');
  expect((await e.t.runtime.prisma.paymentAuthentication.findUniqueOrThrow({ where: { id: challenge.id } })).status).toBe('expired');
  const failed = await e.t.runtime.prisma.event.findMany({ where: { type: 'setup_intent.setup_failed' } });
  expect(failed.filter((ev) => (ev.data as any).object.id === intent.id)).toHaveLength(1);
});
