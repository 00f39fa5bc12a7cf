import { unixSeconds } from '../../../lib/clock';
import { defineQueue, type JobSpec } from '../../../lib/queue';
import type { Deps } from '../../../kernel/route';
import type { Tx } from '../../../events/emit';
import { detailsByInvoice, realClockOverdue } from './queries';

// Invoices' delayed step: a draft with auto_advance finalizes about an hour after it was made. A
// job only says "look at this draft now": its `invoice_details.finalize_at` says whether anything
// is due, so a lost, repeated or early job is harmless, and the reconciler re-adds what is due.
// Drafts on a test clock finalize as their clock advances past that time, not by a job.
// Open `send_invoice` invoices get `invoice.overdue` the same way at their `due_date` (overdue.ts):
// whatever opens one on the real clock adds its job after the commit (`scheduleOverdue`; a
// subscription's invoices through its `scheduleSubscriptions`), and the reconciler re-adds lost ones.

export type InvoiceJob = { step: 'finalize' | 'overdue'; id: string };

export const invoicesQueue = defineQueue<InvoiceJob>('invoices', { concurrency: 4 });

/** One job per draft and due time, so adding it twice is harmless. */
export const finalizeJob = (id: string, at: number, nowSeconds: number): JobSpec<InvoiceJob> => ({
  id: `finalize-${id}-${at}`,
  data: { step: 'finalize', id },
  delayMs: Math.max(0, (at - nowSeconds) * 1000),
});

/** One job per invoice and due date: "is `invoice.overdue` due now?" (the database answers). */
export const overdueJob = (id: string, at: number, nowSeconds: number): JobSpec<InvoiceJob> => ({
  id: `overdue-${id}-${at}`,
  data: { step: 'overdue', id },
  delayMs: Math.max(0, (at - nowSeconds) * 1000),
});

/** Adds the finalization job of each of those drafts that is due on the real clock. */
export async function scheduleFinalization(deps: Pick<Deps, 'prisma' | 'queues' | 'clock'>, ids: readonly string[]): Promise<void> {
  const [details, invoices] = await Promise.all([
    detailsByInvoice(deps.prisma, ids),
    deps.prisma.invoice.findMany({ where: { id: { in: [...ids] }, testClockId: null, status: 'draft' }, select: { id: true } }),
  ]);
  const now = unixSeconds(deps.clock);
  const jobs = invoices.flatMap(({ id }) => {
    const at = details.get(id)?.finalizeAt;
    return at === null || at === undefined ? [] : [finalizeJob(id, at, now)];
  });
  if (jobs.length > 0) await deps.queues.add(invoicesQueue, jobs);
}

/**
 * Adds the overdue job of each open real-clock `send_invoice` invoice of those subscriptions, or
 * of those invoices, not yet sent `invoice.overdue`.
 */
export async function scheduleOverdue(
  deps: Pick<Deps, 'queues' | 'clock'> & { prisma: Pick<Tx, '$queryRaw'> },
  ids: { subscriptions?: readonly string[]; invoices?: readonly string[] },
): Promise<void> {
  const rows = await realClockOverdue(deps.prisma, ids);
  const now = unixSeconds(deps.clock);
  if (rows.length > 0) await deps.queues.add(invoicesQueue, rows.map((r) => overdueJob(r.id, r.due_date, now)));
}
