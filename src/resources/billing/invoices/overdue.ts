import type { Tx } from '../../../events/emit';
import { unixSeconds } from '../../../lib/clock';
import type { Deps } from '../../../kernel/route';
import { emitIn, invoiceObject, lockInvoice, systemScope, type BillingDeps } from './billing';

// `invoice.overdue`: an open `send_invoice` invoice past its `due_date`, once. The public API sends
// it from a Billing automation (its Dashboard setting picks the days after due); here it is sent
// at the due time itself. `invoice_overdue_notices` holds one row per invoice sent, written in the
// event's transaction, so a repeated, late or re-added job can't send it twice; an invoice paid,
// voided or marked uncollectible first is no longer open and gets none.

/**
 * Writes `invoice.overdue` for invoice `id` if it is open, `send_invoice`, due by `until` (billing
 * time) and not yet sent, in `tx`, with the invoice locked, at billing time `at`; answers the
 * events written, or null when nothing was due.
 */
export async function sendDueOverdue(tx: Tx, deps: BillingDeps, id: string, until: number, at: number): Promise<string[] | null> {
  // Unlocked: lockInvoice locks its owners first (billing's lock order, billing.ts).
  const locked = await tx.$queryRaw<{ account_id: string }[]>`SELECT account_id FROM invoices WHERE id = ${id}`;
  if (locked.length === 0) return null;
  const accountId = locked[0].account_id;
  const made = await lockInvoice(tx, accountId, id);
  // Deleted meanwhile (a draft).
  if (!made) return null;
  const row = made.row;
  if (row.status !== 'open' || row.collectionMethod !== 'send_invoice' || row.dueDate === null || row.dueDate > until) return null;
  const inserted = await tx.$executeRaw`
    INSERT INTO invoice_overdue_notices (invoice_id, account_id, sent_at) VALUES (${id}, ${accountId}, ${at}) ON CONFLICT (invoice_id) DO NOTHING`;
  if (inserted === 0) return null;
  const scope = await systemScope(tx, deps, accountId, at);
  await emitIn(scope, 'invoice.overdue', await invoiceObject(tx, accountId, made, at, deps));
  return scope.events;
}

/** The earliest invoice on a test clock whose `invoice.overdue` is due by `until`, or null. */
export async function nextOverdueOnClock(tx: Tx, clockId: string, until: number): Promise<{ id: string; at: number } | null> {
  const rows = await tx.$queryRaw<{ id: string; at: number }[]>`
    SELECT i.id, i.due_date AS at FROM invoices i
    WHERE i.test_clock_id = ${clockId} AND i.status = 'open' AND i.collection_method = 'send_invoice' AND i.due_date <= ${until}
      AND NOT EXISTS (SELECT 1 FROM invoice_overdue_notices n WHERE n.invoice_id = i.id)
    ORDER BY i.due_date, i.id LIMIT 1`;
  return rows[0] ?? null;
}

/** Real-clock invoices whose `invoice.overdue` is due by `now` and not sent, a page after `afterId`. */
export const dueOverdue = (tx: Tx, now: number, afterId: string, limit: number) =>
  tx.$queryRaw<{ id: string; at: number }[]>`
    SELECT i.id, i.due_date AS at FROM invoices i
    WHERE i.status = 'open' AND i.collection_method = 'send_invoice' AND i.due_date <= ${now} AND i.test_clock_id IS NULL AND i.id > ${afterId}
      AND NOT EXISTS (SELECT 1 FROM invoice_overdue_notices n WHERE n.invoice_id = i.id)
    ORDER BY i.id LIMIT ${limit}`;

/** A real-clock invoice's overdue job: sent now if its due time has passed. */
export async function runOverdueJob(deps: Deps, id: string): Promise<string[]> {
  const now = unixSeconds(deps.clock);
  return deps.prisma.$transaction(async (tx) => {
    const onClock = await tx.invoice.findUnique({ where: { id }, select: { testClockId: true } });
    if (!onClock || onClock.testClockId !== null) return [];
    return (await sendDueOverdue(tx, deps, id, now, now)) ?? [];
  });
}
