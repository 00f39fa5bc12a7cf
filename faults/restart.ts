import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { burst, form, resetCount, type ApiClient } from './load';
import { sleep, waitFor } from './services';
import { allArrived, deliverableEvents, finish, judge, processFigures, RECOVERY_BAR_MS, setUp, writeFigures, type Figures, type Options, type Stack } from './suite';

// Restarts under load: a burst of writes (idempotency keys, retried as the SDKs do) with the API
// killed, the worker killed, or the API stopped gracefully (SIGTERM) halfway through; the
// supervisor starts each again a second after it exits, as compose's `restart:` does. Besides
// the burst's verdict (nothing lost, nothing run twice, every event delivered), each measures
// how long the service took to be back, and how many client connections broke under a request.

export type RestartFault = 'api-kill' | 'worker-kill' | 'api-term';
export const RESTART_FAULTS: readonly RestartFault[] = ['api-kill', 'worker-kill', 'api-term'];

/**
 * The bounds a restart under load must meet. Wall times include the supervisor's 1 s restart
 * delay and depend on how busy the machine is (on 2 shared cores, a start's wall time is 2–4× its
 * CPU time); the CPU a start takes does not, so it is bounded too.
 */
export const RESTART_BOUNDS = {
  /** From the kill (or SIGTERM) until a new API process answers an authenticated read. */
  answerMs: 8_000,
  /** From the worker's kill until the new worker delivers an event. */
  processMs: 8_000,
  /** CPU time of a start, to the ready line (about 1.1–1.7 s; parsing openapi/ and compiling every validator made the API's 3.3 s). */
  startCpuMs: 2_500,
  /** From SIGTERM until the old API process has exited: the drain. */
  drainMs: 3_000,
  /** From SIGTERM until the last write it interrupted (or that was sent while it was down) succeeded: back, plus the clients' backoff. */
  lastWriteMs: 12_000,
  /** Connections broken under a request by a graceful stop (ECONNRESET, "other side closed"). */
  gracefulResets: 0,
};

export interface RestartTimes {
  /** The fault until the old process exited. */
  exitMs: number;
  /** The fault until the new process printed its ready line (`api listening`, `workers started`). */
  readyMs: number;
  /** The CPU time the new process's start took, as its ready line says (none from a version that doesn't say). */
  startCpuMs?: number;
  /** The fault until the new API answered a read; for the worker, until it delivered an event. */
  backMs: number;
  /** The fault until the last write sent before the service was back succeeded. */
  lastWriteMs: number;
  /** Client requests whose connection broke under them; refused connects (nothing listening). */
  resets: number;
  refused: number;
}

/** One authenticated read on a connection of its own: whether the API answered it 200. */
function answers(baseUrl: string, key: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${baseUrl}/v1/webhook_endpoints?limit=1`, { agent: false, timeout: 2_000, headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Injects the fault; resolves with its times once the new process is back. */
async function injectRestart(stack: Stack, fault: RestartFault, client: ApiClient, receivers: { arrivals: Map<string, number> }[]) {
  const at = Date.now();
  if (fault === 'worker-kill') {
    await stack.worker.kill9();
    const exitedAt = Date.now();
    // Processing again: the first delivery any receiver gets after the old worker died.
    const deliveredAfter = () => Math.min(...receivers.flatMap((r) => [...r.arrivals.values()].filter((t) => t > exitedAt)));
    if (!(await waitFor(() => Number.isFinite(deliveredAfter()), 60_000, 20))) throw new Error('the worker did not deliver again');
    if (!(await stack.workerReady(at, 60_000))) throw new Error('the worker did not come back');
    return { at, exitedAt, readyAt: stack.worker.readyAfter(at)!, backAt: deliveredAfter(), startCpuMs: stack.worker.startCpuAfter(at) };
  }
  if (fault === 'api-kill') await stack.api.kill9();
  else await stack.api.terminate();
  const exitedAt = Date.now();
  let backAt = 0;
  if (!(await waitFor(async () => (await answers(stack.apiUrl, client.key)) && (backAt = Date.now()) > 0, 60_000, 50))) throw new Error('the API did not come back');
  return { at, exitedAt, readyAt: stack.api.readyAfter(at) ?? backAt, backAt, startCpuMs: stack.api.startCpuAfter(at) };
}

export async function restartScenario(stack: Stack, fault: RestartFault, options: Options): Promise<Figures> {
  const started = Date.now();
  const { client, receivers, accountId } = await setUp(stack);
  const run = randomBytes(4).toString('hex');
  let faultDone: ReturnType<typeof injectRestart> | undefined;
  await burst(
    options.writes,
    options.clients,
    (i) => client.send('POST', '/v1/identity/verification_sessions', form({ type: 'document', 'metadata[tag]': `${run}-${i}` }), `${run}-${i}`),
    (done) => {
      if (done === Math.floor(options.writes / 2)) faultDone = injectRestart(stack, fault, client, receivers);
    },
  );
  const t = await faultDone!;

  let events = await deliverableEvents(stack, accountId);
  await waitFor(async () => {
    events = await deliverableEvents(stack, accountId);
    return allArrived(receivers, events.map((e) => e.id));
  }, 90_000, 250);
  const names = { 'api-kill': 'API kill -9', 'worker-kill': 'worker kill -9', 'api-term': 'API SIGTERM' };
  const figures = await writeFigures(stack, `${names[fault]} under load`, client, receivers, accountId, events.map((e) => e.id));
  // The interrupted writes: every one sent before the service was back.
  const interrupted = client.records.filter((r) => r.startedAt <= t.backAt);
  const lastWriteAt = interrupted.every((r) => r.ok) ? Math.max(...interrupted.map((r) => r.okAt!)) : Infinity;
  const refused = client.networkErrors.get('ECONNREFUSED') ?? 0;
  const restart: RestartTimes = {
    exitMs: t.exitedAt - t.at,
    readyMs: t.readyAt - t.at,
    startCpuMs: t.startCpuMs,
    backMs: t.backAt - t.at,
    lastWriteMs: lastWriteAt - t.at,
    resets: resetCount(client.networkErrors),
    refused,
  };
  figures.restart = restart;
  figures.recovery = { workMs: Math.max(0, lastWriteAt - t.backAt), deliveriesMs: 0 };
  figures.recoveryMs = figures.recovery.workMs;
  Object.assign(figures, processFigures(stack, started));
  await finish(client, receivers);
  const judged = judge(figures, options.recoveryBarMs ?? RECOVERY_BAR_MS);
  judged.problems.push(...restartProblems(fault, restart, client.networkErrors));
  // Let the backlog's last deliveries land before the next scenario breaks something.
  await sleep(500);
  return judged;
}

function restartProblems(fault: RestartFault, r: RestartTimes, errors: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  const over = (what: string, ms: number, bound: number) => ms > bound && problems.push(`${what} took ${(ms / 1000).toFixed(1)} s (bound ${bound / 1000} s)`);
  if (fault === 'worker-kill') over('processing again', r.backMs, RESTART_BOUNDS.processMs);
  else over('answering again', r.backMs, RESTART_BOUNDS.answerMs);
  if (r.startCpuMs !== undefined) over('the start (CPU time)', r.startCpuMs, RESTART_BOUNDS.startCpuMs);
  if (fault === 'api-term') {
    over('the drain', r.exitMs, RESTART_BOUNDS.drainMs);
    over('the last interrupted write', r.lastWriteMs, RESTART_BOUNDS.lastWriteMs);
    if (r.resets > RESTART_BOUNDS.gracefulResets) problems.push(`a graceful stop broke ${r.resets} connections under a request (${[...errors].map(([c, n]) => `${c} ×${n}`).join(', ')})`);
  }
  return problems;
}

export function formatRestart(r: RestartTimes): string {
  const s = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'never');
  const cpu = r.startCpuMs === undefined ? '' : ` (start CPU ${s(r.startCpuMs)})`;
  return `exit ${s(r.exitMs)}, ready ${s(r.readyMs)}${cpu}, back ${s(r.backMs)}, last interrupted write ${s(r.lastWriteMs)}, resets ${r.resets}, refused ${r.refused}`;
}
