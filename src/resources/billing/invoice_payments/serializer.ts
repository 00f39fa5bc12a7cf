import { pathField, ref, type ExpandableFields } from '../../../kernel/expand';

export const INVOICE_PAYMENT_OBJECT = 'invoice_payment';
export const INVOICE_PAYMENT_LIST_OBJECT = 'invoice_payment_list';
export const PAYMENT_DETAILS_OBJECT = 'invoice_payment_details';

/** A row as queries.ts reads it. */
export interface InvoicePaymentRow {
  readonly id: string;
  readonly accountId: string;
  readonly invoiceId: string;
  readonly paymentIntentId: string;
  readonly created: number;
  readonly currency: string;
  readonly amountRequested: number;
  readonly amountPaid: number | null;
  readonly status: 'open' | 'paid' | 'canceled' | string;
  readonly isDefault: boolean;
  readonly paidAt: number | null;
  readonly canceledAt: number | null;
}

/** The public object (InvoicePayment). */
export function serializeInvoicePayment(row: InvoicePaymentRow) {
  return {
    id: row.id,
    object: INVOICE_PAYMENT_OBJECT,
    amount_paid: row.amountPaid,
    amount_requested: row.amountRequested,
    created: row.created,
    currency: row.currency,
    invoice: row.invoiceId as string | Record<string, unknown>,
    is_default: row.isDefault,
    livemode: false,
    payment: { type: 'payment_intent', payment_intent: row.paymentIntentId as string | Record<string, unknown> },
    status: row.status,
    status_transitions: { canceled_at: row.canceledAt, paid_at: row.paidAt },
  };
}

export const expandable: ExpandableFields = { invoice: ref('invoice'), payment: pathField(PAYMENT_DETAILS_OBJECT) };
export const paymentExpandable: ExpandableFields = { payment_intent: ref('payment_intent'), charge: ref('charge') };
