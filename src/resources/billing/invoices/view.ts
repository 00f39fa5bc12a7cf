import type { Tx } from '../../../events/emit';
import { formatDate, formatMoney } from './amounts';
import { invoiceObject } from './billing';
import type { LinkDeps } from './links';

// What the hosted invoice page and the PDF show of an invoice: its public object's fields (so both
// say what the API says), with every line (the object shows ten inline).

export interface InvoiceView {
  readonly id: string;
  readonly accountId: string;
  readonly number: string | null;
  readonly status: string;
  readonly currency: string;
  readonly customerName: string | null;
  readonly customerEmail: string | null;
  readonly description: string | null;
  readonly footer: string | null;
  readonly finalizedAt: number | null;
  readonly dueDate: number | null;
  readonly paidAt: number | null;
  readonly lines: readonly { readonly description: string | null; readonly quantity: number | null; readonly amount: number }[];
  readonly subtotal: number;
  readonly discount: number;
  readonly tax: number;
  readonly total: number;
  readonly amountDue: number;
  readonly amountPaid: number;
  readonly amountRemaining: number;
  /** The latest attempt's decline while the invoice is open. */
  readonly lastPaymentError: string | null;
}

/** The view of one invoice of `accountId`, or null when it is gone. */
export async function invoiceView(tx: Tx, deps: LinkDeps, accountId: string, invoiceId: string, now: number): Promise<InvoiceView | null> {
  const found = await tx.invoice.findFirst({ where: { id: invoiceId, accountId } });
  if (!found) return null;
  const { seq: _s, accountId: _a, ...row } = found;
  const lines = (await tx.invoiceLine.findMany({ where: { invoiceId }, orderBy: { seq: 'asc' } })).map(({ seq: _q, ...l }) => l);
  const object = (await invoiceObject(tx, accountId, { row, lines }, now, deps)) as Record<string, any>;
  // The decline is the row's (the public invoice shows none: it is on the invoice's PaymentIntent).
  const error = row.lastPaymentError as { message?: string } | null;
  return {
    id: row.id,
    accountId,
    number: row.number,
    status: row.status,
    currency: row.currency,
    customerName: object.customer_name,
    customerEmail: object.customer_email,
    description: object.description,
    footer: object.footer,
    finalizedAt: row.finalizedAt,
    dueDate: row.dueDate,
    paidAt: row.paidAt,
    lines: lines.map((l) => ({ description: l.description, quantity: l.quantity, amount: Number(l.amount) })),
    subtotal: object.subtotal,
    discount: (object.total_discount_amounts as { amount: number }[]).reduce((sum, d) => sum + d.amount, 0),
    tax: (object.total_taxes as { amount: number }[]).reduce((sum, t) => sum + t.amount, 0),
    total: object.total,
    amountDue: object.amount_due,
    amountPaid: object.amount_paid,
    amountRemaining: object.amount_remaining,
    lastPaymentError: row.status === 'open' && error ? (error.message ?? 'The payment failed.') : null,
  };
}

export const money = (view: Pick<InvoiceView, 'currency'>, amount: number): string => formatMoney(amount, view.currency);
export const day = (seconds: number | null): string => (seconds === null ? '—' : formatDate(seconds));

export const STATUS_TEXT: Readonly<Record<string, string>> = { open: 'Open', paid: 'Paid', void: 'Void', uncollectible: 'Uncollectible', draft: 'Draft' };
