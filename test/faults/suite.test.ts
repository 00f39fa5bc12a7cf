import { burstScenario, BURST_FAULTS, formatFigures, FORWARDING_FAULTS, forwardingScenario, pipelineScenario, PIPELINE_FAULTS, Stack, type Figures, type Options } from '../../faults/suite';
import { clusterToolsAvailable } from '../../faults/services';
import { requestLogScenario } from '../../faults/requestLog';

// The short fault suite: every scenario of `npm run faults` with a smaller burst, on a PostgreSQL
// cluster, a redis-server, an API and a worker of its own (never the shared ones). The full run and
// its figures: faults/README.md.

// The full suite holds recovery to 15 s; here, beside the rest of the suite on a busy CI machine,
// twice that still fails a recovery that waits on a minute-long timeout.
const options: Options = { writes: 240, clients: 16, pipelineItems: 8, recoveryBarMs: 30_000 };

// Without PostgreSQL's server programs the suite can't run; CI must not skip it silently.
const runnable = clusterToolsAvailable();
if (!runnable) {
  const why = 'the fault suite needs initdb, pg_ctl and redis-server (Debian: postgresql, redis-server)';
  if (process.env.CI) throw new Error(why);
  console.warn(`SKIPPED: ${why}`);
}
const suite = runnable ? describe : describe.skip;

let stack: Stack;
let failed = false;
const lines: string[] = [];
beforeAll(async () => {
  if (runnable) stack = await Stack.start((line) => lines.push(line));
}, 120_000);
afterAll(async () => {
  // A failed scenario keeps the services' logs for reading (the path is printed).
  await stack?.stop(failed);
  if (failed) lines.push(`logs kept in ${stack.root.root}`);
  if (lines.length > 0) console.log(lines.join('\n'));
}, 60_000);

function record(figures: Figures): Figures {
  lines.push(formatFigures(figures));
  failed ||= figures.problems.length > 0;
  return figures;
}

suite.each(BURST_FAULTS)('a burst of writes with %s mid-burst', (fault) => {
  test('loses nothing, runs nothing twice, recovers, and both processes stay up', async () => {
    const figures = record(await burstScenario(stack, fault, options));
    expect(figures.problems).toEqual([]);
    expect(figures.writesOk).toBe(options.writes + 1); // and the probe sent after the fault
    expect(figures.delivered).toEqual([figures.events, figures.events]);
    // Duplicates may happen (delivery is at least once), but each one is an attempt in the log.
    expect(figures.duplicates?.unlogged).toBe(0);
  }, 180_000);
});

suite.each(PIPELINE_FAULTS)('the delayed pipelines with %s while they wait', (fault) => {
  test('every processing step, redaction, sweep, Financial Connections step, async capture, refund failure, 3-D Secure expiry, test clock renewal, invoice payment retry (on test clocks and the real clock), invoice overdue step and draft auto-advance finishes once and is delivered', async () => {
    const figures = record(await pipelineScenario(stack, fault, options));
    expect(figures.problems).toEqual([]);
    // Processing, redaction, the secret sweep, the CVC purge, linked accounts' prefetched
    // refreshes, subscriptions and deactivations, async captures' settlements, refunds failing,
    // unanswered 3-D Secure challenges' expiries and send_invoice invoices going overdue: each
    // stage's items all done; and each test clock (one per four items, two at least) ready after
    // its two renewals; and each dunning clock (as many) ready, its declined renewal tried 9 times
    // (8 retries), its subscription canceled; and each auto-advance clock (as many) ready, its four
    // drafts finalized; and each real-clock draft (as many) finalized by the job the reconciler
    // adds; and each real-clock declined first invoice (as many) retried twice.
    const clocks = Math.max(2, Math.ceil(options.pipelineItems / 4));
    const total = 11 * options.pipelineItems + 3 * clocks + 3 * clocks + (4 + 1) * clocks + clocks + clocks;
    expect(figures.pipeline).toEqual({ finished: total, total });
  }, 180_000);
});

suite.each(FORWARDING_FAULTS)('forwarding requests in flight with %s', (fault) => {
  test('every forward ends as its record says, none is sent twice, none is left unfinished', async () => {
    const figures = record(await forwardingScenario(stack, fault, options));
    expect(figures.problems).toEqual([]);
    expect(figures.writesOk).toBe(figures.writes);
    expect(figures.pipeline).toEqual({ finished: figures.writes, total: figures.writes });
    // None is answered as not sent while the destination got it.
    expect(figures.forwarded?.failedButReceived).toBe(0);
    // Redis losing jobs or going away for 10 s loses no forward: the reconciler re-adds the jobs
    // within the pickup time, and the calls wait for the worker.
    if (fault === 'redis-flushall' || fault === 'redis-down') expect(figures.forwarded).toEqual({ succeeded: figures.writes, failed: 0, unknown: 0, unknownReceived: 0, failedButReceived: 0, notSent: 0 });
  }, 180_000);
});

suite('the request-log budget', () => {
  test('large bad requests get short answers and leave the API and Redis within their memory bounds', async () => {
    const figures = await requestLogScenario(stack, 'budget', options);
    expect(record(figures).problems).toEqual([]);
    expect(figures.memory.answered).toBe(options.writes);
  }, 180_000);
});
