import type { Scope } from '../invoices/billing';
import type { InvoiceRow } from '../invoices/serializer';
import { loadView } from './billing';
import type { StoredPendingUpdate } from './serializer';
import { applyPendingUpdate, saveSubscriptionRow } from './service';

/**
 * What a subscription does when one of its invoices gets paid: a change parked until then is
 * applied, and an `incomplete` or `past_due` subscription whose latest invoice it is becomes `active`.
 */
export async function invoicePaid(scope: Scope, invoice: InvoiceRow): Promise<void> {
  if (invoice.subscriptionId === null) return;
  const { tx } = scope;
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM subscriptions WHERE id = ${invoice.subscriptionId} FOR UPDATE`;
  if (rows.length === 0) return;
  let view = await loadView(tx, await tx.subscription.findUniqueOrThrow({ where: { id: invoice.subscriptionId } }), scope.accountId);
  const pending = view.row.pendingUpdate as StoredPendingUpdate | null;
  if (pending?.invoice === invoice.id) view = await applyPendingUpdate(scope, view);
  if ((view.row.status === 'incomplete' || view.row.status === 'past_due') && view.row.latestInvoice === invoice.id) {
    await saveSubscriptionRow(scope, view, { ...view, row: { ...view.row, status: 'active' } });
  }
}
