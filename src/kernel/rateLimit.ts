import type { Clock } from '../lib/clock';

// Request rate limits per account: token buckets in this process's memory. A check is a Map
// lookup and some arithmetic, and neither Redis nor its outage is ever on the request path; the
// price is that each API process counts on its own (N processes allow up to N times the limit).

interface Bucket {
  tokens: number;
  atMs: number;
}

/** A bucket idle this long has refilled (it holds one second's worth), so it is dropped. */
const REFILL_MS = 1000;
/** Hard bound on buckets held at once; past it the least recently used is forgotten (it starts full again). */
const MAX_BUCKETS = 100_000;

/** `perSecond` requests a second per key, in bursts of up to `perSecond`. */
export class RateLimiter {
  /** In least-recently-used order (a bucket moves to the end when used), so idle ones are at the front. */
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly perSecond: number,
    private readonly clock: Clock,
    private readonly maxBuckets = MAX_BUCKETS,
  ) {
    if (!(perSecond > 0)) throw new Error('a rate limit must be positive');
  }

  /** Counts one request for `key`; false (and nothing counted) when its bucket is empty. */
  take(key: string): boolean {
    const now = this.clock.nowMs();
    this.dropIdle(now);
    const bucket = this.buckets.get(key);
    // A clock that went back (a test's, or an NTP step) refills nothing rather than taking away.
    const tokens = bucket ? Math.min(this.perSecond, bucket.tokens + (Math.max(0, now - bucket.atMs) * this.perSecond) / 1000) : this.perSecond;
    if (bucket) this.buckets.delete(key);
    else if (this.buckets.size >= this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
    const allowed = tokens >= 1;
    this.buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, atMs: now });
    return allowed;
  }

  /** How many keys are tracked (for tests of the memory bound). */
  get size(): number {
    return this.buckets.size;
  }

  /** Oldest first, stopping at the first bucket used within the refill time: amortised O(1) per request. */
  private dropIdle(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.atMs < REFILL_MS) return;
      this.buckets.delete(key);
    }
  }
}
