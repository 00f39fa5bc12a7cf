import { newTestKey, startTestApp } from '../helpers/app';
import { accountOfKey, emitTestEvent } from '../helpers/events';
import { startEventsTestApp, type EventsTestApp } from '../helpers/eventsApp';
import { until } from '../helpers/queues';
import { createReceivingEndpoint } from '../helpers/webhooks';

// GET /metrics: Prometheus text with what the API and the workers of this process recorded.

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('metrics');
});
afterAll(() => e.close());

/** The value of one sample line, e.g. `name{a="b"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('/metrics answers even when Redis does not', async () => {
  const down = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1' });
  try {
    // Queue connections wait for Redis without limit; the scrape must not.
    const res = await down.http().get('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain('sandbank_http_requests_total');
  } finally {
    await down.close();
  }
});

test('requests, emitted events, delivery attempts and queue depths are exported', async () => {
  const key = newTestKey();
  const endpoint = await createReceivingEndpoint(e.t, e.receiver, key, '/metrics/hook');
  e.receiver.reply(endpoint.path, { status: 500 }, { status: 200 });
  const before = await e.t.http().get('/metrics');
  const emittedBefore = sample(before.text, 'sandbank_events_emitted_total{type="account.updated"}') ?? 0;

  await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  await emitTestEvent(e.t.runtime, await accountOfKey(e.t.runtime, key));
  // One fails (and waits a minute for its retry, the default schedule), the other succeeds.
  await until(() => e.receiver.on(endpoint.path).length === 2, 15000, 'two attempts');

  const res = await e.t.http().get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = res.text;
  expect(sample(text, 'sandbank_events_emitted_total{type="account.updated"}')).toBe(emittedBefore + 2);
  expect(sample(text, 'sandbank_http_requests_total{route="/v1/webhook_endpoints",method="POST",status="200"}')).toBeGreaterThanOrEqual(1);
  expect(text).toMatch(/^sandbank_http_request_duration_seconds_bucket\{le="0.001",route="\/v1\/webhook_endpoints",method="POST"\} \d+$/m);
  await until(async () => {
    const now = (await e.t.http().get('/metrics')).text;
    return sample(now, 'sandbank_webhook_delivery_attempts_total{outcome="succeeded"}') === 1;
  }, 15000, 'the attempts counted');
  const after = (await e.t.http().get('/metrics')).text;
  expect(sample(after, 'sandbank_webhook_delivery_attempts_total{outcome="retry"}')).toBe(1);
  expect(sample(after, 'sandbank_webhook_delivery_duration_seconds_count')).toBe(2);
  // The pending retry is a delayed job of the delivery queue.
  expect(sample(after, 'sandbank_queue_jobs{queue="webhook-delivery",state="delayed"}')).toBe(1);
  expect(sample(after, 'sandbank_queue_jobs{queue="event-fanout",state="waiting"}')).toBe(0);
});
