import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginate } from '../../../kernel/list';
import type { Deps, RequestContext } from '../../../kernel/route';
import { accountApiVersion, emit, requestEventOptions, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { addInterval } from '../invoices/amounts';
import { scheduleBilling, testClockJob } from '../subscriptions/jobs';
import { stepSubscription } from '../subscriptions/renewals';
import { systemScope } from '../invoices/billing';
import { finalizeDueDraft, nextDueDraftOnClock } from '../invoices/pipeline';
import { nextDueRetryOnClock } from '../invoices/queries';
import { nextOverdueOnClock, sendDueOverdue } from '../invoices/overdue';
import { retryDueInvoice } from '../subscriptions/dunning';
import { emitIn } from '../invoices/billing';
import { serializeDeletedTestClock, serializeTestClock, type TestClockRow } from './serializer';

const NAME = 'test clock';

/** A test clock is deleted 30 days after its creation, as the public API's are. */
const LIFETIME_SECONDS = 30 * 86_400;

/**
 * The latest frozen time: times are stored in 32-bit seconds (up to 2038-01-19T03:14:07Z) and a
 * clock's subscriptions bill up to three years (the longest billing period) past it. The public
 * API takes any time before that too, in the past (the Stripe CLI's fixtures use 2020) or ahead.
 */
export const MAX_FROZEN_TIME = 2_147_483_647 - 3 * 366 * 86_400;

/** With no subscription on the clock, the public API advances it at most two years at once. */
const NO_SUBSCRIPTION_YEARS = 2;

const strip = <T extends { seq: bigint; accountId: string }>({ seq: _s, accountId: _a, ...row }: T) => row;

async function lockClock(tx: Tx, ctx: RequestContext, id: string): Promise<TestClockRow> {
  if (!hasIdShape('clock', id)) throw resourceMissing(NAME, id);
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM test_clocks WHERE id = ${id} AND account_id = ${ctx.caller.accountId} AND NOT deleted FOR UPDATE`;
  if (rows.length === 0) throw resourceMissing(NAME, id);
  return strip(await tx.testClock.findUniqueOrThrow({ where: { id } }));
}

function checkFrozenTime(value: number): void {
  if (value < 0) throw invalidRequest('Invalid timestamp: `frozen_time` must be a Unix timestamp (seconds since 1970-01-01T00:00:00Z), not negative.', 'parameter_invalid', 'frozen_time');
  if (value > MAX_FROZEN_TIME) {
    throw invalidRequest(
      `\`frozen_time\` must be at most ${MAX_FROZEN_TIME} (${new Date(MAX_FROZEN_TIME * 1000).toISOString()}): the sandbox stores times up to 2038-01-19, and a clock's subscriptions bill up to three years past it.`,
      'parameter_invalid',
      'frozen_time',
    );
  }
}

export async function createTestClock(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  checkFrozenTime(params.frozen_time);
  const { row, eventId } = await deps.prisma.$transaction(async (tx) => {
    const row: TestClockRow = {
      id: newId('clock'),
      created: now,
      name: params.name ?? null,
      frozenTime: params.frozen_time,
      status: 'ready',
      targetFrozenTime: null,
      deletesAfter: now + LIFETIME_SECONDS,
      deleted: false,
    };
    await tx.testClock.create({ data: { ...row, accountId: ctx.caller.accountId }, select: { id: true } });
    return { row, eventId: await emit(tx, 'test_helpers.test_clock.created', serializeTestClock(row), requestEventOptions(ctx, now)) };
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeTestClock(row);
}

export async function retrieveTestClock(ctx: RequestContext) {
  const id = ctx.pathParams.test_clock;
  const row = hasIdShape('clock', id) ? await ctx.deps.prisma.testClock.findFirst({ where: { id, accountId: ctx.caller.accountId, deleted: false } }) : null;
  if (!row) throw resourceMissing(NAME, id);
  return serializeTestClock(strip(row));
}

/** The public object of one of the caller's clocks (for expansion), or null. */
export async function retrieveTestClockObject(ctx: RequestContext, id: string) {
  const row = await ctx.deps.prisma.testClock.findFirst({ where: { id, accountId: ctx.caller.accountId, deleted: false } });
  return row ? serializeTestClock(strip(row)) : null;
}

export async function listTestClocks(ctx: RequestContext) {
  return paginate<TestClockRow & { seq: bigint }>({
    params: ctx.params,
    url: '/v1/test_helpers/test_clocks',
    where: { accountId: ctx.caller.accountId, deleted: false },
    model: ctx.deps.prisma.testClock as any,
    objectName: NAME,
    serialize: serializeTestClock,
  });
}

/** Deletes a clock and what lives on it: its customers, and their subscriptions end (no events of theirs). */
export async function deleteTestClock(ctx: RequestContext) {
  const { deps } = ctx;
  const id = ctx.pathParams.test_clock;
  const now = unixSeconds(deps.clock);
  const eventId = await deps.prisma.$transaction(async (tx) => {
    const row = await lockClock(tx, ctx, id);
    await tx.testClock.update({ where: { id }, data: { deleted: true }, select: { id: true } });
    await tx.subscription.updateMany({ where: { testClockId: id, status: { notIn: ['canceled', 'incomplete_expired'] } }, data: { status: 'canceled', endedAt: row.frozenTime, canceledAt: row.frozenTime, nextActionAt: null } });
    await tx.customer.updateMany({ where: { testClockId: id }, data: { deleted: true } });
    return emit(tx, 'test_helpers.test_clock.deleted', serializeTestClock(row), requestEventOptions(ctx, now));
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeDeletedTestClock(id);
}

/**
 * `advance`: the clock goes `advancing` towards `frozen_time`, and the worker moves it there
 * renewal by renewal. As the public API limits it: after the current frozen time, at most two
 * billing intervals of the clock's shortest live subscription ahead, or two years without one.
 */
export async function advanceTestClock(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.test_clock;
  const now = unixSeconds(deps.clock);
  const target: number = params.frozen_time;
  const result = await deps.prisma.$transaction(async (tx) => {
    const row = await lockClock(tx, ctx, id);
    if (row.status === 'advancing') throw invalidRequest('The test clock is already advancing; wait until it is ready.', 'test_clock_advancing');
    if (target <= row.frozenTime) {
      throw invalidRequest(`Cannot advance to ${target}: the new frozen_time must be after the current one (${row.frozenTime}).`, 'parameter_invalid', 'frozen_time');
    }
    checkFrozenTime(target);
    const subs = await tx.subscription.findMany({ where: { testClockId: id, status: { notIn: ['canceled', 'incomplete_expired'] } }, select: { interval: true, intervalCount: true } });
    const limit =
      subs.length === 0 ? addInterval(row.frozenTime, 'year', NO_SUBSCRIPTION_YEARS) : Math.min(...subs.map((s) => addInterval(row.frozenTime, s.interval, s.intervalCount, 2)));
    if (target > limit) {
      const shortest = subs.length === 0 ? null : subs.reduce((a, b) => (addInterval(0, a.interval, a.intervalCount) <= addInterval(0, b.interval, b.intervalCount) ? a : b));
      const what = shortest === null ? 'two years when it has no subscriptions' : `two intervals of its shortest subscription (${shortest.intervalCount} ${shortest.interval}${shortest.intervalCount === 1 ? '' : 's'})`;
      throw invalidRequest(
        `Cannot advance the test clock to ${target}: it can be advanced at most ${what} at once, to ${limit}. Advance it in steps.`,
        'parameter_invalid',
        'frozen_time',
      );
    }
    const advancing: TestClockRow = { ...row, status: 'advancing', targetFrozenTime: target };
    await tx.testClock.update({ where: { id }, data: { status: 'advancing', targetFrozenTime: target }, select: { id: true } });
    const eventId = await emit(tx, 'test_helpers.test_clock.advancing', serializeTestClock(advancing), requestEventOptions(ctx, now));
    return { clock: serializeTestClock(advancing), eventId };
  });
  await handOffEvents(deps.queues, [result.eventId]);
  await scheduleBilling(deps.queues, [testClockJob(id, target)]);
  return result.clock;
}

/** How many renewals one job runs before it hands the rest to a job of its own (bounded jobs). */
const STEPS_PER_JOB = 500;

/**
 * Subscriptions due at the same instant are independent: this many step at once, each in a
 * transaction of its own (the worker's pool holds 10 connections). A customer's run one at a time.
 */
const STEP_CONCURRENCY = 6;

type ClaimedStep = { kind: 'done' | 'one'; events: string[] } | { kind: 'batch'; at: number; subs: { id: string; customerId: string | null }[]; apiVersion: string };

/**
 * Moves an advancing clock to its target: each due action of its subscriptions, earliest first.
 * A claim transaction locks the clock, finds the earliest due action and moves the frozen time
 * there; a draft or retry runs in that transaction, while the subscriptions due at that same
 * instant then step concurrently, each locked and re-checked in a transaction of its own (so a
 * killed or repeated job resumes where the database says, and runs nothing twice); then `ready`.
 * Answers the events written.
 */
export async function runTestClockJob(deps: Deps, id: string): Promise<string[]> {
  const events: string[] = [];
  for (let steps = 0; steps < STEPS_PER_JOB; ) {
    const step = await deps.prisma.$transaction(async (tx): Promise<ClaimedStep | null> => {
      const locked = await tx.$queryRaw<TestClockRow[]>`
        SELECT id, created, name, frozen_time AS "frozenTime", status, target_frozen_time AS "targetFrozenTime",
               deletes_after AS "deletesAfter", deleted, account_id AS "accountId"
        FROM test_clocks WHERE id = ${id} AND status = 'advancing' AND NOT deleted FOR UPDATE`;
      if (locked.length === 0) return null;
      const { accountId, ...clock } = locked[0] as TestClockRow & { accountId: string };
      const target = clock.targetFrozenTime!;
      const due = await tx.subscription.findFirst({
        where: { testClockId: id, nextActionAt: { lte: target } },
        orderBy: [{ nextActionAt: 'asc' }, { id: 'asc' }],
        select: { id: true, nextActionAt: true },
      });
      // Invoices' payment retries and drafts' auto-advance come in time order with the subscriptions' actions.
      const retry = await nextDueRetryOnClock(tx, id, due?.nextActionAt ?? target);
      const draft = await nextDueDraftOnClock(tx, id, retry?.at ?? due?.nextActionAt ?? target);
      // Invoices' overdue step too, first at a tie.
      const overdue = await nextOverdueOnClock(tx, id, draft?.at ?? retry?.at ?? due?.nextActionAt ?? target);
      if (overdue) {
        const at = Math.max(clock.frozenTime, overdue.at);
        await tx.testClock.update({ where: { id }, data: { frozenTime: at }, select: { id: true } });
        return { kind: 'one', events: (await sendDueOverdue(tx, deps, overdue.id, at, at)) ?? [] };
      }
      if (draft) {
        const at = Math.max(clock.frozenTime, draft.at);
        await tx.testClock.update({ where: { id }, data: { frozenTime: at }, select: { id: true } });
        return { kind: 'one', events: (await finalizeDueDraft(tx, deps, draft.id, at, at)) ?? [] };
      }
      if (retry) {
        const at = Math.max(clock.frozenTime, retry.at);
        await tx.testClock.update({ where: { id }, data: { frozenTime: at }, select: { id: true } });
        return { kind: 'one', events: (await retryDueInvoice(tx, deps, retry.id, at, at)) ?? [] };
      }
      if (!due) {
        const ready: TestClockRow = { ...clock, frozenTime: target, status: 'ready', targetFrozenTime: null };
        await tx.testClock.update({ where: { id }, data: { frozenTime: target, status: 'ready', targetFrozenTime: null }, select: { id: true } });
        const scope = await systemScope(tx, deps, accountId, target);
        await emitIn(scope, 'test_helpers.test_clock.ready', serializeTestClock(ready));
        return { kind: 'done', events: scope.events };
      }
      // Every subscription due at this same instant (none earlier is left): they step after this commit.
      const dueAt = due.nextActionAt!;
      const subs = await tx.subscription.findMany({
        where: { testClockId: id, nextActionAt: dueAt },
        orderBy: { id: 'asc' },
        take: STEPS_PER_JOB - steps,
        select: { id: true, customerId: true },
      });
      const at = Math.max(clock.frozenTime, dueAt);
      if (at !== clock.frozenTime) await tx.testClock.update({ where: { id }, data: { frozenTime: at }, select: { id: true } });
      // The clock's account's version, read once for the batch's steps (all of this account).
      return { kind: 'batch', at: dueAt, subs, apiVersion: await accountApiVersion(tx, accountId, deps.config.defaultApiVersion) };
    });
    if (step === null) return events;
    if (step.kind !== 'batch') {
      events.push(...step.events);
      if (step.kind === 'done') return events;
      steps++;
      continue;
    }
    steps += step.subs.length;
    events.push(...(await stepConcurrently(deps, step.subs, step.at, step.apiVersion)));
  }
  // More to do: a job of its own (the job id names the step, so it is not the one running).
  const clock = await deps.prisma.testClock.findUnique({ where: { id }, select: { frozenTime: true, targetFrozenTime: true } });
  if (clock?.targetFrozenTime) await scheduleBilling(deps.queues, [{ ...testClockJob(id, clock.targetFrozenTime), id: `test_clock-${id}-${clock.targetFrozenTime}-${clock.frozenTime}` }]);
  return events;
}

/**
 * Steps the subscriptions due at `at`, STEP_CONCURRENCY at once, each in its own transaction
 * (stepSubscription locks the subscription and skips it unless still due by `at`). A customer's
 * subscriptions stay in one lane, in id order, so they never wait on each other's locks.
 * Answers the events in the subscriptions' order; the first failure is thrown once the lanes stop.
 */
async function stepConcurrently(deps: Deps, subs: { id: string; customerId: string | null }[], at: number, apiVersion: string): Promise<string[]> {
  const lanes = new Map<string, string[]>();
  for (const s of subs) {
    const key = s.customerId ?? s.id;
    const lane = lanes.get(key);
    if (lane) lane.push(s.id);
    else lanes.set(key, [s.id]);
  }
  const queue = [...lanes.values()];
  const written = new Map<string, string[]>();
  let failure: unknown = null;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(STEP_CONCURRENCY, queue.length) }, async () => {
      while (failure === null && next < queue.length) {
        for (const subId of queue[next++]) {
          try {
            written.set(subId, (await deps.prisma.$transaction((tx) => stepSubscription(tx, deps, subId, at, apiVersion))) ?? []);
          } catch (err) {
            failure ??= err;
            break;
          }
        }
      }
    }),
  );
  // As a failed step always did, a failure fails the job: the outbox relay still delivers what committed.
  if (failure !== null) throw failure;
  return subs.flatMap((s) => written.get(s.id) ?? []);
}
