import { Prisma } from '../../../generated/prisma/client';
import type { Config } from '../../../config';
import type { Clock } from '../../../lib/clock';
import type { PrismaClient } from '../../../lib/prisma';
import type { JobAdder, JobSpec } from '../../../lib/queue';
import { unixSeconds } from '../../../lib/clock';
import { newId } from '../../../lib/ids';
import { accountApiVersion, automaticCause, emit, type EventCause, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import type { JobWorker, Reconcile, Schedule } from '../../../kernel/route';
import { EXPIRED_LINK_RETENTION_SECONDS } from '../../../hosted/prune';
import { balanceOf, initialHistory, laterTransactions, ownersOf, seedOf, settlementOf } from './feed';
import { CURRENCY, templateOf } from './institutions';
import { deactivationJobId, financialConnectionsQueue, refreshJobId, subscriptionJobId, type FinancialConnectionsJob } from './jobs';
import { serializeAccount, type AccountRow, type Feature, type RefreshState } from './serializer';

// The asynchronous half of linked accounts: refreshes finishing after FC_REFRESH_DELAY_MS,
// subscribed accounts' scheduled transaction refreshes every FC_SUBSCRIPTION_INTERVAL_MS, and
// Inactive Accounts going inactive. Each step is one transaction guarded by the row's state and
// due time, so running it twice, late or early does nothing more; the reconciler re-adds what
// the database says is due when Redis lost its jobs.

export interface PipelineDeps {
  readonly prisma: PrismaClient;
  readonly clock: Clock;
  readonly config: Pick<Config, 'defaultApiVersion' | 'fcRefreshDelayMs' | 'fcRefreshCooldownSeconds' | 'fcSubscriptionIntervalMs' | 'fcDeactivationDelayMs'>;
}

export type FcJob = JobSpec<FinancialConnectionsJob>;

/** What a change leaves for after its commit: events to hand to fan-out, jobs to queue. */
export interface AfterCommit {
  readonly eventIds: string[];
  readonly jobs: FcJob[];
}

export const nothingAfter = (): AfterCommit => ({ eventIds: [], jobs: [] });

export async function runAfterCommit(queues: JobAdder, after: AfterCommit): Promise<void> {
  if (after.eventIds.length > 0) await handOffEvents(queues, after.eventIds);
  if (after.jobs.length > 0) await queues.add(financialConnectionsQueue, after.jobs);
}

const BATCH = 500;

type AccountChange = 'created' | 'deactivated' | 'reactivated' | 'disconnected' | 'refreshed_balance' | 'refreshed_ownership' | 'refreshed_transactions';

/** `apiVersion`: the caller's default within a request, or looked up from the account in a worker. */
export async function emitAccountEvent(tx: Tx, row: AccountRow, change: AccountChange, created: number, cause: EventCause, apiVersion: string | { fallback: string }): Promise<string> {
  return emit(tx, `financial_connections.account.${change}`, serializeAccount(row), {
    accountId: row.accountId,
    apiVersion: typeof apiVersion === 'string' ? apiVersion : await accountApiVersion(tx, row.accountId, apiVersion.fallback),
    created,
    cause,
  });
}

/** Locks the linked account for the rest of the transaction; null when the condition fails. */
export async function lockAccount(tx: Tx, where: Prisma.Sql): Promise<AccountRow | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM financial_connections_accounts WHERE ${where} FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.financialConnectionsAccount.findUnique({ where: { id: rows[0].id } });
}

const STATE_FIELD = { balance: 'balanceRefresh', ownership: 'ownershipRefresh', transactions: 'transactionRefresh' } as const satisfies Record<Feature, keyof AccountRow>;

export const refreshStateOf = (row: AccountRow, feature: Feature): RefreshState | null => row[STATE_FIELD[feature]] as RefreshState | null;

/** Why a refresh asked for now would not start: one is running, or the last is too recent. */
export function refreshBlocked(row: AccountRow, feature: Feature, now: number): boolean {
  const state = refreshStateOf(row, feature);
  if (!state) return false;
  return state.status === 'pending' || (state.next_refresh_available_at !== null && state.next_refresh_available_at > now);
}

/**
 * Starts a refresh of one feature (the account must be locked and active): a pending refresh row
 * due in FC_REFRESH_DELAY_MS, and the account's refresh state `pending`. Answers the updated row
 * and the job that finishes it, or nothing when the not-before rule (or a running refresh) holds
 * it back; `scheduled` refreshes (subscriptions) skip the not-before rule, not a running refresh.
 */
export async function startRefresh(tx: Tx, deps: PipelineDeps, row: AccountRow, feature: Feature, options: { scheduled?: boolean } = {}): Promise<{ row: AccountRow; job?: FcJob }> {
  const now = unixSeconds(deps.clock);
  const state = refreshStateOf(row, feature);
  if (state?.status === 'pending' || (!options.scheduled && refreshBlocked(row, feature, now))) return { row };
  const id = newId(feature === 'transactions' ? 'fctxnref' : 'fcref');
  const delayMs = deps.config.fcRefreshDelayMs;
  await tx.financialConnectionsRefresh.create({
    data: { id, accountId: row.accountId, fcAccountId: row.id, feature, status: 'pending', requestedAt: now, dueAt: new Date(deps.clock.nowMs() + delayMs) },
    select: { id: true },
  });
  const pending: RefreshState = { ...(feature === 'transactions' ? { id } : {}), status: 'pending', last_attempted_at: now, next_refresh_available_at: null };
  const updated = await tx.financialConnectionsAccount.update({ where: { id: row.id }, data: { [STATE_FIELD[feature]]: pending as object } });
  return { row: updated, job: { id: refreshJobId(id), data: { step: 'refresh', id }, delayMs } };
}

/** Writes what a successful refresh of `feature` found; answers the account's changes. */
async function applyRefresh(tx: Tx, row: AccountRow, refresh: { id: string; seq: bigint; feature: string }, now: number): Promise<Prisma.FinancialConnectionsAccountUpdateInput> {
  const seed = seedOf(row.institution, row.template);
  const { account: template } = templateOf(row.institution, row.template);
  if (refresh.feature === 'balance') {
    const step = row.balanceRefreshes + 1;
    return { balance: balanceOf(seed, template, step, now) as Prisma.InputJsonValue, balanceRefreshes: step };
  }
  if (refresh.feature === 'ownership') {
    const ownershipId = newId('fcaowns');
    await tx.financialConnectionsOwnership.create({ data: { id: ownershipId, accountId: row.accountId, fcAccountId: row.id, created: now }, select: { id: true } });
    const owners = ownersOf(seed, template);
    if (owners.length > 0) {
      await tx.financialConnectionsOwner.createMany({
        data: owners.map((o) => ({ id: newId('fcaown'), accountId: row.accountId, ownershipId, name: o.name, email: o.email, phone: o.phone, rawAddress: o.raw_address, refreshedAt: now })),
      });
    }
    return { ownershipId };
  }
  const step = row.transactionRefreshes + 1;
  const stamp = { transactionRefresh: refresh.id, refreshSeq: refresh.seq, updated: now };
  let fresh;
  if (step === 1) {
    fresh = initialHistory(seed, template, now);
  } else {
    const last = await tx.financialConnectionsTransaction.aggregate({ where: { fcAccountId: row.id }, _max: { ordinal: true, transactedAt: true } });
    fresh = laterTransactions(seed, template, step, (last._max.ordinal ?? -1) + 1, last._max.transactedAt ?? now, now);
    // Pending transactions settle as the bank reports them: most post, a few are voided.
    const pending = await tx.financialConnectionsTransaction.findMany({ where: { fcAccountId: row.id, status: 'pending' }, select: { id: true, ordinal: true } });
    for (const t of pending) {
      const outcome = settlementOf(seed, step, t.ordinal);
      if (!outcome) continue;
      await tx.financialConnectionsTransaction.update({
        where: { id: t.id },
        data: { ...stamp, status: outcome, postedAt: outcome === 'posted' ? now : null, voidAt: outcome === 'void' ? now : null },
        select: { id: true },
      });
    }
  }
  await tx.financialConnectionsTransaction.createMany({
    data: fresh.map((t) => ({
      id: newId('fctxn'),
      accountId: row.accountId,
      fcAccountId: row.id,
      ordinal: t.ordinal,
      amount: t.amount,
      currency: CURRENCY,
      description: t.description,
      status: t.status,
      postedAt: t.postedAt,
      voidAt: t.voidAt,
      transactedAt: t.transactedAt,
      ...stamp,
    })),
  });
  return { transactionRefreshes: step };
}

const EVENT_OF: Record<Feature, AccountChange> = { balance: 'refreshed_balance', ownership: 'refreshed_ownership', transactions: 'refreshed_transactions' };

/**
 * Finishes a pending refresh: `succeeded` with the data updated on an active account, `failed`
 * on one that went inactive or was disconnected meanwhile; `refreshed_*` is emitted either way.
 */
export async function finishRefresh(deps: PipelineDeps, refreshId: string): Promise<string[]> {
  return deps.prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ fc_account_id: string }[]>`
      SELECT fc_account_id FROM financial_connections_refreshes WHERE id = ${refreshId} AND status = 'pending' FOR UPDATE`;
    if (locked.length === 0) return [];
    const row = await lockAccount(tx, Prisma.sql`id = ${locked[0].fc_account_id}`);
    const refresh = await tx.financialConnectionsRefresh.findUnique({ where: { id: refreshId } });
    if (!row || !refresh) return [];
    const feature = refresh.feature as Feature;
    const now = unixSeconds(deps.clock);
    const succeeded = row.status === 'active';
    const changes = succeeded ? await applyRefresh(tx, row, refresh, now) : {};
    const state: RefreshState = {
      ...(feature === 'transactions' ? { id: refresh.id } : {}),
      status: succeeded ? 'succeeded' : 'failed',
      last_attempted_at: refresh.requestedAt,
      next_refresh_available_at: succeeded ? now + deps.config.fcRefreshCooldownSeconds : null,
    };
    await tx.financialConnectionsRefresh.update({ where: { id: refresh.id }, data: { status: state.status, dueAt: null, finishedAt: now }, select: { id: true } });
    // A later refresh of the same feature can't have started meanwhile (one runs at a time), so this one's state is the account's.
    const updated = await tx.financialConnectionsAccount.update({ where: { id: row.id }, data: { ...changes, [STATE_FIELD[feature]]: state as object } });
    return [await emitAccountEvent(tx, updated, EVENT_OF[feature], now, automaticCause, { fallback: deps.config.defaultApiVersion })];
  });
}

/** When a subscribed account is next due, from now. */
export const nextSubscriptionDue = (deps: PipelineDeps): Date => new Date(deps.clock.nowMs() + deps.config.fcSubscriptionIntervalMs);

export const subscriptionJob = (accountId: string, dueAt: Date, nowMs: number): FcJob => ({
  id: subscriptionJobId(accountId, dueAt),
  data: { step: 'subscription', id: accountId },
  delayMs: Math.max(0, dueAt.getTime() - nowMs),
});

/**
 * A subscribed account's scheduled refresh: when it is due (by the database), start a
 * transaction refresh and set the next due time; queue both once committed.
 */
export async function runSubscription(deps: PipelineDeps & { queues: JobAdder }, accountId: string): Promise<string[]> {
  const after = await deps.prisma.$transaction(async (tx) => {
    const row = await lockAccount(
      tx,
      Prisma.sql`id = ${accountId} AND status = 'active' AND 'transactions' = ANY(subscriptions) AND subscription_due_at <= ${new Date(deps.clock.nowMs())}`,
    );
    if (!row) return nothingAfter();
    const { job } = await startRefresh(tx, deps, row, 'transactions', { scheduled: true });
    const dueAt = nextSubscriptionDue(deps);
    await tx.financialConnectionsAccount.update({ where: { id: row.id }, data: { subscriptionDueAt: dueAt }, select: { id: true } });
    return { eventIds: [], jobs: [...(job ? [job] : []), subscriptionJob(row.id, dueAt, deps.clock.nowMs())] };
  });
  await runAfterCommit(deps.queues, after);
  return after.eventIds;
}

/** An Inactive Accounts account goes inactive once its deactivation is due. */
export async function deactivateAccount(deps: PipelineDeps, accountId: string): Promise<string[]> {
  return deps.prisma.$transaction(async (tx) => {
    const row = await lockAccount(tx, Prisma.sql`id = ${accountId} AND status = 'active' AND deactivate_at <= ${new Date(deps.clock.nowMs())}`);
    if (!row) return [];
    const updated = await tx.financialConnectionsAccount.update({
      where: { id: row.id },
      data: { status: 'inactive', deactivateAt: null, subscriptionDueAt: null },
    });
    return [await emitAccountEvent(tx, updated, 'deactivated', unixSeconds(deps.clock), automaticCause, { fallback: deps.config.defaultApiVersion })];
  });
}

/** Every due step the database holds; `jobOf` makes its job. Keyset pages, so a big backlog is read in parts. */
async function reAdd<Row extends { id: string }>(
  queues: JobAdder,
  page: (afterId: string) => Promise<Row[]>,
  jobOf: (row: Row) => FcJob,
): Promise<number> {
  let count = 0;
  let afterId = '';
  for (;;) {
    const rows = await page(afterId);
    if (rows.length === 0) break;
    await queues.add(financialConnectionsQueue, rows.map(jobOf));
    count += rows.length;
    afterId = rows[rows.length - 1].id;
    if (rows.length < BATCH) break;
  }
  return count;
}

export const reconcileFinancialConnectionsJobs: Reconcile = async ({ prisma, queues }, nowMs) => {
  const now = new Date(nowMs);
  const page = { orderBy: { id: 'asc' as const }, take: BATCH };
  const refreshes = await reAdd(
    queues,
    (afterId) => prisma.financialConnectionsRefresh.findMany({ ...page, where: { status: 'pending', dueAt: { lte: now }, id: { gt: afterId } }, select: { id: true } }),
    (r) => ({ id: refreshJobId(r.id), data: { step: 'refresh', id: r.id } }),
  );
  const subscriptions = await reAdd(
    queues,
    (afterId) =>
      prisma.financialConnectionsAccount.findMany({ ...page, where: { status: 'active', subscriptionDueAt: { lte: now }, id: { gt: afterId } }, select: { id: true, subscriptionDueAt: true } }),
    (a) => subscriptionJob(a.id, a.subscriptionDueAt!, nowMs),
  );
  const deactivations = await reAdd(
    queues,
    (afterId) => prisma.financialConnectionsAccount.findMany({ ...page, where: { status: 'active', deactivateAt: { lte: now }, id: { gt: afterId } }, select: { id: true, links: true } }),
    (a) => ({ id: deactivationJobId(a.id, a.links), data: { step: 'deactivate', id: a.id } }),
  );
  return { fcRefreshes: refreshes, fcSubscriptions: subscriptions, fcDeactivations: deactivations };
};

/** Runs one step; each re-reads its row and does nothing when nothing is due. */
export const financialConnectionsWorker: JobWorker<FinancialConnectionsJob> = {
  queue: financialConnectionsQueue,
  run: (deps, job) => {
    if (job.step === 'refresh') return finishRefresh(deps, job.id);
    if (job.step === 'subscription') return runSubscription(deps, job.id);
    return deactivateAccount(deps, job.id);
  },
  failure: 'financial connections step failed',
  describe: (job) => ({ step: job.step, id: job.id }),
};

/** Hosted-flow links expired over a week ago (they still say "expired" until then). */
export const fcLinkPrune: Schedule = {
  name: 'prune-fc-links',
  everyMs: (config) => config.maintenanceIntervalMs,
  run: async ({ prisma }, now) => ({
    fcLinks: (await prisma.financialConnectionsLink.deleteMany({ where: { expiresAt: { lt: now - EXPIRED_LINK_RETENTION_SECONDS } } })).count,
  }),
};
