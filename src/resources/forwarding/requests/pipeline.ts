import { Agent, request } from 'undici';
import type { LookupFunction } from 'node:net';
import { Prisma } from '../../../generated/prisma/client';
import type { PrismaClient } from '../../../lib/prisma';
import type { JobWorker, ProcessDeps, Reconcile, Schedule } from '../../../kernel/route';
import { ApiError } from '../../../kernel/errors';
import { checkHost, DestinationRefusedError, findRefusal, guardedLookup, type DestinationPolicy } from '../../../lib/netguard';
import { describeNetworkError, isTimeoutError } from '../../../events/delivery';
import { RECORDING_BOUND_MS, recordingDespiteOutages } from '../../../lib/outage';
import { forwardingQueue, queueForwards, type ForwardingJob } from './jobs';
import { maskBody, maskText, type Header } from './replacements';

// The worker's half of a forward, and what keeps the record true when a part goes missing. The
// record moves pending → sending → succeeded | failed, each move one conditional UPDATE:
//  - a worker calls the destination only if it moved the record from pending to sending before
//    the pickup deadline, so a job re-added by the reconciler, repeated, or run late does nothing;
//  - the waiting API (or the reconciler, if the API is gone) fails a record still pending at its
//    pickup deadline, so a job Redis lost is never run after the API answered;
//  - once the destination answered, the worker records it through database outages (retried,
//    never re-sent); an API that can't wait longer answers "outcome unknown" and leaves the
//    record to become final with the truth;
//  - a record left sending by a run that ended (its job runs again: the worker died, or gave up
//    recording) or long past its timeout fails as "may have been sent", and is never sent again.

/** What the worker sends: sealed in the record until it is final. `mask`: what to mask in the answer. */
export interface Outbound {
  readonly body: string;
  readonly headers: Header[];
  readonly mask: { number: string; cvc?: string };
}

export type FailureCode =
  | 'forwarding_api_upstream_connection_error'
  | 'forwarding_api_upstream_connection_timeout'
  | 'forwarding_api_retryable_upstream_error'
  | 'forwarding_api_upstream_error';

/** The public wording of each failure. */
const FAILURES: Record<FailureCode, string> = {
  forwarding_api_upstream_connection_error: 'The request could not be forwarded: the destination could not be reached.',
  forwarding_api_upstream_connection_timeout: 'The request could not be forwarded: the destination did not answer in time.',
  forwarding_api_retryable_upstream_error: 'The request was not forwarded: nothing was sent to the destination, so it is safe to try again (with a new idempotency key).',
  forwarding_api_upstream_error: 'The forward did not finish: the destination may or may not have received the request.',
};

/**
 * The public API's statuses for upstream failures: 502 (unreachable, or cut off mid-call), 504 (no
 * answer in time) and, since 2025-03-31.basil, 402 when nothing reached the destination (safe to
 * retry with a new key).
 */
const STATUSES: Record<FailureCode, number> = {
  forwarding_api_upstream_connection_error: 502,
  forwarding_api_upstream_connection_timeout: 504,
  forwarding_api_retryable_upstream_error: 402,
  forwarding_api_upstream_error: 502,
};

/**
 * The public error of a failed record: the code, what happened, and the record's id, with the
 * public API's status. A retry with the same key answers the same, so the SDKs are told not to
 * retry. A call its worker abandoned may still get its true outcome recorded (a worker that lost
 * its job's lock but lived): that answer is not kept for the key, so a retry reads the record again.
 */
export function forwardingFailure(id: string, code: string, failure: string | null): ApiError {
  const known = FAILURES[code as FailureCode] ?? FAILURES.forwarding_api_upstream_error;
  return new ApiError({
    status: STATUSES[code as FailureCode] ?? 502,
    type: 'api_error',
    code,
    message: `${known}${failure ? ` (${failure})` : ''} The forwarding request ${id} records what happened.`,
    headers: { 'Stripe-Should-Retry': 'false' },
    ...(failure === CALL_ABANDONED && { kind: 'pending' as const }),
  });
}

/**
 * The answer while a call's outcome is unknown (its worker is recording it through an outage, or
 * died): the public code for an upstream outcome that isn't known. The record becomes final with
 * the truth; the key is not kept, so a retry with it (the SDKs retry on this header) answers that.
 */
export function outcomeNotKnownYet(id: string): ApiError {
  return new ApiError({
    status: 502,
    type: 'api_error',
    code: 'forwarding_api_upstream_error',
    message: `The forward's outcome is not known yet: the destination may have received the request, and its answer is not recorded yet. Retrieve the forwarding request ${id}, or retry with the same idempotency key, for the outcome; do not forward again with a new key.`,
    headers: { 'Stripe-Should-Retry': 'true' },
    kind: 'pending',
  });
}

/** After its timeout, how long the API waits for a call to be recorded before answering that its outcome is not known yet. */
export const RECORDING_GRACE_SECONDS = 5;
/**
 * After its timeout, when a call still not recorded counts as abandoned: past the worker's own
 * bound for recording an answer through an outage (RECORDING_BOUND_MS), so no live worker's truth
 * is overtaken.
 */
export const ABANDONED_AFTER_SECONDS = RECORDING_BOUND_MS / 1000 + 30;
/** The largest response body kept. */
const RESPONSE_LIMIT = 1024 * 1024;

const PICKUP_MISSED = 'no worker took the forward before its pickup deadline; nothing was sent';
const CALL_ABANDONED = 'the worker stopped during the call; the destination may have received the request';

type Executor = Pick<PrismaClient, '$executeRaw'>;

/**
 * Fails records still pending past their pickup deadline: nothing was sent. `id`: only that
 * record (the waiting API). Checked by the database's clock, as the worker's claim is.
 */
export function failMissed(prisma: Executor, id?: string): Promise<number> {
  const only = id === undefined ? Prisma.empty : Prisma.sql`AND id = ${id}`;
  return prisma.$executeRaw`
    UPDATE forwarding_requests SET status = 'failed', error_code = 'forwarding_api_retryable_upstream_error', failure = ${PICKUP_MISSED},
      outbound = NULL, key_id = NULL, completed_at = CURRENT_TIMESTAMP
    WHERE status = 'pending' AND pickup_deadline <= CURRENT_TIMESTAMP ${only}`;
}

/**
 * Fails calls nobody will record: `id`, a record whose run ended (its job is running again), or
 * every record sending ABANDONED_AFTER_SECONDS past its timeout. The destination may have them.
 */
export function failAbandoned(prisma: Executor, id?: string): Promise<number> {
  const which =
    id === undefined ? Prisma.sql`claimed_at + make_interval(secs => timeout_ms / 1000.0 + ${ABANDONED_AFTER_SECONDS}) <= CURRENT_TIMESTAMP` : Prisma.sql`id = ${id}`;
  return prisma.$executeRaw`
    UPDATE forwarding_requests SET status = 'failed', error_code = 'forwarding_api_upstream_error', failure = ${CALL_ABANDONED},
      outbound = NULL, key_id = NULL, completed_at = CURRENT_TIMESTAMP
    WHERE status = 'sending' AND ${which}`;
}

interface Claimed {
  url: string;
  outbound: string;
  timeout_ms: number;
  allow_private_network: boolean;
}

type CallResult =
  | { kind: 'answered'; status: number; headers: Header[]; body: string; durationMs: number; address: string }
  | { kind: 'failed'; code: FailureCode; failure: string; durationMs: number };

/** Connections to one destination call: fresh each time, so the address it reached is the one recorded. */
function recordingLookup(policy: DestinationPolicy, seen: { address?: string }): LookupFunction {
  const guarded = guardedLookup(policy);
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) =>
    guarded(hostname, options as never, ((err: Error | null, address: unknown, family?: number) => {
      if (!err) seen.address = Array.isArray(address) ? (address[0] as { address: string }).address : (address as string);
      callback(err, address, family);
    }) as never)) as LookupFunction;
}

function headersOf(raw: Record<string, string | string[] | undefined>): Header[] {
  return Object.entries(raw).flatMap(([name, value]) => (value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v) => ({ name, value: v }))));
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > RESPONSE_LIMIT) {
      body.destroy?.();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One POST to the destination, redirects not followed, within its timeout. */
async function callDestination(url: string, outbound: Outbound, timeoutMs: number, policy: DestinationPolicy, nowMs: () => number): Promise<CallResult> {
  const started = nowMs();
  const elapsed = () => Math.max(0, Math.round(nowMs() - started));
  const seen: { address?: string } = {};
  const agent = new Agent({ pipelining: 0, connect: { lookup: recordingLookup(policy, seen), timeout: timeoutMs } });
  try {
    // An IP literal is connected to without a lookup, so it is checked here.
    const host = checkHost(new URL(url).hostname, policy);
    if ('refused' in host) throw new DestinationRefusedError(host.refused);
    if ('address' in host) seen.address = host.address;
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      body: outbound.body,
      headers: [
        ...outbound.headers.flatMap((h) => [h.name, h.value]),
        'User-Agent',
        'Stripe',
        'Accept',
        '*/*',
        'Content-Type',
        'application/json',
      ],
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await readLimited(res.body);
    if (body === null) return { kind: 'failed', code: 'forwarding_api_upstream_error', failure: `the response body is larger than ${RESPONSE_LIMIT} bytes`, durationMs: elapsed() };
    return { kind: 'answered', status: res.statusCode, headers: headersOf(res.headers), body, durationMs: elapsed(), address: seen.address ?? '' };
  } catch (err) {
    const code: FailureCode = !findRefusal(err) && isTimeoutError(err) ? 'forwarding_api_upstream_connection_timeout' : 'forwarding_api_upstream_connection_error';
    return { kind: 'failed', code, failure: describeNetworkError(err, timeoutMs), durationMs: elapsed() };
  } finally {
    agent.destroy().catch(() => undefined);
  }
}

/** A call's outcome may land on its record while sending, or over "abandoned" (this run had lost its job's lock). */
const stillUnrecorded = Prisma.sql`(status = 'sending' OR (status = 'failed' AND failure = ${CALL_ABANDONED}))`;

/**
 * Runs one forward's call, if this worker is the one to take it; writes no events. Once the
 * destination answered, the answer is recorded through database outages, never sent again.
 */
export async function runForward(deps: ProcessDeps, id: string): Promise<readonly string[]> {
  const { prisma, encryption, config, clock, logger } = deps;
  const claimed = await prisma.$queryRaw<Claimed[]>`
    UPDATE forwarding_requests SET status = 'sending', claimed_at = CURRENT_TIMESTAMP
    WHERE id = ${id} AND status = 'pending' AND pickup_deadline > CURRENT_TIMESTAMP AND outbound IS NOT NULL
    RETURNING url, outbound, timeout_ms, allow_private_network`;
  if (claimed.length === 0) {
    // A job id is its record's id, so a record already sending was claimed by an earlier run of
    // this job, which ended without recording the call (killed, or out of recording time).
    await failAbandoned(prisma, id);
    return [];
  }
  const row = claimed[0];
  let result: CallResult;
  let mask: Outbound['mask'] | undefined;
  try {
    const outbound = JSON.parse(await encryption.open(row.outbound)) as Outbound;
    mask = outbound.mask;
    const policy: DestinationPolicy = { allowPrivateNetwork: row.allow_private_network, allowedHosts: [], loopbackOnly: config.webhookLoopbackOnly };
    result = await callDestination(row.url, outbound, row.timeout_ms, policy, () => clock.nowMs());
  } catch (err) {
    // Only the error's name: a parse error's message quotes its input, which holds the card data.
    logger.error({ err: (err as Error).name, forwarding_request: id }, 'forward failed before an answer');
    result = { kind: 'failed', code: 'forwarding_api_upstream_error', failure: 'the forward failed inside Sandbank before any answer', durationMs: 0 };
  }
  if (result.kind === 'answered') {
    const responseDetails = {
      body: maskBody(result.body, mask!),
      headers: result.headers.map((h) => ({ name: h.name, value: maskText(h.value, mask!) })),
      status: result.status,
    };
    const context = { destination_duration: result.durationMs, destination_ip_address: result.address };
    await recordingDespiteOutages(
      () => prisma.$executeRaw`
      UPDATE forwarding_requests SET status = 'succeeded', response_details = ${JSON.stringify(responseDetails)}::jsonb,
        request_context = ${JSON.stringify(context)}::jsonb, error_code = NULL, failure = NULL, outbound = NULL, key_id = NULL,
        completed_at = CURRENT_TIMESTAMP
      WHERE id = ${id} AND ${stillUnrecorded}`,
    );
  } else {
    const { code, failure } = result;
    await recordingDespiteOutages(
      () => prisma.$executeRaw`
      UPDATE forwarding_requests SET status = 'failed', error_code = ${code}, failure = ${failure},
        outbound = NULL, key_id = NULL, completed_at = CURRENT_TIMESTAMP
      WHERE id = ${id} AND ${stillUnrecorded}`,
    );
  }
  return [];
}

export const forwardingWorker: JobWorker<ForwardingJob> = {
  queue: forwardingQueue,
  run: (deps, { requestId }) => runForward(deps, requestId),
  failure: 'forwarding request failed',
  describe: (data) => ({ forwarding_request: data.requestId }),
};

const BATCH = 500;

/**
 * Fails the records nobody will finish, and re-adds the job of every record the API still awaits
 * (pending before its pickup deadline): Redis may have lost it.
 */
export const reconcileForwards: Reconcile = async ({ prisma, queues }) => {
  const missed = await failMissed(prisma);
  const abandoned = await failAbandoned(prisma);
  let requeued = 0;
  let afterId = '';
  for (;;) {
    const due = await prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM forwarding_requests
      WHERE status = 'pending' AND pickup_deadline > CURRENT_TIMESTAMP AND id > ${afterId}
      ORDER BY id LIMIT ${BATCH}`;
    if (due.length === 0) break;
    await queueForwards(queues, due.map((r) => r.id));
    requeued += due.length;
    afterId = due[due.length - 1].id;
    if (due.length < BATCH) break;
  }
  return { forwardsRequeued: requeued, forwardsMissed: missed, forwardsAbandoned: abandoned };
};

/** The public API keeps forwarding records 30 days. */
export const RETENTION_DAYS = 30;

/** Deletes records older than RETENTION_DAYS, a batch per statement; answers how many. */
export async function pruneForwardingRequests(prisma: PrismaClient, nowSeconds: number, batchSize = 1000): Promise<number> {
  const before = nowSeconds - RETENTION_DAYS * 86400;
  let total = 0;
  for (;;) {
    const pruned = await prisma.$executeRaw`
      DELETE FROM forwarding_requests WHERE id IN (
        SELECT id FROM forwarding_requests WHERE created < ${before} LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
    total += pruned;
    if (pruned < batchSize) return total;
  }
}

export const forwardingPrune: Schedule = {
  name: 'prune-forwarding-requests',
  everyMs: (config) => config.maintenanceIntervalMs,
  run: async ({ prisma }, now) => ({ pruned: await pruneForwardingRequests(prisma, now) }),
};
