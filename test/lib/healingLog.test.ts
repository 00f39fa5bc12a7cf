import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import type { Worker } from 'bullmq';
import { logFailedJobs } from '../../src/lib/queue';
import { causeOf, HealingLog } from '../../src/lib/healingLog';
import { createLogger } from '../../src/lib/logger';

// A failure that heals by itself logs one warn line per cause per interval, with a count.

function capturing() {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('info', sink), lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('the first occurrence of a cause is logged at once; the rest of the interval is one line with their count', () => {
  const { logger, lines } = capturing();
  const log = new HealingLog(logger, 10_000);
  for (let i = 0; i < 350; i++) log.warn('step failed: P2028', { err: 'Unable to start a transaction in the given time', job: `j${i}` }, 'invoice step failed');
  log.warn('redis connection error: ECONNREFUSED', { err: 'connect ECONNREFUSED 127.0.0.1:6379' }, 'redis connection error');
  expect(lines().map((l) => [l.msg, l.count, l.level])).toEqual([
    ['invoice step failed', 1, 40],
    ['redis connection error', 1, 40],
  ]);
  jest.advanceTimersByTime(10_000);
  expect(lines().slice(2).map((l) => [l.msg, l.count, l.cause])).toEqual([['invoice step failed (349 more in 10 s)', 349, 'step failed: P2028']]);
  // Still failing: one line per interval; once quiet, nothing more, and the next occurrence is logged at once.
  for (let i = 0; i < 20; i++) log.warn('step failed: P2028', { err: 'x' }, 'invoice step failed');
  jest.advanceTimersByTime(10_000);
  expect(lines().slice(3).map((l) => l.count)).toEqual([20]);
  jest.advanceTimersByTime(30_000);
  expect(lines()).toHaveLength(4);
  log.warn('step failed: P2028', { err: 'x' }, 'invoice step failed');
  expect(lines()).toHaveLength(5);
  expect(JSON.stringify(lines())).not.toMatch(/\\n\s+at /);
});

test('flush logs what is counted and not yet logged', () => {
  const { logger, lines } = capturing();
  const log = new HealingLog(logger, 10_000);
  for (let i = 0; i < 5; i++) log.warn('c', {}, 'm');
  log.flush();
  expect(lines().map((l) => l.count)).toEqual([1, 4]);
});

test('causes: an error code, or the message without its numbers and ids', () => {
  expect(causeOf(Object.assign(new Error('Unable to start a transaction'), { code: 'P2028' }))).toBe('P2028');
  expect(causeOf(new Error('Missing key for job 17. moveToFinished'))).toBe(causeOf(new Error('Missing key for job 9. moveToFinished')));
  expect(causeOf(new Error('No such invoice in_123abc'))).toBe(causeOf(new Error('No such invoice in_456def')));
});

test("a worker's failed jobs: retried attempts and failures that heal are warnings without a stack; only a last attempt that won't heal is an error", () => {
  jest.useRealTimers();
  const { logger, lines } = capturing();
  const worker = new EventEmitter();
  logFailedJobs(worker as unknown as Worker<{ id: string }>, logger, 'invoice step failed', (data) => ({ invoice: data.id }));
  const job = (attemptsMade: number) => ({ data: { id: 'in_1' }, name: 'step', attemptsMade, opts: { attempts: 6 } });
  const p2028 = Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), { code: 'P2028' });
  for (let i = 0; i < 50; i++) worker.emit('failed', job(6), p2028);
  worker.emit('failed', job(2), new TypeError('x is not a function'));
  worker.emit('failed', job(6), new TypeError('x is not a function'));
  const logged = lines();
  expect(logged.map((l) => [l.level, l.msg])).toEqual([
    [40, 'invoice step failed'],
    [40, 'invoice step failed'],
    [50, 'invoice step failed'],
  ]);
  expect(logged[0]).toMatchObject({ count: 1, err: p2028.message, invoice: 'in_1' });
  expect(JSON.stringify(logged.slice(0, 2))).not.toMatch(/\\n\s+at /);
  expect(logged[2].err.stack).toMatch(/TypeError: x is not a function\n\s+at /);
});
