import { hasIdShape, newId } from '../../../lib/ids';
import { resourceMissing } from '../../../kernel/errors';
import type { ExpandableField } from '../../../kernel/expand';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import type { RequestContext } from '../../../kernel/route';
import type { Db } from '../../../kernel/writes';
import { intentClientSecret, type InvoiceIntent } from '../../payments';
import { cancelOpen, listedRows, selectOfInvoice, selectOpenOf, selectOwned, upsertPayment } from './queries';
import { INVOICE_PAYMENT_LIST_OBJECT, serializeInvoicePayment, type InvoicePaymentRow } from './serializer';

// Invoice payments: one per PaymentIntent an invoice is paid through, kept in step with it by
// billing (invoices/billing.ts records each move); listed, retrieved, and shown on the invoice
// (`payments`, and `confirmation_secret` while one is open), both only when expanded.

const NAME = 'invoice_payment';

const withoutSeq = ({ seq: _seq, ...row }: InvoicePaymentRow & { seq?: bigint }): InvoicePaymentRow => row;

/** Records where an invoice's payment through `intent` stands (open, paid, canceled), at billing time `now`. */
export async function recordInvoicePayment(
  db: Db,
  invoice: { id: string; currency: string; amountDue: bigint },
  intent: Pick<InvoiceIntent, 'id' | 'accountId' | 'status' | 'amountReceived'>,
  now: number,
): Promise<void> {
  const paid = intent.status === 'succeeded';
  const canceled = intent.status === 'canceled';
  await db.write({
    sql: upsertPayment({
      id: newId('inpay'),
      accountId: intent.accountId,
      invoiceId: invoice.id,
      paymentIntentId: intent.id,
      created: now,
      currency: invoice.currency,
      amountRequested: Number(invoice.amountDue),
      amountPaid: paid ? intent.amountReceived : null,
      status: paid ? 'paid' : canceled ? 'canceled' : 'open',
      paidAt: paid ? now : null,
      canceledAt: canceled ? now : null,
    }),
  });
}

/** A voided invoice's open payments end canceled. */
export async function cancelInvoicePayments(db: Db, invoiceId: string, now: number): Promise<void> {
  await db.write({ sql: cancelOpen(invoiceId, now) });
}

/** The intent of an invoice's open payment, if it has one. */
export async function openPaymentIntentOf(db: Pick<Db, 'sql'>, invoiceId: string, accountId: string): Promise<string | null> {
  const [row] = await db.sql.query<InvoicePaymentRow>(selectOpenOf(invoiceId, accountId));
  return row?.paymentIntentId ?? null;
}

/** The intents of invoices' payments, oldest first per invoice (for the versions that name one). */
export async function paymentsOfInvoice(db: Pick<Db, 'sql'>, invoiceId: string, accountId: string): Promise<InvoicePaymentRow[]> {
  return (await db.sql.query<InvoicePaymentRow & { seq: bigint }>(selectOfInvoice(invoiceId, accountId))).map(withoutSeq);
}

export async function listInvoicePayments(ctx: RequestContext) {
  const { params, caller, deps } = ctx;
  const payment = params.payment as { type?: string; payment_intent?: string } | undefined;
  return paginateSql<InvoicePaymentRow & { seq: bigint }>({
    params,
    url: '/v1/invoice_payments',
    rows: listedRows(caller.accountId, {
      invoice: params.invoice,
      paymentIntent: payment?.payment_intent,
      type: payment?.type,
      status: params.status,
      created: rangeConditions('created', params.created),
    }),
    db: deps.sql,
    objectName: NAME,
    serialize: (row: InvoicePaymentRow & { seq?: bigint }) => serializeInvoicePayment(withoutSeq(row)),
  });
}

export async function retrieveInvoicePayment(ctx: RequestContext) {
  const id = ctx.pathParams.invoice_payment;
  const object = await retrieveInvoicePaymentObject(ctx, id);
  if (!object) throw resourceMissing(NAME, id);
  return object;
}

export async function retrieveInvoicePaymentObject(ctx: RequestContext, id: string) {
  if (!hasIdShape('inpay', id)) return null;
  const [row] = await ctx.deps.sql.query<InvoicePaymentRow & { seq: bigint }>(selectOwned(id, ctx.caller.accountId));
  return row ? serializeInvoicePayment(withoutSeq(row)) : null;
}

/** An invoice's `payments` (expanded only, as the public API includes it): the first page, oldest first. */
export const invoicePaymentsField: ExpandableField = {
  type: INVOICE_PAYMENT_LIST_OBJECT,
  expand: async (_value, invoice, ctx) => {
    const rows = await paymentsOfInvoice(ctx.deps, String(invoice.id), ctx.caller.accountId);
    return {
      object: 'list',
      data: rows.slice(0, 10).map(serializeInvoicePayment),
      has_more: rows.length > 10,
      total_count: rows.length,
      url: `/v1/invoice_payments?invoice=${String(invoice.id)}`,
    };
  },
};

/** An open invoice's `confirmation_secret` (expanded only): its open payment's intent's client secret, to confirm it from the browser. */
export const confirmationSecretField: ExpandableField = {
  type: 'invoice_confirmation_secret',
  expand: async (_value, invoice, ctx) => {
    if (invoice.status !== 'open') return null;
    const intent = await openPaymentIntentOf(ctx.deps, String(invoice.id), ctx.caller.accountId);
    const secret = intent === null ? null : await intentClientSecret(ctx.deps.sql, ctx.deps, ctx.caller.accountId, intent);
    return secret === null ? null : { client_secret: secret, type: 'payment_intent' };
  },
};
