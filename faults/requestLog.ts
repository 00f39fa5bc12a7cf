import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { Agent, request } from 'undici';
import { sleep } from './services';
import type { Figures, Options, Stack } from './suite';

// The request-log budget (issue 22): many large bad requests, each a POST whose one parameter is
// an unknown name of 255 KB (just under BODY_LIMIT_BYTES), from concurrent clients. Every answer
// is a 400 that the API keeps in its failed-request log, in the process and in Redis. The issue's
// 1,000 of them took the API's heap to 2.66 GB and Redis to 1.23 GB: the name came back twice in
// each error body, and the log kept the last 1,000 bodies whole. The scenario reports the API's
// memory (RSS and V8 heap, from its /metrics) and Redis's used_memory before, at their peak while
// the requests run, and after; it fails past the bounds below.

/** Requests sent (fewer when the run's writes are fewer: `--short`, the test's size). */
export const REQUEST_LOG_REQUESTS = 1_000;
/** Bytes of each unknown parameter name: with `=1` and its number, just under BODY_LIMIT_BYTES (256 KiB). */
const NAME_BYTES = 255 * 1024;
/**
 * How far each may grow: Redis by the log's own budget (8 MiB, kernel/requestLog.ts) and room to
 * spare; the API's heap and RSS by the requests in flight (each body is read whole: 32 × 255 KB,
 * with the copies parsing makes) and the process log's 4 MiB. Before the fix they grew by
 * hundreds of MB per 100 requests.
 */
export const REQUEST_LOG_BOUNDS = { redisBytes: 32 * 1024 * 1024, apiHeapBytes: 256 * 1024 * 1024, apiRssBytes: 512 * 1024 * 1024 };
/** The largest error body a request may get: ECHO_LIMIT characters of the name, twice, and the rest. */
const ANSWER_BYTES = 2_000;

export interface MemoryFigures {
  requests: number;
  /** Answers that were the expected 400 parameter_unknown. */
  answered: number;
  /** The largest error body seen. */
  largestAnswerBytes: number;
  api: { rss: Sample; heapUsed: Sample };
  redis: { usedMemory: Sample };
  /** What the log holds in Redis at the end: its entries and their bytes (the ring's total). */
  redisLog: { entries: number; bytes: number };
}

/** Bytes before the requests, at their peak while they ran, and after they ended (a few seconds on). */
interface Sample {
  before: number;
  peak: number;
  after: number;
}

const MB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const sample = (s: Sample) => `${MB(s.before)} → peak ${MB(s.peak)} → ${MB(s.after)}`;

/** The API's RSS and heap in use, from its Prometheus metrics (prom-client's process metrics). */
async function apiMemory(apiUrl: string): Promise<{ rss: number; heapUsed: number }> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: metric('process_resident_memory_bytes'), heapUsed: metric('nodejs_heap_size_used_bytes') };
}

const redisUsedMemory = async (redis: Redis): Promise<number> => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);

export async function requestLogScenario(stack: Stack, _variant: string, options: Options): Promise<Figures & { memory: MemoryFigures }> {
  const started = Date.now();
  const requests = Math.min(REQUEST_LOG_REQUESTS, options.writes);
  const key = `sk_test_faults${randomBytes(12).toString('hex')}`;
  const redis = new Redis(stack.redis.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const agent = new Agent({ connections: options.clients, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const name = 'x'.repeat(NAME_BYTES - 8);
  let answered = 0;
  let largestAnswerBytes = 0;
  const failures: string[] = [];

  // A first request registers the key's account (open mode), so its row isn't counted below.
  await fetch(`${stack.apiUrl}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
  await sleep(1000);
  const before = { ...(await apiMemory(stack.apiUrl)), redis: await redisUsedMemory(redis) };
  const peak = { ...before };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [api, used] = await Promise.all([apiMemory(stack.apiUrl).catch(() => undefined), redisUsedMemory(redis).catch(() => NaN)]);
      if (api) {
        peak.rss = Math.max(peak.rss, api.rss);
        peak.heapUsed = Math.max(peak.heapUsed, api.heapUsed);
      }
      if (Number.isFinite(used)) peak.redis = Math.max(peak.redis, used);
      await sleep(200);
    }
  })();

  let next = 0;
  const client = async () => {
    for (let i = next++; i < requests; i = next++) {
      try {
        const res = await request(`${stack.apiUrl}/v1/customers`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: `${name}${String(i).padStart(6, '0')}=1`,
        });
        const body = await res.body.text();
        largestAnswerBytes = Math.max(largestAnswerBytes, Buffer.byteLength(body));
        if (res.statusCode === 400 && body.includes('"parameter_unknown"')) answered++;
        else if (failures.length < 3) failures.push(`request ${i} answered ${res.statusCode}: ${body.slice(0, 200)}`);
      } catch (err) {
        if (failures.length < 3) failures.push(`request ${i} failed: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  // Redis records each entry without the answer waiting for it.
  await sleep(2000);
  sampling = false;
  await sampler;
  const after = { ...(await apiMemory(stack.apiUrl)), redis: await redisUsedMemory(redis) };
  const entries = await redis.llen('faults:requestlog');
  const logBytes = Number((await redis.get('faults:requestlog-bytes')) ?? 0);
  redis.disconnect();
  await agent.close();

  const memory: MemoryFigures = {
    requests,
    answered,
    largestAnswerBytes,
    api: { rss: { before: before.rss, peak: peak.rss, after: after.rss }, heapUsed: { before: before.heapUsed, peak: peak.heapUsed, after: after.heapUsed } },
    redis: { usedMemory: { before: before.redis, peak: peak.redis, after: after.redis } },
    redisLog: { entries, bytes: logBytes },
  };
  const problems = [...failures];
  if (answered < requests) problems.push(`${requests - answered} requests did not get their 400`);
  if (largestAnswerBytes > ANSWER_BYTES) problems.push(`an error body of ${largestAnswerBytes} bytes (bound ${ANSWER_BYTES})`);
  const grew = (s: Sample) => Math.max(s.peak, s.after) - s.before;
  if (!(grew(memory.redis.usedMemory) <= REQUEST_LOG_BOUNDS.redisBytes)) problems.push(`Redis grew by ${MB(grew(memory.redis.usedMemory))} (bound ${MB(REQUEST_LOG_BOUNDS.redisBytes)})`);
  if (!(grew(memory.api.heapUsed) <= REQUEST_LOG_BOUNDS.apiHeapBytes)) problems.push(`the API's heap grew by ${MB(grew(memory.api.heapUsed))} (bound ${MB(REQUEST_LOG_BOUNDS.apiHeapBytes)})`);
  if (!(grew(memory.api.rss) <= REQUEST_LOG_BOUNDS.apiRssBytes)) problems.push(`the API's RSS grew by ${MB(grew(memory.api.rss))} (bound ${MB(REQUEST_LOG_BOUNDS.apiRssBytes)})`);
  const crashes = [stack.api, stack.worker].flatMap((p) => p.crashes.filter((e) => e.at >= started).map((e) => `${p.name} exited (${e.signal ?? `code ${e.code}`})`));
  problems.push(...crashes);
  if (!stack.api.alive) problems.push('the API is down at the end');

  return {
    scenario: `${requests} requests with a ${NAME_BYTES / 1024} KB unknown parameter name`,
    writes: requests,
    writesOk: answered,
    events: 0,
    delivered: [],
    ranTwice: 0,
    lost: 0,
    fiveXx: 0,
    unrecovered: 0,
    badSignatures: 0,
    recoveryMs: 0,
    recovery: { workMs: 0, deliveriesMs: 0 },
    apiUp: stack.api.alive,
    workerUp: stack.worker.alive,
    crashes,
    problems,
    memory,
    summary: [
      `answers ${answered}/${requests} (largest ${largestAnswerBytes} bytes)`,
      `API RSS ${sample(memory.api.rss)}`,
      `API heap ${sample(memory.api.heapUsed)}`,
      `Redis used_memory ${sample(memory.redis.usedMemory)}`,
      `log in Redis ${entries} entries, ${MB(logBytes)}`,
    ].join(' · '),
  };
}
