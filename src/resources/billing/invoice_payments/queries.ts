import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { InvoicePaymentRow } from './serializer';

// Invoice payments' SQL (the table is newer than the generated Prisma client): the row in the
// serializer's shape (amounts as numbers; BIGINT columns, exact up to 2^53), the list's
// filters, and the writes billing makes as an invoice's PaymentIntent moves.

export const SELECT_ROW = raw(`
  SELECT id, seq, account_id AS "accountId", invoice_id AS "invoiceId", payment_intent_id AS "paymentIntentId", created, currency,
         amount_requested::float8 AS "amountRequested", amount_paid::float8 AS "amountPaid", status, is_default AS "isDefault",
         paid_at AS "paidAt", canceled_at AS "canceledAt"
  FROM invoice_payments`);

export const selectOwned = (id: string, accountId: string): Fragment => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId}`;

/** An invoice's payments, oldest first. */
export const selectOfInvoice = (invoiceId: string, accountId: string): Fragment =>
  sql`${SELECT_ROW} WHERE invoice_id = ${invoiceId} AND account_id = ${accountId} ORDER BY seq ASC`;

export function listedRows(accountId: string, filters: { invoice?: string; paymentIntent?: string; type?: string; status?: string; created: readonly Fragment[] }): SqlRows {
  const where = [sql`account_id = ${accountId}`, ...filters.created];
  if (filters.invoice !== undefined) where.push(sql`invoice_id = ${filters.invoice}`);
  if (filters.paymentIntent !== undefined) where.push(sql`payment_intent_id = ${filters.paymentIntent}`);
  // Every payment here goes through a PaymentIntent: another type matches none.
  if (filters.type !== undefined && filters.type !== 'payment_intent') where.push(sql`false`);
  if (filters.status !== undefined) where.push(sql`status = ${filters.status}`);
  return { select: SELECT_ROW, where };
}

/**
 * The payment of an invoice through `paymentIntentId`: made on the intent's first use, then kept
 * in step with it (paid, canceled); a payment once paid or canceled stays so.
 */
export const upsertPayment = (r: Omit<InvoicePaymentRow, 'isDefault'>): Fragment => sql`
  INSERT INTO invoice_payments (id, account_id, invoice_id, payment_intent_id, created, currency, amount_requested, amount_paid, status, paid_at, canceled_at)
  VALUES (${r.id}, ${r.accountId}, ${r.invoiceId}, ${r.paymentIntentId}, ${r.created}, ${r.currency}, ${r.amountRequested}, ${r.amountPaid}, ${r.status}, ${r.paidAt}, ${r.canceledAt})
  ON CONFLICT (payment_intent_id) DO UPDATE SET
    status = CASE WHEN invoice_payments.status = 'open' THEN EXCLUDED.status ELSE invoice_payments.status END,
    amount_paid = CASE WHEN invoice_payments.status = 'open' THEN EXCLUDED.amount_paid ELSE invoice_payments.amount_paid END,
    paid_at = CASE WHEN invoice_payments.status = 'open' THEN EXCLUDED.paid_at ELSE invoice_payments.paid_at END,
    canceled_at = CASE WHEN invoice_payments.status = 'open' THEN EXCLUDED.canceled_at ELSE invoice_payments.canceled_at END
  RETURNING id`;

/** The open payments of a voided invoice end canceled. */
export const cancelOpen = (invoiceId: string, now: number): Fragment =>
  sql`UPDATE invoice_payments SET status = 'canceled', canceled_at = ${now} WHERE invoice_id = ${invoiceId} AND status = 'open' RETURNING id`;

/** The newest open payment of each of these invoices (its intent's client secret is the invoice's confirmation secret). */
export const selectOpenOf = (invoiceId: string, accountId: string): Fragment =>
  sql`${SELECT_ROW} WHERE invoice_id = ${invoiceId} AND account_id = ${accountId} AND status = 'open' ORDER BY seq DESC LIMIT 1`;
