import { unixSeconds } from '../../../lib/clock';
import type { Tx } from '../../../events/emit';
import type { Deps, JobWorker, Reconcile } from '../../../kernel/route';
import { lockInvoice, systemScope, type BillingDeps } from './billing';
import { finalizeDraft } from './manual';
import { detailsOfInvoice, dueDrafts } from './queries';
import { finalizeJob, invoicesQueue, overdueJob, scheduleOverdue, type InvoiceJob } from './jobs';
import { dueOverdue, runOverdueJob } from './overdue';

// The auto-advance of drafts: finalized once their `finalize_at` (billing time) has come, by the
// `invoices` worker on the real clock, or by their test clock's advance (`finalizeDueDraft`).

const BATCH = 500;

/**
 * Finalizes draft `id` if its auto-advance is due by `until` (billing time), in `tx`, with the
 * invoice locked, at billing time `at` (null: its due time); answers the events written, or null
 * when nothing was due.
 */
export async function finalizeDueDraft(tx: Tx, deps: BillingDeps, id: string, until: number, at: number | null = null): Promise<string[] | null> {
  // Unlocked: lockInvoice locks its owners first (billing's lock order, billing.ts).
  const locked = await tx.$queryRaw<{ account_id: string }[]>`SELECT account_id FROM invoices WHERE id = ${id}`;
  if (locked.length === 0) return null;
  const accountId = locked[0].account_id;
  const made = await lockInvoice(tx, accountId, id);
  // A draft deleted meanwhile.
  if (!made) return null;
  const details = await detailsOfInvoice(tx, id);
  const due = details.finalizeAt;
  if (made.row.status !== 'draft' || due === null || due > until || details.autoAdvance !== true) return null;
  const scope = await systemScope(tx, deps, accountId, at ?? due);
  await finalizeDraft(scope, made, details);
  return scope.events;
}

/** The earliest draft on a test clock whose auto-advance is due by `until`, or null. */
export async function nextDueDraftOnClock(tx: Tx, clockId: string, until: number): Promise<{ id: string; at: number } | null> {
  const rows = await tx.$queryRaw<{ id: string; at: number }[]>`
    SELECT i.id, d.finalize_at AS at FROM invoice_details d JOIN invoices i ON i.id = d.invoice_id
    WHERE i.test_clock_id = ${clockId} AND i.status = 'draft' AND d.auto_advance AND d.finalize_at <= ${until}
    ORDER BY d.finalize_at, i.id LIMIT 1`;
  return rows[0] ?? null;
}

/** A real-clock draft's job: finalized now if its time has come. */
async function runFinalizeJob(deps: Deps, id: string): Promise<string[]> {
  const now = unixSeconds(deps.clock);
  const events = await deps.prisma.$transaction(async (tx) => {
    const onClock = await tx.invoice.findUnique({ where: { id }, select: { testClockId: true } });
    if (!onClock || onClock.testClockId !== null) return [];
    return (await finalizeDueDraft(tx, deps, id, now, now)) ?? [];
  });
  // Finalized open and sent by email: its overdue step waits for its due date.
  if (events.length > 0) await scheduleOverdue(deps, { invoices: [id] });
  return events;
}

export const invoicesWorker: JobWorker<InvoiceJob> = {
  queue: invoicesQueue,
  run: (deps, job) => (job.step === 'overdue' ? runOverdueJob(deps, job.id) : runFinalizeJob(deps, job.id)),
  failure: 'invoice step failed',
  describe: (job) => ({ step: job.step, invoice: job.id }),
};

/**
 * Re-adds the job of every real-clock draft whose auto-advance is due, and of every open invoice
 * whose `invoice.overdue` is due and unsent (Redis may have lost them).
 */
export const reconcileInvoices: Reconcile = async ({ prisma, queues }, nowMs) => {
  const now = Math.floor(nowMs / 1000);
  let count = 0;
  for (let after = ''; ; ) {
    const rows = await dueDrafts(prisma, now, after, BATCH);
    if (rows.length === 0) break;
    const real = await prisma.invoice.findMany({ where: { id: { in: rows.map((r) => r.invoice_id) }, testClockId: null, status: 'draft' }, select: { id: true } });
    const realIds = new Set(real.map((r) => r.id));
    const due = rows.filter((r) => realIds.has(r.invoice_id));
    if (due.length > 0) await queues.add(invoicesQueue, due.map((r) => finalizeJob(r.invoice_id, r.finalize_at, now)));
    count += due.length;
    after = rows[rows.length - 1].invoice_id;
    if (rows.length < BATCH) break;
  }
  let overdue = 0;
  for (let after = ''; ; ) {
    const rows = await dueOverdue(prisma, now, after, BATCH);
    if (rows.length > 0) await queues.add(invoicesQueue, rows.map((r) => overdueJob(r.id, r.at, now)));
    overdue += rows.length;
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1].id;
  }
  return { invoicesFinalizing: count, invoicesOverdue: overdue };
};
