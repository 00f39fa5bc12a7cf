import { TxSql } from '../../../lib/sql';
import { prismaDb } from '../../../kernel/writes';
import { unixSeconds } from '../../../lib/clock';
import { accountApiVersion, automaticCause, emit } from '../../../events/emit';
import type { JobWorker, ProcessDeps, Reconcile } from '../../../kernel/route';
import { lockCharge, newBalanceTransactionId, saveCharge } from '../charges/service';
import { serializeCharge } from '../charges/serializer';
import { withChargeHistory } from '../charges/history';
import { paymentIntentsQueue, settleJob, type PaymentIntentJob } from './jobs';

// The asynchronous half of `automatic_async` captures: the intent succeeded at once, its charge
// captured, but the charge's balance transaction comes later (the public API's asynchronous
// capture), when the worker settles it at the intent's `due_at` and says so with
// `charge.updated`. One transaction guarded by `due_at`, so a repeated, late or early job does
// nothing more.

const BATCH = 500;

/** Settles intent `id` if it is due; answers the events written. */
export async function settleCapture(deps: Pick<ProcessDeps, 'prisma' | 'clock' | 'config'>, id: string): Promise<string[]> {
  const now = unixSeconds(deps.clock);
  return deps.prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ account_id: string; latest_charge_id: string | null }[]>`
      SELECT account_id, latest_charge_id FROM payment_intents WHERE id = ${id} AND due_at <= ${now} FOR UPDATE`;
    if (rows.length === 0) return [];
    const { account_id: accountId, latest_charge_id: chargeId } = rows[0];
    await tx.paymentIntent.update({ where: { id }, data: { dueAt: null }, select: { id: true } });
    const db = prismaDb(tx);
    const before = chargeId ? await lockCharge(db.sql, accountId, chargeId) : null;
    if (!before || !before.captured || before.balanceTransaction !== null) return [];
    const after = { ...before, balanceTransaction: newBalanceTransactionId() };
    await saveCharge(db, after);
    const apiVersion = await accountApiVersion(tx, accountId, deps.config.defaultApiVersion);
    const eventId = await emit(tx, 'charge.updated', await withChargeHistory(new TxSql(tx), accountId, serializeCharge(after), apiVersion), {
      accountId,
      apiVersion,
      created: now,
      cause: automaticCause,
      previousAttributes: { balance_transaction: null },
    });
    return [eventId];
  });
}

export const paymentIntentsWorker: JobWorker<PaymentIntentJob> = {
  queue: paymentIntentsQueue,
  run: (deps, job) => settleCapture(deps, job.id),
  failure: 'payment intent step failed',
  describe: (job) => ({ step: job.step, id: job.id }),
};

/** Re-adds the settlement of every intent that is due (Redis may have lost its job). */
export const reconcilePaymentIntentJobs: Reconcile = async ({ prisma, queues }, nowMs) => {
  const now = Math.floor(nowMs / 1000);
  let count = 0;
  let afterId = '';
  for (;;) {
    const rows = await prisma.paymentIntent.findMany({
      where: { dueAt: { lte: now }, id: { gt: afterId } },
      orderBy: { id: 'asc' },
      take: BATCH,
      select: { id: true, dueAt: true },
    });
    if (rows.length === 0) break;
    await queues.add(paymentIntentsQueue, rows.map((r) => settleJob(r.id, r.dueAt!)));
    count += rows.length;
    afterId = rows[rows.length - 1].id;
    if (rows.length < BATCH) break;
  }
  return { paymentIntentSettlements: count };
};
