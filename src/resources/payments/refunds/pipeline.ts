import type { Config } from '../../../config';
import type { Clock } from '../../../lib/clock';
import type { PrismaClient } from '../../../lib/prisma';
import type { JobAdder, JobSpec } from '../../../lib/queue';
import { sql, TxSql } from '../../../lib/sql';
import { unixSeconds } from '../../../lib/clock';
import { accountApiVersion, automaticCause, emit, previousAttributes, type EmitOptions, type Tx } from '../../../events/emit';
import type { EventType } from '../../../events/types';
import type { JobWorker, Reconcile } from '../../../kernel/route';
import { refundsQueue, settleJobId, type RefundJob } from './jobs';
import { serializeRefund, type RefundRow } from './serializer';
import { lockCharge as lockOwnedCharge } from '../charges/service';
import { SELECT_ROW as SELECT_CHARGE } from '../charges/queries';
import { serializeCharge, type ChargeRow } from '../charges/serializer';
import { withChargeHistory } from '../charges/history';

// The asynchronous half of refunds: a refund of the card whose refunds fail (4000000000005126)
// is `succeeded` at first and fails REFUND_FAILURE_DELAY_MS later, its amount going back onto
// the charge. The due time is the refund's `due_at`; the step is one transaction guarded by it,
// so running it twice, late or early does nothing more, and the reconciler re-adds what the
// database says is due when Redis lost its jobs. Cancels (service.ts) end a refund the same way.

export interface PipelineDeps {
  readonly prisma: PrismaClient;
  readonly clock: Clock;
  readonly config: Pick<Config, 'defaultApiVersion' | 'refundFailureDelayMs'>;
}

const selectCharge = (id: string) => sql`${SELECT_CHARGE} WHERE id = ${id}`;

/** The charge's public object (the charges resource's), for the events a refund raises about it (`charge.refunded`), at the event's `version`. */
export async function chargeObject(tx: Tx, chargeId: string, version: string): Promise<Record<string, unknown>> {
  const [row] = await new TxSql(tx).query<ChargeRow>(selectCharge(chargeId));
  return withChargeHistory(new TxSql(tx), row.accountId, serializeCharge(row), version);
}

/** A refund in its serializer's row shape, read in `tx`; null when the account has none by that id. */
export async function loadRefund(tx: Tx, id: string, accountId?: string): Promise<RefundRow | null> {
  const refund = await tx.refund.findFirst({ where: { id, ...(accountId === undefined ? {} : { accountId }) } });
  if (!refund) return null;
  const charge = await tx.charge.findUnique({ where: { id: refund.chargeId }, select: { customerId: true, paymentMethodId: true } });
  return { ...refund, customerId: charge?.customerId ?? null, paymentMethodId: charge?.paymentMethodId ?? null };
}

/** Locks a charge for the rest of the transaction (every change of its refunded amount takes it first); null when the account has none. */
export const lockCharge = (tx: Tx, chargeId: string, accountId: string): Promise<ChargeRow | null> => lockOwnedCharge(new TxSql(tx), accountId, chargeId);

/** Emits `refund.updated` and the older `charge.refund.updated` (the public API still sends both) for a change of `before`. */
export async function emitRefundUpdated(tx: Tx, before: RefundRow, after: RefundRow, options: EmitOptions): Promise<string[]> {
  const object = serializeRefund(after);
  const changed = previousAttributes(serializeRefund(before), object);
  if (Object.keys(changed).length === 0) return [];
  const ids: string[] = [];
  for (const type of ['refund.updated', 'charge.refund.updated'] as const satisfies readonly EventType[]) {
    ids.push(await emit(tx, type, object, { ...options, previousAttributes: changed }));
  }
  return ids;
}

/**
 * Ends a succeeded or pending refund as `failed` or `canceled` (its charge and the refund locked
 * by the caller): its amount goes back onto the charge, nothing is due any more, and the update
 * events (and `refund.failed` for a failure) are written. Answers the row and the event ids.
 */
export async function endRefund(
  tx: Tx,
  before: RefundRow,
  outcome: { status: 'failed' | 'canceled'; failureReason: string },
  options: EmitOptions,
): Promise<{ row: RefundRow; eventIds: string[] }> {
  await tx.refund.update({ where: { id: before.id }, data: { status: outcome.status, failureReason: outcome.failureReason, dueAt: null }, select: { id: true } });
  await tx.charge.update({ where: { id: before.chargeId }, data: { amountRefunded: { decrement: before.amount } }, select: { id: true } });
  const row: RefundRow = { ...before, status: outcome.status, failureReason: outcome.failureReason, dueAt: null };
  const eventIds = await emitRefundUpdated(tx, before, row, options);
  if (outcome.status === 'failed') eventIds.push(await emit(tx, 'refund.failed', serializeRefund(row), options));
  return { row, eventIds };
}

/** The job that settles `refundId` at `dueAt` (unix seconds). */
export const settleJob = (refundId: string, dueAt: number, nowMs: number): JobSpec<RefundJob> => ({
  id: settleJobId(refundId, dueAt),
  data: { step: 'settle', id: refundId },
  delayMs: Math.max(0, dueAt * 1000 - nowMs),
});

/**
 * Fails a refund of the card whose refunds fail once its due time came (by the database):
 * `failed` with `expired_or_canceled_card`, as the public test card does. Nothing when it isn't
 * due, or no longer `succeeded` (canceled, already failed).
 */
export async function settleRefund(deps: PipelineDeps, refundId: string): Promise<string[]> {
  return deps.prisma.$transaction(async (tx) => {
    const now = unixSeconds(deps.clock);
    const due = await tx.refund.findFirst({ where: { id: refundId, status: 'succeeded', dueAt: { lte: now } }, select: { chargeId: true, accountId: true } });
    if (!due) return [];
    // The charge first, then the refund: the order every change of a charge's refunds takes.
    await lockCharge(tx, due.chargeId, due.accountId);
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM refunds WHERE id = ${refundId} AND status = 'succeeded' AND due_at <= ${now} FOR UPDATE`;
    if (locked.length === 0) return [];
    const before = (await loadRefund(tx, refundId))!;
    const options: EmitOptions = {
      accountId: before.accountId,
      apiVersion: await accountApiVersion(tx, before.accountId, deps.config.defaultApiVersion),
      created: now,
      cause: automaticCause,
    };
    const { eventIds } = await endRefund(tx, before, { status: 'failed', failureReason: 'expired_or_canceled_card' }, options);
    return eventIds;
  });
}

const BATCH = 500;

/** Re-adds a job for every refund the database says is due (keyset pages, so a backlog is read in parts). */
export const reconcileRefundJobs: Reconcile = async ({ prisma, queues }, nowMs) => {
  const now = Math.floor(nowMs / 1000);
  let count = 0;
  let afterId = '';
  for (;;) {
    const rows = await prisma.refund.findMany({
      where: { dueAt: { lte: now }, status: 'succeeded', id: { gt: afterId } },
      orderBy: { id: 'asc' },
      take: BATCH,
      select: { id: true, dueAt: true },
    });
    if (rows.length === 0) break;
    await queues.add(refundsQueue, rows.map((r) => settleJob(r.id, r.dueAt!, nowMs)));
    count += rows.length;
    afterId = rows[rows.length - 1].id;
    if (rows.length < BATCH) break;
  }
  return { refundSettlements: count };
};

/** Runs one step; it re-reads its row and does nothing when nothing is due. */
export const refundsWorker: JobWorker<RefundJob> = {
  queue: refundsQueue,
  run: (deps, job) => settleRefund(deps, job.id),
  failure: 'refund step failed',
  describe: (job) => ({ step: job.step, id: job.id }),
};

/** Queues `jobs` once the change that made them committed (within an operation, `deps.queues` waits for the commit). */
export async function queueRefundJobs(queues: JobAdder, jobs: readonly JobSpec<RefundJob>[]): Promise<void> {
  if (jobs.length > 0) await queues.add(refundsQueue, jobs);
}
