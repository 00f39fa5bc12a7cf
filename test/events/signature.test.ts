import Stripe from 'stripe';
import { retryDelayMs } from '../../src/events/delivery';
import { previousAttributes } from '../../src/events/emit';
import { signatureHeader, verifySignature } from '../../src/events/signature';

// The pure parts: the Stripe-Signature header, retry delays, previous_attributes.

const sdk = new Stripe('sk_test_x');
const SECRET = 'whsec_0123456789abcdefghijABCDEFGHIJ';

describe('signatureHeader', () => {
  const payload = JSON.stringify({ id: 'evt_1', object: 'event', data: { object: { name: 'ü☃' } } });

  test('the official SDK accepts it, with the same secret and body only', () => {
    const now = Math.floor(Date.now() / 1000);
    const header = signatureHeader(payload, SECRET, now);
    expect(header).toMatch(new RegExp(`^t=${now},v1=[0-9a-f]{64}$`));
    expect(sdk.webhooks.constructEvent(payload, header, SECRET).id).toBe('evt_1');
    expect(() => sdk.webhooks.constructEvent(payload, header, `${SECRET}x`)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() => sdk.webhooks.constructEvent(`${payload} `, header, SECRET)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    // The SDK's own test header for the same payload and time is the same.
    expect(header).toBe(sdk.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now }));
  });

  test('a timestamp outside the tolerance fails, in the SDK and in verifySignature', () => {
    const now = Math.floor(Date.now() / 1000);
    const old = signatureHeader(payload, SECRET, now - 301);
    expect(() => sdk.webhooks.constructEvent(payload, old, SECRET)).toThrow(/timestamp/i);
    expect(verifySignature(payload, old, SECRET, now)).toBe(false);
    expect(verifySignature(payload, signatureHeader(payload, SECRET, now - 299), SECRET, now)).toBe(true);
    expect(verifySignature(payload, signatureHeader(payload, SECRET, now), 'whsec_other', now)).toBe(false);
    expect(verifySignature(payload, 'garbage', SECRET, now)).toBe(false);
    expect(verifySignature(payload, `t=${now},v1=abc`, SECRET, now)).toBe(false);
  });
});

describe('retryDelayMs', () => {
  const schedule = [60, 300, 1800];

  test('follows the schedule, jittered within the given fraction', () => {
    expect(retryDelayMs(schedule, 1, 0)).toBe(60_000);
    expect(retryDelayMs(schedule, 2, 0)).toBe(300_000);
    expect(retryDelayMs(schedule, 3, 0.1, () => 0)).toBe(1_620_000);
    expect(retryDelayMs(schedule, 3, 0.1, () => 0.75)).toBe(1_890_000);
    for (let i = 0; i < 100; i++) {
      const d = retryDelayMs(schedule, 1, 0.1);
      expect(d).toBeGreaterThanOrEqual(54_000);
      expect(d).toBeLessThanOrEqual(66_000);
    }
  });

  test('a zero delay stays zero', () => {
    expect(retryDelayMs([0, 0], 2, 0.5, () => 1)).toBe(0);
  });
});

describe('previousAttributes', () => {
  const before = {
    id: 'acct_1',
    email: 'a@example.com',
    metadata: { a: '1', gone: 'x' },
    settings: { payouts: { schedule: { interval: 'daily', delay_days: 2 } } },
    requirements: { currently_due: ['email', 'tos_acceptance.date'] },
    individual: null,
  };

  test('holds only the changed leaves, with their old values', () => {
    const after = { ...before, settings: { payouts: { schedule: { interval: 'weekly', delay_days: 2 } } } };
    expect(previousAttributes(before, after)).toEqual({ settings: { payouts: { schedule: { interval: 'daily' } } } });
  });

  test('an added key is null, a removed one keeps its old value', () => {
    const after = { ...before, metadata: { a: '1', b: '2' } };
    expect(previousAttributes(before, after)).toEqual({ metadata: { b: null, gone: 'x' } });
    expect(previousAttributes({ id: 'acct_1' }, { id: 'acct_1', email: 'e@example.com' })).toEqual({ email: null });
  });

  test('an array that changed is given whole', () => {
    const after = { ...before, requirements: { currently_due: ['email'] } };
    expect(previousAttributes(before, after)).toEqual({ requirements: { currently_due: ['email', 'tos_acceptance.date'] } });
  });

  test('a value that changed kind is given whole', () => {
    expect(previousAttributes(before, { ...before, individual: { first_name: 'J' } })).toEqual({ individual: null });
    expect(previousAttributes({ ...before, individual: { first_name: 'J' } }, before)).toEqual({ individual: { first_name: 'J' } });
  });

  test('keys named like Object.prototype members are data', () => {
    const after = { ...before, metadata: { a: '1', gone: 'x', constructor: 'c', toString: 't' } };
    expect(previousAttributes(before, after)).toEqual({ metadata: { constructor: null, toString: null } });
    expect(previousAttributes(after, before)).toEqual({ metadata: { constructor: 'c', toString: 't' } });
  });

  test('nothing changed: empty', () => {
    expect(previousAttributes(before, structuredClone(before))).toEqual({});
  });
});
