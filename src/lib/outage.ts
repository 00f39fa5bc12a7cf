import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable } from './prisma';

/**
 * How long a worker keeps trying to record what it already did (a sent request's outcome) while
 * the database is away. Past it the job fails, and a run of it again finds the attempt started.
 */
export const RECORDING_BOUND_MS = 60_000;
const RECORDING_BACKOFF_MS = [100, 200, 500, 1000, 2000];

/**
 * Runs a statement that records work already done outside (a request sent), again and again while
 * the database is unavailable, up to RECORDING_BOUND_MS: redoing the work would repeat it, so only
 * the recording is retried. The statement must be safe to run twice (conditional updates).
 */
export async function recordingDespiteOutages<T>(statement: () => Promise<T>, boundMs = RECORDING_BOUND_MS): Promise<T> {
  const until = Date.now() + boundMs;
  for (let tries = 0; ; tries++) {
    try {
      return await statement();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() >= until) throw err;
      await sleep(RECORDING_BACKOFF_MS[Math.min(tries, RECORDING_BACKOFF_MS.length - 1)]);
    }
  }
}
