import Stripe from 'stripe';
import { bearer, type TestApp } from './app';
import { form } from './fixtures';
import type { ReceivedRequest, WebhookReceiver } from './webhookReceiver';

// What every webhook a test receives must be: verified by the official SDK with the endpoint's
// secret, in the headers the public API sends.

const sdk = new Stripe('sk_test_x');

/** Checks the headers and the signature of one received request; returns the verified event. */
export function verifyWebhook(request: ReceivedRequest, secret: string): Stripe.Event {
  expect(request.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(request.headers['user-agent']).toContain('Stripe/1.0');
  const signature = request.headers['stripe-signature'];
  expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  // Throws (failing the test) unless the signature is right and fresh.
  return sdk.webhooks.constructEvent(request.body, signature as string, secret);
}

/** Verifies every request and returns the events, in the order received. */
export function verifyAll(requests: readonly ReceivedRequest[], secret: string): Stripe.Event[] {
  return requests.map((r) => verifyWebhook(r, secret));
}

export interface ReceivingEndpoint {
  readonly id: string;
  readonly secret: string;
  /** The receiver path it posts to; `receiver.on(path)` lists what it got. */
  readonly path: string;
}

/** Creates a webhook endpoint (over HTTP) that posts to `path` on the receiver. */
export async function createReceivingEndpoint(
  app: TestApp,
  receiver: WebhookReceiver,
  key: string,
  path: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<ReceivingEndpoint> {
  const res = await app
    .http()
    .post('/v1/webhook_endpoints')
    .set(bearer(key))
    .set(headers)
    .type('form')
    .send(form({ url: receiver.url(path), enabled_events: ['*'], ...params }));
  if (res.status !== 200) throw new Error(`creating a webhook endpoint failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, secret: res.body.secret, path };
}
