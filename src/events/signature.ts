import { createHmac, timingSafeEqual } from 'node:crypto';

// Stripe-Signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed by the
// whole `whsec_…` string as UTF-8 bytes; what the SDKs' `webhooks.constructEvent` verifies.

export function signatureHeader(payload: string, secret: string, timestamp: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

/** Verifies a header the way the SDKs do (tolerance in seconds); for our own tests and tools. */
export function verifySignature(payload: string, header: string, secret: string, nowSeconds: number, tolerance = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(nowSeconds - t) > tolerance) return false;
  const expected = Buffer.from(signatureHeader(payload, secret, t).split('v1=')[1], 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
