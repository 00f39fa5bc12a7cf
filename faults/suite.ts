import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { ApiClient, burst, form, ForwardDestination, Receiver, type RequestRecord } from './load';
import { freePort, makeRoot, PostgresCluster, RedisServer, sleep, Supervised, waitFor } from './services';
import { requestLogScenario } from './requestLog';
import { formatRestart, restartScenario, RESTART_FAULTS, type RestartTimes } from './restart';
import { hashKey } from '../src/kernel/auth';

// The fault suite: each scenario is a burst of event-producing writes (verification sessions,
// one `created` event each) from concurrent clients that retry with their Idempotency-Key, to two
// signature-checking receivers, with one fault injected mid-burst; or the delayed pipelines
// (identity processing, redaction, the app-secret sweep) with a fault while they wait; or
// forwarding requests in flight (the API waiting for the worker's call) with a fault. Each ends
// with figures and a verdict: nothing lost, nothing run twice, nothing stuck, both processes up.

const ROOT = resolve(__dirname, '..');
const REGISTER = join(ROOT, 'scripts', 'swc-register.js');

/** The account whose declined first invoices are retried on the real clock during the fault, on a short schedule. */
const RETRY_PLATFORM = 'acct_FaultsRetries001';
const REAL_RETRY_DAYS = 0.00003;

/** Every finished write and pipeline must be back to normal this long after the fault ended. */
export const RECOVERY_BAR_MS = 15_000;
/** How long a scenario waits for its backlog after the burst before calling what is left stuck. */
const SETTLE_MS = 90_000;

export type FaultName = 'redis-flushall' | 'redis-restart' | 'redis-down' | 'worker-kill' | 'api-kill' | 'postgres-restart' | 'postgres-stop';

export const BURST_FAULTS: readonly FaultName[] = ['redis-flushall', 'redis-restart', 'worker-kill', 'api-kill', 'postgres-restart', 'postgres-stop'];
export const PIPELINE_FAULTS: readonly FaultName[] = ['redis-flushall', 'worker-kill'];
export const FORWARDING_FAULTS: readonly FaultName[] = ['redis-flushall', 'redis-down', 'worker-kill', 'postgres-restart', 'postgres-stop'];

export interface Options {
  /** Writes per burst (the full suite: 2,000). */
  writes: number;
  /** Concurrent clients (the full suite: 32). */
  clients: number;
  /** Verification sessions per pipeline stage (the full suite: 40). */
  pipelineItems: number;
  /** Only these scenarios (names as in the figures); all when empty. */
  only?: readonly string[];
  /** Keep the services' logs even when every scenario passed. */
  keepLogs?: boolean;
  /** Run the API and the worker as production does, from dist/ (`npm run build` first), not from the TypeScript sources. */
  built?: boolean;
  /**
   * Busy processes per core the suite runs beside the stack for the whole run (`--load=2`: the
   * machine's load average rises by about twice its cores), so figures can be taken at a known load.
   */
  cpuLoad?: number;
  /** The recovery bar (default RECOVERY_BAR_MS); the short version in `npm test` allows for a busier machine. */
  recoveryBarMs?: number;
  log?: (line: string) => void;
}

export interface Figures {
  scenario: string;
  writes: number;
  writesOk: number;
  events: number;
  /** Distinct events each endpoint received, of those it should have. */
  delivered: number[];
  /** Writes whose change exists twice (a second object, a second event). */
  ranTwice: number;
  /** Answers that claimed success for a change the database doesn't have. */
  lost: number;
  fiveXx: number;
  /** 5xx and network failures that no retry turned into a success. */
  unrecovered: number;
  badSignatures: number;
  /** For the pipelines: steps finished of steps started (for forwards: records final of records made). */
  pipeline?: { finished: number; total: number };
  /**
   * For forwards: how many succeeded, ended in the error their record holds, or ended "may have
   * been received" (the worker died mid-call); and how many were answered as failed (nothing sent,
   * or no connection) although the destination got them, which must be none.
   */
  forwarded?: { succeeded: number; failed: number; unknown: number; unknownReceived: number; failedButReceived: number; notSent: number };
  /**
   * Deliveries that arrived more than once, per endpoint (at-least-once allows them), and those of
   * them the attempt log doesn't show (each arrival must be an attempt in the log).
   */
  duplicates?: { perEndpoint: number[]; unlogged: number };
  /**
   * From the end of the fault (the service back) until every write sent before it succeeded and
   * every event committed before the fault was delivered: the larger of the two.
   */
  recoveryMs: number;
  /** `work`: the interrupted writes, or the pipelines' steps. */
  recovery: { workMs: number; deliveriesMs: number };
  apiUp: boolean;
  workerUp: boolean;
  crashes: string[];
  problems: string[];
  /** A scenario's own figures in one line, shown instead of the writes' (the request log's memory). */
  summary?: string;
  /** For the restarts under load (restart.ts): how long the service took to be back. */
  restart?: RestartTimes;
  /** Lines the API and the worker wrote during the scenario, by kind (src/lib/healingLog.ts keeps a healing failure's to one per cause per interval). */
  logLines?: { warn: number; error: number; other: number };
  /** The machine's 1-minute load average at the scenario's start and end (the figures depend on it). */
  load?: { start: number; end: number };
}

/** The cluster, Redis, API and worker of one suite run. */
export class Stack {
  private constructor(
    readonly root: { root: string; remove(): void },
    readonly pg: PostgresCluster,
    readonly redis: RedisServer,
    readonly api: Supervised,
    readonly worker: Supervised,
    readonly apiUrl: string,
    readonly databaseUrl: string,
  ) {}

  static async start(log: (line: string) => void, options: { built?: boolean } = {}): Promise<Stack> {
    const root = makeRoot();
    const pg = await PostgresCluster.start(root.root);
    const redis = await RedisServer.start(root.root);
    const databaseUrl = pg.url('sandbank_faults');
    const port = await freePort();
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      PORT: String(port),
      QUEUE_PREFIX: 'faults',
      // One API process: a kill -9 of it is the fault (a cluster's primary would restart its children).
      API_PROCESSES: '1',
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_RETRY_SCHEDULE: '1,2,4,8,16',
      IDENTITY_PROCESSING_DELAY_MS: '2000',
      REDACTION_DELAY_MS: '3000',
      SECRET_SWEEP_INTERVAL_MS: '2000',
      CARD_CVC_TTL_SECONDS: '2',
      THREE_D_SECURE_TTL_SECONDS: '2',
      RECONCILE_INTERVAL_MS: '5000',
      FC_REFRESH_DELAY_MS: '2000',
      FC_REFRESH_COOLDOWN_SECONDS: '0',
      FC_SUBSCRIPTION_INTERVAL_MS: '3000',
      FC_DEACTIVATION_DELAY_MS: '2000',
      ASYNC_CAPTURE_DELAY_MS: '2000',
      REFUND_FAILURE_DELAY_MS: '2000',
      // The real-clock dunning account's retries: two, about 2.6 s apart (others keep the default).
      BILLING_RETRY_SCHEDULE: JSON.stringify({ [RETRY_PLATFORM]: { days: [REAL_RETRY_DAYS, REAL_RETRY_DAYS] } }),
      // Every receiver is on this machine; anything else would be a mistake to refuse, not to send.
      WEBHOOK_LOOPBACK_ONLY: 'true',
      // Forwards go to a local destination, with the default (realistic) timeout and pickup time:
      // a short timeout would hide an answer that is not recorded in time.
      FORWARDING_DESTINATIONS: JSON.stringify([{ url: 'http://127.0.0.1:', allow_private_network: true }]),
    };
    const entry = (file: string) => (options.built ? [join(ROOT, 'dist', `${file}.js`)] : ['-r', REGISTER, join(ROOT, `${file}.ts`)]);
    const api = new Supervised('api', entry('src/server'), env, join(root.root, 'api.log'), 'api listening');
    const worker = new Supervised('worker', entry('workers/index'), env, join(root.root, 'worker.log'), 'workers started');
    const stack = new Stack(root, pg, redis, api, worker, `http://127.0.0.1:${port}`, databaseUrl);
    // The API migrates first; the worker then starts against a migrated database.
    api.start();
    if (!(await stack.apiReady(60_000))) throw new Error(`the API did not start (log: ${root.root}/api.log)`);
    worker.start();
    if (!(await stack.workerReady(0, 60_000))) throw new Error(`the worker did not start (log: ${root.root}/worker.log)`);
    log(`stack up: postgres :${pg.port}, redis :${redis.port}, api :${port} (logs in ${root.root})`);
    return stack;
  }

  async apiReady(timeoutMs: number): Promise<boolean> {
    return waitFor(async () => this.api.alive && (await fetch(`${this.apiUrl}/healthz`)).ok, timeoutMs, 200);
  }

  /** The worker process started after `since` has finished its start (its first reconcile pass). */
  async workerReady(since: number, timeoutMs: number): Promise<boolean> {
    return waitFor(() => this.worker.alive && this.worker.readySince(since), timeoutMs, 100);
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    for (let attempt = 0; ; attempt++) {
      const client = new Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 2000 });
      try {
        await client.connect();
        return (await client.query(sql, params)).rows as T[];
      } catch (err) {
        if (attempt >= 30) throw err;
        await sleep(500);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  async stop(keepFiles = false): Promise<void> {
    await Promise.allSettled([this.api.stop(), this.worker.stop()]);
    await this.redis.stop().catch(() => undefined);
    await this.pg.stop('fast').catch(() => undefined);
    if (!keepFiles) this.root.remove();
  }
}

/** Injects the fault; resolves when the broken part is back (restarted, or Redis answering again). */
async function inject(stack: Stack, fault: FaultName): Promise<number> {
  switch (fault) {
    case 'redis-flushall':
      await stack.redis.flushAll();
      return Date.now();
    case 'redis-restart':
      await stack.redis.kill();
      await sleep(1000);
      await stack.redis.startProcess();
      return Date.now();
    case 'redis-down':
      await stack.redis.kill();
      await sleep(10_000);
      await stack.redis.startProcess();
      return Date.now();
    case 'worker-kill': {
      const killedAt = Date.now();
      await stack.worker.kill9();
      if (!(await stack.workerReady(killedAt, 60_000))) throw new Error('the worker did not come back');
      return Date.now();
    }
    case 'api-kill': {
      await stack.api.kill9();
      if (!(await stack.apiReady(60_000))) throw new Error('the API did not come back');
      return Date.now();
    }
    case 'postgres-restart':
      await stack.pg.restart('fast');
      return Date.now();
    case 'postgres-stop':
      await stack.pg.stop('immediate');
      await sleep(4000);
      await stack.pg.startServer();
      return Date.now();
  }
}

interface Setup {
  client: ApiClient;
  receivers: Receiver[];
  accountId: string;
}

export async function setUp(stack: Stack): Promise<Setup> {
  const client = new ApiClient(stack.apiUrl, `sk_test_faults${randomBytes(12).toString('hex')}`);
  const receivers = [new Receiver(), new Receiver()];
  for (const receiver of receivers) {
    await receiver.start();
    const created = await client.send('POST', '/v1/webhook_endpoints', form({ url: receiver.url, 'enabled_events[0]': '*' }));
    if (!created.ok) throw new Error(`creating a webhook endpoint failed: ${JSON.stringify(created.body)}`);
    receiver.secret = created.body.secret;
    receiver.endpointId = created.body.id;
  }
  const account = await client.send('GET', '/v1/account');
  if (!account.ok) throw new Error(`reading the account failed: ${JSON.stringify(account.body)}`);
  return { client, receivers, accountId: account.body.id };
}

/** Events an endpoint on `*` must receive (`…redacted` goes only to endpoints that name it). */
export async function deliverableEvents(stack: Stack, accountId: string): Promise<{ id: string }[]> {
  return stack.query<{ id: string }>(
    `SELECT id FROM events WHERE account_id = $1 AND type <> 'identity.verification_session.redacted' ORDER BY seq`,
    [accountId],
  );
}

export const allArrived = (receivers: Receiver[], ids: readonly string[]) => receivers.every((r) => ids.every((id) => r.arrivals.has(id)));
const latestArrival = (receivers: Receiver[], ids: readonly string[]) =>
  Math.max(0, ...receivers.flatMap((r) => ids.map((id) => r.arrivals.get(id) ?? 0)));

/** A write sent once the fault is over, retried until it succeeds: when writes work again. */
function probeWrite(client: ApiClient, tag: string) {
  return client.send('POST', '/v1/identity/verification_sessions', form({ type: 'document', 'metadata[tag]': tag }), tag);
}

function setRecovery(f: Figures, backAt: number, workAt: number, deliveriesAt: number): void {
  f.recovery = { workMs: Math.max(0, workAt - backAt), deliveriesMs: Math.max(0, deliveriesAt - backAt) };
  f.recoveryMs = Math.max(f.recovery.workMs, f.recovery.deliveriesMs);
}

export function processFigures(stack: Stack, since: number) {
  const crashes = [stack.api, stack.worker].flatMap((p) =>
    p.crashes.filter((e) => e.at >= since).map((e) => `${p.name} exited (${e.signal ?? `code ${e.code}`})`),
  );
  const [api, worker] = [stack.api.linesSince(since), stack.worker.linesSince(since)];
  const logLines = { warn: api.warn + worker.warn, error: api.error + worker.error, other: api.other + worker.other };
  return { apiUp: stack.api.alive, workerUp: stack.worker.alive, crashes, logLines };
}

export async function burstScenario(stack: Stack, fault: FaultName, options: Options): Promise<Figures> {
  const started = Date.now();
  const { client, receivers, accountId } = await setUp(stack);
  const run = randomBytes(4).toString('hex');
  let faultDone: Promise<{ backAt: number; before: string[]; probe: RequestRecord }> | undefined;
  await burst(
    options.writes,
    options.clients,
    (i) => {
      const tag = `${run}-${i}`;
      return client.send('POST', '/v1/identity/verification_sessions', form({ type: 'document', 'metadata[tag]': tag }), tag);
    },
    (done) => {
      if (done !== Math.floor(options.writes / 2)) return;
      faultDone = (async () => {
        const before = (await deliverableEvents(stack, accountId)).map((e) => e.id);
        const backAt = await inject(stack, fault);
        return { backAt, before, probe: await probeWrite(client, `${run}-probe`) };
      })();
    },
  );
  const { backAt, before, probe } = await faultDone!;

  // Settle: every event the account has must reach both endpoints.
  let events = await deliverableEvents(stack, accountId);
  await waitFor(async () => {
    events = await deliverableEvents(stack, accountId);
    return allArrived(receivers, events.map((e) => e.id));
  }, SETTLE_MS, 250);
  const ids = events.map((e) => e.id);

  const figures = await writeFigures(stack, `${fault} during a burst`, client, receivers, accountId, ids);
  // Writes: those sent before the service was back (interrupted ones included) and the probe sent after.
  const interrupted = client.records.filter((r) => r.startedAt <= backAt || r === probe);
  const writesAt = interrupted.every((r) => r.ok) ? Math.max(...interrupted.map((r) => r.okAt!)) : Infinity;
  const deliveriesAt = allArrived(receivers, before) ? latestArrival(receivers, before) : Infinity;
  setRecovery(figures, backAt, writesAt, deliveriesAt);
  Object.assign(figures, processFigures(stack, started));
  await finish(client, receivers);
  return judge(figures, options.recoveryBarMs ?? RECOVERY_BAR_MS);
}

/** What the database holds against what the clients were told, and what the receivers got. */
export async function writeFigures(stack: Stack, scenario: string, client: ApiClient, receivers: Receiver[], accountId: string, eventIds: string[]): Promise<Figures> {
  const totals = client.totals();
  const writes = client.records.filter((r) => r.body?.object === 'identity.verification_session' || !r.ok);
  const [twice] = await stack.query<{ objects: number; events: number }>(
    `SELECT
       (SELECT count(*)::int FROM (SELECT metadata->>'tag' FROM identity_verification_sessions
          WHERE account_id = $1 AND metadata ? 'tag' GROUP BY 1 HAVING count(*) > 1) t) AS objects,
       (SELECT count(*)::int FROM (SELECT data->'object'->>'id' FROM events
          WHERE account_id = $1 AND type = 'identity.verification_session.created' GROUP BY 1 HAVING count(*) > 1) e) AS events`,
    [accountId],
  );
  const answeredIds = [...new Set(client.records.filter((r) => r.ok && r.body?.object === 'identity.verification_session').map((r) => r.body.id as string))];
  const [stored] = await stack.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity_verification_sessions WHERE id = ANY($1)`, [answeredIds]);
  return {
    duplicates: await duplicateFigures(stack, receivers),
    scenario,
    writes: writes.length,
    writesOk: writes.filter((r) => r.ok).length,
    events: eventIds.length,
    delivered: receivers.map((r) => eventIds.filter((id) => r.arrivals.has(id)).length),
    ranTwice: twice.objects + twice.events,
    lost: answeredIds.length - stored.n,
    fiveXx: totals.fiveXx,
    unrecovered: totals.failed.length,
    badSignatures: receivers.reduce((n, r) => n + r.badSignatures, 0),
    recoveryMs: 0,
    recovery: { workMs: 0, deliveriesMs: 0 },
    apiUp: true,
    workerUp: true,
    crashes: [],
    problems: totals.failed.slice(0, 3).map((r) => `a request ended with ${r.tries.join(' → ')}: ${JSON.stringify(r.body).slice(0, 200)}`),
  };
}

/**
 * Events that arrived more than once at each endpoint, and arrivals the attempt log doesn't show:
 * every arrival must be an attempt that may have reached the endpoint: one that succeeded, got a
 * status or timed out (a busy receiver answers late), or whose worker died (outcome unknown).
 */
async function duplicateFigures(stack: Stack, receivers: Receiver[]): Promise<NonNullable<Figures['duplicates']>> {
  let unlogged = 0;
  const perEndpoint: number[] = [];
  for (const r of receivers) {
    const repeated = [...r.counts].filter(([, n]) => n > 1);
    perEndpoint.push(repeated.reduce((sum, [, n]) => sum + n - 1, 0));
    const logged = await stack.query<{ event_id: string; n: number }>(
      `SELECT event_id, count(*)::int AS n FROM webhook_attempts WHERE endpoint_id = $1
         AND (outcome IN ('succeeded', 'unknown', 'started') OR status_code IS NOT NULL OR error LIKE 'Timed out%') GROUP BY 1`,
      [r.endpointId],
    );
    const attempts = new Map(logged.map((row) => [row.event_id, row.n]));
    for (const [eventId, n] of r.counts) unlogged += Math.max(0, n - (attempts.get(eventId) ?? 0));
  }
  return { perEndpoint, unlogged };
}

/**
 * Linked accounts whose work waits: a prefetched balance refresh each, a transaction subscription
 * (a refresh at once, the next FC_SUBSCRIPTION_INTERVAL_MS later) each, and Inactive Accounts
 * accounts to go inactive. Answers the linked and the going-inactive account ids.
 */
async function linkFcAccounts(client: ApiClient, n: number): Promise<{ subscribed: string[]; inactive: string[] }> {
  const link = async (institution: string) => {
    const customer = await client.send('POST', '/v1/customers', form({ name: 'FC' }));
    const session = await client.send(
      'POST',
      '/v1/financial_connections/sessions',
      form({ 'account_holder[type]': 'customer', 'account_holder[customer]': customer.body?.id, 'permissions[0]': 'balances', 'permissions[1]': 'transactions', 'prefetch[0]': 'balances' }),
    );
    const done = await client.send('POST', `/sandbox/v1/financial_connections/sessions/${session.body?.id}/complete`, form({ institution, 'accounts[0]': 'checking' }));
    if (!customer.ok || !session.ok || !done.ok) throw new Error(`linking an account failed: ${JSON.stringify(done.body)}`);
    return done.body.accounts.data[0].id as string;
  };
  const subscribed = await Promise.all(Array.from({ length: n }, () => link('test_institution')));
  for (const id of subscribed) {
    const res = await client.send('POST', `/v1/financial_connections/accounts/${id}/subscribe`, form({ 'features[0]': 'transactions' }));
    if (!res.ok) throw new Error(`subscribing failed: ${JSON.stringify(res.body)}`);
  }
  const inactive = await Promise.all(Array.from({ length: n }, () => link('inactive_accounts')));
  return { subscribed, inactive };
}

/**
 * Refunds of 4000000000005126 (their failure is due REFUND_FAILURE_DELAY_MS later), each of a
 * PaymentIntent confirmed with `pm_card_refundFail`. Answers the refund ids.
 */
async function failingRefunds(client: ApiClient, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const paid = await client.send(
      'POST',
      '/v1/payment_intents',
      form({ amount: '1000', currency: 'usd', 'allowed_payment_method_types[0]': 'card', payment_method: 'pm_card_refundFail', confirm: 'true' }),
    );
    if (!paid.ok || paid.body.status !== 'succeeded') throw new Error(`paying failed: ${JSON.stringify(paid.body)}`);
    const refund = await client.send('POST', '/v1/refunds', form({ payment_intent: paid.body.id, amount: '400' }));
    if (!refund.ok || refund.body.status !== 'succeeded') throw new Error(`refunding failed: ${JSON.stringify(refund.body)}`);
    ids.push(refund.body.id);
  }
  return ids;
}

/**
 * The delayed pipelines with a fault while they wait: submitted sessions to finish processing,
 * verified sessions being redacted, app secrets about to expire for the sweep, card CVCs to
 * purge, linked accounts' refreshes, subscriptions and deactivations, `automatic_async` captures'
 * settlements, refunds of 4000000000005126 to fail, test clocks advancing across subscription
 * renewals, test clocks advancing across a declined renewal's payment retries (dunning), open
 * `send_invoice` invoices about to go overdue (`invoice.overdue`), drafts with `auto_advance` on
 * test clocks advancing past their finalization and on the real clock (found by the reconciler), and declined first invoices retried on the real
 * clock (a short BILLING_RETRY_SCHEDULE).
 */
export async function pipelineScenario(stack: Stack, fault: FaultName, options: Options): Promise<Figures> {
  const started = Date.now();
  const { client, receivers, accountId } = await setUp(stack);
  const n = options.pipelineItems;
  const createSession = async () => {
    const created = await client.send('POST', '/v1/identity/verification_sessions', form({ type: 'document' }));
    const submitted = await client.send('POST', `/sandbox/v1/identity/verification_sessions/${created.body.id}/submit`, form({ outcome: 'verified' }));
    if (!created.ok || !submitted.ok) throw new Error(`preparing a session failed: ${JSON.stringify(submitted.body)}`);
    return created.body.id as string;
  };
  // Verified sessions to redact once the fault is near.
  const toRedact = await Promise.all(Array.from({ length: n }, createSession));
  const verified = (ids: string[]) => stack.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity_verification_sessions WHERE id = ANY($1) AND status = 'verified'`, [ids]);
  if (!(await waitFor(async () => (await verified(toRedact))[0].n === n, 60_000, 250))) throw new Error('sessions to redact never got verified');

  const processing = await Promise.all(Array.from({ length: n }, createSession));
  for (const id of toRedact) {
    const redacted = await client.send('POST', `/v1/identity/verification_sessions/${id}/redact`);
    if (!redacted.ok) throw new Error(`redact failed: ${JSON.stringify(redacted.body)}`);
  }
  for (let i = 0; i < n; i++) {
    // Each its own: on a busy machine making them all takes longer than 2 s.
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const secret = await client.send('POST', '/v1/apps/secrets', form({ name: `s${i}`, payload: 'p', 'scope[type]': 'account', expires_at: String(expiresAt) }));
    if (!secret.ok) throw new Error(`creating a secret failed: ${JSON.stringify(secret.body)}`);
    // A card whose CVC the purge clears after CARD_CVC_TTL_SECONDS.
    const card = await client.send('POST', '/v1/payment_methods', form({ type: 'card', 'card[number]': '4242424242424242', 'card[exp_month]': '12', 'card[exp_year]': '2040', 'card[cvc]': '123' }));
    if (!card.ok) throw new Error(`creating a card failed: ${JSON.stringify(card.body)}`);
  }
  const fc = await linkFcAccounts(client, n);
  // Async captures whose charges the worker settles after ASYNC_CAPTURE_DELAY_MS.
  const captured: string[] = [];
  for (let i = 0; i < n; i++) {
    const paid = await client.send(
      'POST',
      '/v1/payment_intents',
      form({ amount: '1000', currency: 'usd', 'allowed_payment_method_types[0]': 'card', payment_method: 'pm_card_visa', confirm: 'true', capture_method: 'automatic_async' }),
    );
    if (!paid.ok) throw new Error(`paying failed: ${JSON.stringify(paid.body)}`);
    captured.push(paid.body.latest_charge as string);
  }
  const refunds = await failingRefunds(client, n);
  // SetupIntents waiting on a 3-D Secure challenge nobody answers: each fails when it expires.
  const challenged: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await client.send('POST', '/v1/setup_intents', form({ payment_method: 'pm_card_authenticationRequired', confirm: 'true', 'allowed_payment_method_types[0]': 'card' }));
    if (res.body?.status !== 'requires_action') throw new Error(`a SetupIntent did not wait on its challenge: ${JSON.stringify(res.body)}`);
    challenged.push(res.body.id);
  }
  // Test clocks advancing two months over a monthly subscription each: two renewals to run.
  const clocks = await advancingClocks(client, Math.max(2, Math.ceil(n / 4)));
  // Test clocks whose first renewal declines: its 8 retries (all declined) run during the advance,
  // then the subscription is canceled (the default schedule).
  const dunning = await advancingClocks(client, Math.max(2, Math.ceil(n / 4)), true);
  const overdue = await overdueInvoices(client, n);
  // Drafts with auto_advance on test clocks advancing past their finalization (an hour on).
  const drafts = await autoAdvancingDrafts(client, Math.max(2, Math.ceil(n / 4)));
  // Real-clock drafts with auto_advance due a few seconds on: only the reconciler can find them.
  const realDrafts = await realClockDrafts(stack, client, Math.max(2, Math.ceil(n / 4)));
  // Real-clock subscriptions whose declined first invoice is retried twice during the fault.
  const retried = await realClockDunning(stack, Math.max(2, Math.ceil(n / 4)));
  const backAt = await inject(stack, fault);

  const progress = async () => {
    const [row] = await stack.query<{ processed: number; redacted: number; secrets: number; cvcs: number; ready: number; renewals: number; refunds: number; overdue: number }>(
      `SELECT
         (SELECT count(*)::int FROM identity_verification_sessions WHERE id = ANY($1) AND status = 'verified') AS processed,
         (SELECT count(*)::int FROM identity_verification_sessions WHERE id = ANY($2) AND redaction_status = 'redacted') AS redacted,
         (SELECT count(*)::int FROM app_secrets WHERE account_id = $3) AS secrets,
         (SELECT count(*)::int FROM payment_methods WHERE account_id = $3 AND cvc IS NOT NULL) AS cvcs,
         (SELECT count(*)::int FROM test_clocks WHERE id = ANY($4) AND status = 'ready' AND frozen_time = $5) AS ready,
         (SELECT count(DISTINCT (subscription_id, period_start))::int FROM invoices WHERE test_clock_id = ANY($4) AND billing_reason = 'subscription_cycle' AND status = 'paid') AS renewals,
         (SELECT count(*)::int FROM refunds WHERE id = ANY($6) AND status = 'failed') AS refunds,
         (SELECT count(*)::int FROM invoice_overdue_notices WHERE invoice_id = ANY($7)) AS overdue`,
      [processing, toRedact, accountId, clocks.ids, clocks.target, refunds, overdue],
    );
    // Each dunning clock: ready, its renewal invoice tried 9 times (the renewal, 8 retries) and left open, its subscription canceled.
    const [dunned] = await stack.query<{ ready: number; retried: number; canceled: number }>(
      `SELECT
         (SELECT count(*)::int FROM test_clocks WHERE id = ANY($1) AND status = 'ready' AND frozen_time = $2) AS ready,
         (SELECT count(*)::int FROM invoices WHERE test_clock_id = ANY($1) AND billing_reason = 'subscription_cycle' AND status = 'open' AND attempt_count = 9) AS retried,
         (SELECT count(*)::int FROM subscriptions WHERE test_clock_id = ANY($1) AND status = 'canceled') AS canceled`,
      [dunning.ids, dunning.target],
    );
    // Each subscribed account: its prefetched balance refresh, and two transaction refreshes (at
    // subscribing, then one interval later); each Inactive Accounts account: inactive.
    const [settled] = await stack.query<{ n: number }>(`SELECT count(*)::int AS n FROM charges WHERE id = ANY($1) AND balance_transaction IS NOT NULL`, [captured]);
    const [fcRow] = await stack.query<{ balances: number; subscriptions: number; inactive: number }>(
      `SELECT
         (SELECT count(*)::int FROM financial_connections_accounts WHERE id = ANY($1) AND balance_refresh->>'status' = 'succeeded') AS balances,
         (SELECT count(*)::int FROM (SELECT fc_account_id FROM financial_connections_refreshes WHERE fc_account_id = ANY($1) AND feature = 'transactions'
            AND status = 'succeeded' GROUP BY 1 HAVING count(*) >= 2) s) AS subscriptions,
         (SELECT count(*)::int FROM financial_connections_accounts WHERE id = ANY($2) AND status = 'inactive') AS inactive`,
      [fc.subscribed, fc.inactive],
    );
    const [expired] = await stack.query<{ n: number }>(`SELECT count(*)::int AS n FROM setup_intents WHERE id = ANY($1) AND status = 'requires_payment_method'`, [challenged]);
    // Each auto-advancing draft: open (finalized); each of their clocks: ready. Each real-clock
    // dunning invoice: tried 3 times (its first charge, 2 retries), its schedule over.
    const [later] = await stack.query<{ finalized: number; ready: number; retried: number }>(
      `SELECT
         (SELECT count(*)::int FROM invoices WHERE (id = ANY($1) OR id = ANY($5)) AND status = 'open' AND number IS NOT NULL) AS finalized,
         (SELECT count(*)::int FROM test_clocks WHERE id = ANY($2) AND status = 'ready' AND frozen_time = $3) AS ready,
         (SELECT count(*)::int FROM invoices i WHERE id = ANY($4) AND status = 'open' AND attempt_count = 3
            AND NOT EXISTS (SELECT 1 FROM invoice_payment_retries r WHERE r.invoice_id = i.id)) AS retried`,
      [drafts.ids, drafts.clocks, drafts.target, retried, realDrafts],
    );
    return {
      finished:
        row.processed + row.redacted + (n - row.secrets) + (n - row.cvcs) + row.ready + row.renewals + fcRow.balances + fcRow.subscriptions + fcRow.inactive + settled.n + row.refunds + expired.n +
        dunned.ready + dunned.retried + dunned.canceled + row.overdue + later.finalized + later.ready + later.retried,
      total: 11 * n + 3 * clocks.ids.length + 3 * dunning.ids.length + drafts.ids.length + realDrafts.length + drafts.clocks.length + retried.length,
    };
  };
  let pipeline = await progress();
  let finishedAt = Infinity;
  let events: { id: string }[] = [];
  await waitFor(async () => {
    pipeline = await progress();
    if (pipeline.finished < pipeline.total) return false;
    finishedAt = Math.min(finishedAt, Date.now());
    events = await deliverableEvents(stack, accountId);
    return allArrived(receivers, events.map((e) => e.id));
  }, SETTLE_MS, 250);
  const ids = (events.length > 0 ? events : await deliverableEvents(stack, accountId)).map((e) => e.id);

  for (const id of fc.subscribed) await client.send('POST', `/v1/financial_connections/accounts/${id}/unsubscribe`, form({ 'features[0]': 'transactions' }));
  const figures = await writeFigures(stack, `${fault} while pipelines wait`, client, receivers, accountId, ids);
  figures.pipeline = pipeline;
  // A step run twice would show as a second event for one account.
  const [twice] = await stack.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT data->'object'->>'id', type FROM events WHERE account_id = $1
       AND type IN ('financial_connections.account.refreshed_balance', 'financial_connections.account.deactivated', 'charge.updated', 'refund.failed', 'setup_intent.setup_failed', 'invoice.overdue', 'invoice.finalized') GROUP BY 1, 2 HAVING count(*) > 1) d`,
    [accountId],
  );
  figures.ranTwice += twice.n;
  // A renewal that ran twice is a second renewal invoice for one subscription's period (an
  // invoice's own period looks back, so the first invoice and the first renewal share a start).
  const [renewedTwice] = await stack.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM invoices WHERE test_clock_id = ANY($1) AND billing_reason = 'subscription_cycle' GROUP BY subscription_id, period_start HAVING count(*) > 1) t`,
    [clocks.ids],
  );
  figures.ranTwice += renewedTwice.n;
  // A retry that ran twice is a tenth charge of a dunning clock's invoice, or an attempt counted past 9.
  const [retriedTwice] = await stack.query<{ n: number }>(
    `SELECT
       (SELECT count(*)::int FROM (SELECT 1 FROM invoices WHERE test_clock_id = ANY($1) AND billing_reason = 'subscription_cycle' GROUP BY subscription_id, period_start HAVING count(*) > 1) t) +
       (SELECT count(*)::int FROM invoices WHERE test_clock_id = ANY($1) AND attempt_count > 9) +
       (SELECT count(*)::int FROM (SELECT p.invoice_id FROM charges c JOIN payment_intents p ON p.id = c.payment_intent_id
          WHERE p.invoice_id IN (SELECT id FROM invoices WHERE test_clock_id = ANY($1)) GROUP BY 1 HAVING count(*) > 9) c) AS n`,
    [dunning.ids],
  );
  figures.ranTwice += retriedTwice.n;
  // A real-clock retry run twice is a fourth charge, or an attempt counted past 3.
  const [realRetriedTwice] = await stack.query<{ n: number }>(
    `SELECT
       (SELECT count(*)::int FROM invoices WHERE id = ANY($1) AND attempt_count > 3) +
       (SELECT count(*)::int FROM (SELECT p.invoice_id FROM charges c JOIN payment_intents p ON p.id = c.payment_intent_id WHERE p.invoice_id = ANY($1) GROUP BY 1 HAVING count(*) > 3) c) AS n`,
    [retried],
  );
  figures.ranTwice += realRetriedTwice.n;
  // The pipelines' own delays (processing, redaction, the sweep and the CVC purge) are part of this time.
  setRecovery(figures, backAt, finishedAt, allArrived(receivers, ids) ? latestArrival(receivers, ids) : Infinity);
  Object.assign(figures, processFigures(stack, started));
  await finish(client, receivers);
  return judge(figures, options.recoveryBarMs ?? RECOVERY_BAR_MS);
}

/**
 * Forwarding requests in flight (each waiting for the worker's call to a destination that answers
 * after a second) with a fault. Each forward must end with an answer that agrees with its record and
 * with the destination: a 200 for a record that succeeded and was received once, or the public
 * error its record holds (`forwarding_api_retryable_upstream_error` only if nothing was received).
 * Nothing may be received twice or left unfinished.
 */
export async function forwardingScenario(stack: Stack, fault: FaultName, options: Options): Promise<Figures> {
  const started = Date.now();
  const { client, receivers, accountId } = await setUp(stack);
  const destination = new ForwardDestination(1000);
  await destination.start();
  // More forwards at once than the worker runs at once (16), so the fault meets calls in progress
  // and jobs still waiting in Redis.
  const n = options.pipelineItems * 4;
  const run = randomBytes(4).toString('hex');
  const outcomes = new Map<string, { record: RequestRecord; at: number }>();
  const forwards = Array.from({ length: n }, async (_, i) => {
    const tag = `${run}-${i}`;
    const body = form({ payment_method: 'pm_card_visa', url: destination.url, 'replacements[0]': 'card_number', 'request[body]': JSON.stringify({ card: { number: '' }, tag }) });
    const record = await client.send('POST', '/v1/forwarding/requests', body, tag);
    outcomes.set(tag, { record, at: Date.now() });
  });
  await sleep(400);
  const backAt = await inject(stack, fault);
  await Promise.all(forwards);

  const rows = await stack.query<{ id: string; status: string; error_code: string | null; body: string }>(
    `SELECT id, status, error_code, request_details->>'body' AS body FROM forwarding_requests WHERE account_id = $1`,
    [accountId],
  );
  const byTag = new Map<string, typeof rows>();
  for (const row of rows) {
    const tag = String(JSON.parse(row.body).tag);
    byTag.set(tag, [...(byTag.get(tag) ?? []), row]);
  }
  let consistent = 0;
  let lost = 0;
  let ranTwice = 0;
  let failedButReceived = 0;
  let unknown = 0;
  let unknownReceived = 0;
  const problems: string[] = [];
  for (const [tag, { record }] of outcomes) {
    const [row, ...more] = byTag.get(tag) ?? [];
    const received = destination.arrivals.get(tag) ?? 0;
    ranTwice += more.length + Math.max(0, received - 1);
    const code = record.body?.error?.code as string | undefined;
    // Answered as not sent (or never connected), yet the destination has it: a caller would send again.
    const saysNotSent = code === 'forwarding_api_retryable_upstream_error' || code === 'forwarding_api_upstream_connection_error';
    if (!record.ok && saysNotSent && received > 0) failedButReceived++;
    if (!record.ok && code === 'forwarding_api_upstream_error') {
      unknown++;
      if (received > 0) unknownReceived++;
    }
    const agrees = record.ok ? row?.status === 'succeeded' && received === 1 : row?.status === 'failed' && code === row.error_code && !(saysNotSent && received > 0);
    if (agrees) consistent++;
    else if (record.ok) lost++;
    else if (problems.length < 3) problems.push(`forward ${tag}: ${record.tries.join(' → ')} ${JSON.stringify(record.body).slice(0, 200)}; record ${row?.status ?? 'none'}, received ${received}`);
  }
  const finished = rows.filter((r) => r.status === 'succeeded' || r.status === 'failed').length;
  const interrupted = [...outcomes.values()].filter((o) => o.record.startedAt <= backAt);
  const totals = client.totals();
  const figures: Figures = {
    scenario: `${fault} while forwards wait`,
    writes: n,
    writesOk: consistent,
    events: 0,
    delivered: receivers.map(() => 0),
    ranTwice,
    lost,
    fiveXx: totals.fiveXx,
    unrecovered: n - consistent,
    badSignatures: 0,
    pipeline: { finished, total: rows.length },
    recoveryMs: 0,
    recovery: { workMs: 0, deliveriesMs: 0 },
    apiUp: true,
    workerUp: true,
    crashes: [],
    problems,
  };
  const succeeded = [...outcomes.values()].filter((o) => o.record.ok).length;
  // Answered `forwarding_api_retryable_upstream_error`: no worker took it before its pickup deadline, nothing sent.
  const notSent = [...outcomes.values()].filter((o) => !o.record.ok && o.record.body?.error?.code === 'forwarding_api_retryable_upstream_error').length;
  figures.forwarded = { succeeded, failed: consistent - succeeded - unknown, unknown, unknownReceived, failedButReceived, notSent };
  // Only a worker that dies mid-call takes an answer with it: any other fault must leave none unknown.
  if (fault !== 'worker-kill' && unknown > 0) figures.problems.push(`${unknown} forwards were answered "may have been received" though their worker lived (${unknownReceived} received)`);
  if (rows.length < n) figures.problems.push(`${n - rows.length} forwards have no record`);
  setRecovery(figures, backAt, Math.max(backAt, ...interrupted.map((o) => o.at)), backAt);
  Object.assign(figures, processFigures(stack, started));
  await destination.close();
  await finish(client, receivers);
  return judge(figures, options.recoveryBarMs ?? RECOVERY_BAR_MS);
}

/** Frozen times of the billing pipeline: 15 Jan 2027, and two months on. */
const CLOCK_START = Date.UTC(2027, 0, 15, 9) / 1000;
const CLOCK_TARGET = Date.UTC(2027, 2, 15, 9) / 1000;

/** A setup request's body; a failed one stops the scenario with what it answered. */
const ok = (what: string, res: { ok: boolean; body?: unknown }): any => {
  if (!res.ok) throw new Error(`${what} failed: ${JSON.stringify(res.body)}`);
  return res.body;
};

/**
 * `count` test clocks, each with a customer paying a monthly subscription, each advancing two
 * months; with `declining`, the customer's default card declines from the first renewal on.
 */
async function advancingClocks(client: ApiClient, count: number, declining = false): Promise<{ ids: string[]; target: number }> {
  const price = ok('a price', await client.send('POST', '/v1/prices', form({ 'product_data[name]': 'Monthly', currency: 'usd', unit_amount: '1000', 'recurring[interval]': 'month' })));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const clock = ok('a test clock', await client.send('POST', '/v1/test_helpers/test_clocks', form({ frozen_time: String(CLOCK_START) })));
    const customer = ok('a customer', await client.send('POST', '/v1/customers', form({ test_clock: clock.id, payment_method: 'pm_card_visa' })));
    const pm = ok('its cards', await client.send('GET', `/v1/payment_methods?customer=${customer.id}`)).data[0].id;
    ok('its default card', await client.send('POST', `/v1/customers/${customer.id}`, form({ 'invoice_settings[default_payment_method]': pm })));
    ok('a subscription', await client.send('POST', '/v1/subscriptions', form({ customer: customer.id, 'items[0][price]': price.id })));
    if (declining) {
      const card = ok('a declining card', await client.send('POST', '/v1/payment_methods/pm_card_chargeCustomerFail/attach', form({ customer: customer.id })));
      ok('its declining default card', await client.send('POST', `/v1/customers/${customer.id}`, form({ 'invoice_settings[default_payment_method]': card.id })));
    }
    ids.push(clock.id);
  }
  for (const id of ids) ok('an advance', await client.send('POST', `/v1/test_helpers/test_clocks/${id}/advance`, form({ frozen_time: String(CLOCK_TARGET) })));
  return { ids, target: CLOCK_TARGET };
}

/**
 * `count` test clocks, each with four drafts of a customer on it with `auto_advance` (finalized an
 * hour after they were made), each advancing two hours: each draft is finalized once.
 */
async function autoAdvancingDrafts(client: ApiClient, count: number): Promise<{ ids: string[]; clocks: string[]; target: number }> {
  const target = CLOCK_START + 2 * 3600;
  const ids: string[] = [];
  const clocks: string[] = [];
  for (let i = 0; i < count; i++) {
    const clock = ok('a test clock', await client.send('POST', '/v1/test_helpers/test_clocks', form({ frozen_time: String(CLOCK_START) })));
    const customer = ok('a customer', await client.send('POST', '/v1/customers', form({ test_clock: clock.id })));
    for (let j = 0; j < 4; j++) {
      const draft = ok('an auto-advancing draft', await client.send('POST', '/v1/invoices', form({ customer: customer.id, auto_advance: 'true', collection_method: 'send_invoice', days_until_due: '30' })));
      ok('its item', await client.send('POST', '/v1/invoiceitems', form({ customer: customer.id, invoice: draft.id, amount: '500', currency: 'usd' })));
      ids.push(draft.id);
    }
    clocks.push(clock.id);
  }
  for (const id of clocks) ok('an advance', await client.send('POST', `/v1/test_helpers/test_clocks/${id}/advance`, form({ frozen_time: String(target) })));
  return { ids, clocks, target };
}

/**
 * `count` real-clock drafts with `auto_advance`, their finalization brought forward (by SQL) to a
 * few seconds from now: their own jobs wait the hour they were made for, so each is finalized by the
 * job the reconciler adds once it is due, once.
 */
async function realClockDrafts(stack: Stack, client: ApiClient, count: number): Promise<string[]> {
  const customer = ok('a customer', await client.send('POST', '/v1/customers', form({ name: 'Drafted' })));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const draft = ok('an auto-advancing draft', await client.send('POST', '/v1/invoices', form({ customer: customer.id, auto_advance: 'true', collection_method: 'send_invoice', days_until_due: '30' })));
    ok('its item', await client.send('POST', '/v1/invoiceitems', form({ customer: customer.id, invoice: draft.id, amount: '500', currency: 'usd' })));
    ids.push(draft.id);
  }
  await stack.query(`UPDATE invoice_details SET finalize_at = $2 WHERE invoice_id = ANY($1)`, [ids, Math.floor(Date.now() / 1000) + 3]);
  return ids;
}

/**
 * `count` real-clock subscriptions of the retry platform (RETRY_PLATFORM, a key of its own) whose
 * first invoice declines: each is retried twice, a few seconds apart, around the fault; answers
 * the invoices.
 */
async function realClockDunning(stack: Stack, count: number): Promise<string[]> {
  const key = `sk_test_faults${randomBytes(12).toString('hex')}`;
  await stack.query(`INSERT INTO accounts (id, created) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [RETRY_PLATFORM, Math.floor(Date.now() / 1000)]);
  await stack.query(`INSERT INTO api_keys (key_hash, hint, account_id, origin) VALUES ($1, 'sk_test_…', $2, 'open')`, [hashKey(key), RETRY_PLATFORM]);
  const client = new ApiClient(stack.apiUrl, key);
  const price = ok('a price', await client.send('POST', '/v1/prices', form({ 'product_data[name]': 'Monthly', currency: 'usd', unit_amount: '1000', 'recurring[interval]': 'month' })));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const customer = ok('a customer', await client.send('POST', '/v1/customers', form({ name: 'Dunned' })));
    const card = ok('a declining card', await client.send('POST', '/v1/payment_methods/pm_card_chargeCustomerFail/attach', form({ customer: customer.id })));
    ok('its default card', await client.send('POST', `/v1/customers/${customer.id}`, form({ 'invoice_settings[default_payment_method]': card.id })));
    const sub = ok('a subscription', await client.send('POST', '/v1/subscriptions', form({ customer: customer.id, 'items[0][price]': price.id })));
    if (sub.status !== 'incomplete') throw new Error(`a declined first invoice left its subscription ${sub.status}`);
    ids.push(sub.latest_invoice);
  }
  await client.close();
  return ids;
}

/** `count` open `send_invoice` invoices due a few seconds from now: each gets one `invoice.overdue`. */
async function overdueInvoices(client: ApiClient, count: number): Promise<string[]> {
  const customer = ok('a customer', await client.send('POST', '/v1/customers', form({ name: 'Overdue' })));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    // Each its own: on a busy machine making them all takes longer than 3 s.
    const dueDate = Math.floor(Date.now() / 1000) + 3;
    const draft = ok('a send_invoice draft', await client.send('POST', '/v1/invoices', form({ customer: customer.id, collection_method: 'send_invoice', due_date: String(dueDate) })));
    ok('its item', await client.send('POST', '/v1/invoiceitems', form({ customer: customer.id, invoice: draft.id, amount: '500', currency: 'usd' })));
    ok('its finalization', await client.send('POST', `/v1/invoices/${draft.id}/finalize`));
    ids.push(draft.id);
  }
  return ids;
}

export async function finish(client: ApiClient, receivers: Receiver[]): Promise<void> {
  await client.close();
  await Promise.all(receivers.map((r) => r.close()));
}

export function judge(f: Figures, recoveryBarMs: number): Figures {
  const problems = [...f.problems];
  if (f.writesOk < f.writes) problems.push(`${f.writes - f.writesOk} writes never succeeded`);
  f.delivered.forEach((d, i) => d < f.events && problems.push(`endpoint ${i + 1} is missing ${f.events - d} events`));
  if (f.ranTwice > 0) problems.push(`${f.ranTwice} writes ran twice`);
  if (f.lost > 0) problems.push(`${f.lost} answered writes are not in the database`);
  if (f.badSignatures > 0) problems.push(`${f.badSignatures} deliveries had a bad signature`);
  if (f.duplicates && f.duplicates.unlogged > 0) problems.push(`${f.duplicates.unlogged} deliveries arrived that the attempt log doesn't show`);
  if (f.forwarded && f.forwarded.failedButReceived > 0) problems.push(`${f.forwarded.failedButReceived} forwards were answered as not sent, but the destination got them`);
  if (f.pipeline && f.pipeline.finished < f.pipeline.total) problems.push(`${f.pipeline.total - f.pipeline.finished} pipeline steps stayed stuck`);
  if (!(f.recoveryMs <= recoveryBarMs)) problems.push(`recovery took ${seconds(f.recoveryMs)}`);
  if (!f.apiUp || !f.workerUp) problems.push(`down at the end: ${[!f.apiUp && 'api', !f.workerUp && 'worker'].filter(Boolean).join(', ')}`);
  problems.push(...f.crashes);
  return { ...f, problems };
}

export const scenarioNames = (): string[] => [
  ...BURST_FAULTS.map((f) => `burst:${f}`),
  ...PIPELINE_FAULTS.map((f) => `pipeline:${f}`),
  ...FORWARDING_FAULTS.map((f) => `forwarding:${f}`),
  'request-log:budget',
  ...RESTART_FAULTS.map((f) => `restart:${f}`),
];

const SCENARIOS = {
  burst: burstScenario,
  pipeline: pipelineScenario,
  forwarding: forwardingScenario,
  'request-log': requestLogScenario,
  restart: (...a: Parameters<typeof restartScenario>) => restartScenario(...a),
} as const;

/** Runs the scenarios on one stack; returns their figures. */
export async function runSuite(options: Options): Promise<Figures[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const wanted = scenarioNames().filter((s) => !options.only?.length || options.only.includes(s));
  const stack = await Stack.start(log, { built: options.built });
  // Spinning node processes at the lowest priority they may take less from the stack than its own load would; at the default they compete as other work does.
  const burners = Array.from({ length: Math.round((options.cpuLoad ?? 0) * cpus().length) }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  if (burners.length > 0) log(`running ${burners.length} busy processes beside the stack (--load=${options.cpuLoad})`);
  const results: Figures[] = [];
  let failed = false;
  try {
    for (const name of wanted) {
      const [kind, fault] = name.split(':') as [keyof typeof SCENARIOS, FaultName];
      log(`running ${name} …`);
      const loadAtStart = loadavg()[0];
      const figures = await SCENARIOS[kind](stack, fault as never, options);
      figures.load = { start: loadAtStart, end: loadavg()[0] };
      log(formatFigures(figures));
      results.push(figures);
      if (figures.problems.length > 0) failed = true;
    }
  } finally {
    // A failed run keeps its logs for reading.
    const keep = failed || options.keepLogs === true;
    for (const burner of burners) burner.kill('SIGKILL');
    await stack.stop(keep);
    if (keep) log(`logs kept in ${stack.root.root}`);
  }
  return results;
}

const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'never');

export function formatFigures(f: Figures): string {
  if (f.summary !== undefined) return [`${f.scenario}:`, f.summary, f.problems.length > 0 ? `FAILED: ${f.problems.join('; ')}` : 'ok'].join(' · ');
  const parts = [
    `${f.scenario}:`,
    `writes ${f.writesOk}/${f.writes}`,
    `events ${f.events}`,
    `delivered ${f.delivered.join(' + ')}`,
    f.pipeline ? `pipeline ${f.pipeline.finished}/${f.pipeline.total}` : '',
    f.restart ? formatRestart(f.restart) : '',
    f.forwarded
      ? `forwards ${f.forwarded.succeeded} succeeded + ${f.forwarded.failed} failed as recorded + ${f.forwarded.unknown} may have been received (${f.forwarded.unknownReceived} were), ${f.forwarded.notSent} answered failed without being sent, ${f.forwarded.failedButReceived} answered not sent but received`
      : '',
    f.duplicates ? `duplicates ${f.duplicates.perEndpoint.join(' + ')} (${f.duplicates.unlogged} not in the log)` : '',
    `ran twice ${f.ranTwice}`,
    `lost ${f.lost}`,
    `5xx ${f.fiveXx} (unrecovered ${f.unrecovered})`,
    `recovered in ${seconds(f.recoveryMs)} (${f.pipeline ? 'steps' : 'writes'} ${seconds(f.recovery.workMs)}, deliveries ${seconds(f.recovery.deliveriesMs)})`,
    `api ${f.apiUp ? 'up' : 'DOWN'}, worker ${f.workerUp ? 'up' : 'DOWN'}`,
    f.logLines ? `log lines ${f.logLines.warn} warn + ${f.logLines.error} error + ${f.logLines.other} other` : '',
    f.load ? `load ${f.load.start.toFixed(1)} → ${f.load.end.toFixed(1)} (${cpus().length} cores)` : '',
    f.problems.length > 0 ? `FAILED: ${f.problems.join('; ')}` : 'ok',
  ];
  return parts.filter(Boolean).join(' · ');
}
