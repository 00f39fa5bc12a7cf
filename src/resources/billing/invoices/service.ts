import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape } from '../../../lib/ids';
import { ApiError, invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginateItems, paginateRows, rangeWhere } from '../../../kernel/list';
import type { Deps, RequestContext } from '../../../kernel/route';
import { searchRequest } from '../../../kernel/search';
import type { Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { resolvePaymentMethod, type InvoiceIntent } from '../../payments';
import { collectInvoice, invoiceObject, invoiceObjects, lineRefs, lockInvoice, requestScope, settleInvoiceIntent, type Scope } from './billing';
import { detailsOfInvoice, SEARCH, searchedRows } from './queries';
import { finalizeDraft } from './manual';
import { scheduleOverdue } from './jobs';
import { serializeLine, type InvoiceRow } from './serializer';
import { prismaDb } from '../../../kernel/writes';
// Paying an invoice moves its subscription on (active again, a parked change applied).

const NAME = 'invoice';

async function linesOf(tx: Tx, invoiceId: string) {
  return (await linesByInvoice(tx, [invoiceId])).get(invoiceId) ?? [];
}

/** The lines of several invoices in one query (a list page), by invoice, each in its order. */
async function linesByInvoice(tx: Tx, invoiceIds: string[]) {
  const byInvoice = new Map<string, Omit<Awaited<ReturnType<Tx['invoiceLine']['findMany']>>[number], 'seq'>[]>();
  for (const { seq: _s, ...line } of await tx.invoiceLine.findMany({ where: { invoiceId: { in: invoiceIds } }, orderBy: { seq: 'asc' } })) {
    const lines = byInvoice.get(line.invoiceId) ?? [];
    lines.push(line);
    byInvoice.set(line.invoiceId, lines);
  }
  return byInvoice;
}

const strip = <T extends { seq: bigint; accountId: string }>({ seq: _s, accountId: _a, ...row }: T) => row;

async function findInvoice(ctx: RequestContext, id: string): Promise<InvoiceRow> {
  const row = hasIdShape('in', id) ? await ctx.deps.prisma.invoice.findUnique({ where: { id, accountId: ctx.caller.accountId } }) : null;
  if (!row) throw resourceMissing(NAME, id);
  return strip(row);
}

export async function retrieveInvoice(ctx: RequestContext) {
  const row = await findInvoice(ctx, ctx.pathParams.invoice);
  const lines = await linesOf(ctx.deps.prisma, row.id);
  return invoiceObject(ctx.deps.prisma, ctx.caller.accountId, { row, lines }, unixSeconds(ctx.deps.clock), ctx.deps);
}

/** The public object of one of the caller's invoices (for expansion), or null. */
export async function retrieveInvoiceObject(ctx: RequestContext, id: string) {
  const row = await ctx.deps.prisma.invoice.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) return null;
  const lines = await linesOf(ctx.deps.prisma, id);
  return invoiceObject(ctx.deps.prisma, ctx.caller.accountId, { row: strip(row), lines }, unixSeconds(ctx.deps.clock), ctx.deps);
}

export async function listInvoices(ctx: RequestContext) {
  const { params, caller, deps } = ctx;
  const where: Prisma.InvoiceWhereInput = {
    accountId: caller.accountId,
    customerId: params.customer,
    subscriptionId: params.subscription,
    status: params.status,
    collectionMethod: params.collection_method,
    created: rangeWhere(params.created),
    dueDate: rangeWhere(params.due_date),
  };
  return paginateRows<InvoiceRow & { seq: bigint; accountId: string }>({
    params,
    url: '/v1/invoices',
    where: where as Record<string, unknown>,
    model: deps.prisma.invoice as any,
    objectName: NAME,
    serializeAll: (rows) => serializeInvoices(ctx, rows),
  });
}

/** A page of invoices as the list and the search render them: their lines and references read together. */
async function serializeInvoices(ctx: RequestContext, rows: (InvoiceRow & { seq: bigint; accountId: string })[]) {
  const { caller, deps } = ctx;
  const lines = await linesByInvoice(deps.prisma, rows.map((row) => row.id));
  return invoiceObjects(deps.prisma, caller.accountId, rows.map((row) => ({ row: strip(row), lines: lines.get(row.id) ?? [] })), unixSeconds(deps.clock), deps);
}

/** `GET /v1/invoices/search`: the matching ids, then their rows read and rendered as the list's. */
export async function searchInvoices(ctx: RequestContext) {
  const { caller, deps } = ctx;
  const result = await searchRequest<{ id: string; seq: bigint }>(ctx, SEARCH, searchedRows(caller.accountId), (row) => row.id);
  const ids = result.data as string[];
  const byId = new Map((await deps.prisma.invoice.findMany({ where: { id: { in: ids }, accountId: caller.accountId } })).map((row) => [row.id, row]));
  return { ...result, data: await serializeInvoices(ctx, ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []))) };
}

export async function listInvoiceLines(ctx: RequestContext) {
  const row = await findInvoice(ctx, ctx.pathParams.invoice);
  const lines = await linesOf(ctx.deps.prisma, row.id);
  const refs = await lineRefs(ctx.deps.prisma, ctx.caller.accountId, lines);
  // Lines are listed in invoice order, as the public API lists them.
  return paginateItems({ params: ctx.params, url: `/v1/invoices/${row.id}/lines`, items: lines, objectName: 'line item', serialize: (line) => serializeLine(line, refs) });
}

/**
 * What paying an invoice does to the subscription it bills. Subscriptions implement it and the
 * route passes it in: subscriptions bill invoices, never the other way.
 */
export interface InvoicePaid {
  /** In the payment's transaction, once the invoice is paid (with `paymentMethodId`, when its customer paid it through its PaymentIntent). */
  paid(scope: Scope, invoice: InvoiceRow, paymentMethodId?: string | null): Promise<void>;
  /** Queues the next action of the invoice's subscription (after the commit, or read in the transaction that changed it). */
  schedule(deps: Pick<Deps, 'queues' | 'clock'> & { prisma: Pick<Tx, 'subscription' | '$queryRaw'> }, subscriptionIds: readonly string[]): Promise<void>;
}

/**
 * What an invoice's PaymentIntent settling outside billing's collection does (payments call it
 * through `useInvoicePayments`, which billing's index registers): the invoice paid or its failure
 * recorded, and a paid invoice's subscription moved on, in the intent's transaction.
 */
export async function invoiceIntentSettled(tx: Tx, deps: Deps, intent: InvoiceIntent, outcome: 'succeeded' | 'failed', subscriptions: InvoicePaid): Promise<string[]> {
  const settled = await settleInvoiceIntent(tx, deps, intent, outcome);
  if (!settled) return [];
  const { scope, invoice } = settled;
  if (outcome === 'succeeded') {
    await subscriptions.paid(scope, invoice.row, intent.paymentMethodId);
    // Read in this transaction; within a request the job is added after its commit.
    if (invoice.row.subscriptionId) await subscriptions.schedule({ ...deps, prisma: tx }, [invoice.row.subscriptionId]);
  }
  return scope.events;
}

/**
 * `POST /v1/invoices/{id}/pay`: charges an open invoice (its default payment method, its
 * customer's, or `payment_method`); a draft is finalized first. A decline is recorded on the invoice and answered 402. The
 * hosted invoice page pays through here too, with `returnUrl` for a 3-D Secure challenge.
 */
export async function payInvoice(ctx: RequestContext, subscriptions: InvoicePaid, options: { returnUrl?: string } = {}) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.invoice;
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const made = hasIdShape('in', id) ? await lockInvoice(tx, ctx.caller.accountId, id) : null;
    if (!made) throw resourceMissing(NAME, id);
    if (made.row.status === 'paid') throw invalidRequest('Invoice is already paid.', 'invoice_already_paid');
    const draft = made.row.status === 'draft';
    if (made.row.status !== 'open' && !draft) throw invalidRequest(`You can only pay an open invoice; this invoice is ${made.row.status}.`, 'invoice_not_editable');
    const clock = made.row.testClockId === null ? null : await tx.testClock.findUnique({ where: { id: made.row.testClockId }, select: { frozenTime: true } });
    const scope = requestScope(ctx, tx, clock?.frozenTime ?? eventTime, eventTime);
    let paymentMethod: string | undefined;
    if (params.payment_method !== undefined) paymentMethod = (await resolvePaymentMethod(prismaDb(tx), ctx, params.payment_method, 'payment_method')).id;
    // A draft is finalized first, as the public API does (`invoice.finalized`); one that asks
    // for nothing is paid by its finalization.
    const open = draft ? await finalizeDraft(scope, made, await detailsOfInvoice(tx, id)) : made;
    if (open.row.status === 'paid') {
      await subscriptions.paid(scope, open.row);
      return { invoice: await invoiceObject(tx, ctx.caller.accountId, open, scope.now, deps), charge: { kind: 'paid' } as const, events: scope.events, subscription: open.row.subscriptionId, finalized: draft };
    }
    const { invoice, charge } = await collectInvoice(scope, open, paymentMethod, { returnUrl: options.returnUrl });
    if (charge.kind === 'paid') await subscriptions.paid(scope, invoice.row);
    return { invoice: await invoiceObject(tx, ctx.caller.accountId, invoice, scope.now, deps), charge, events: scope.events, subscription: invoice.row.subscriptionId, finalized: draft };
  });
  await handOffEvents(deps.queues, result.events);
  if (result.finalized) await scheduleOverdue(deps, { invoices: [result.invoice.id as string] });
  if (result.subscription) await subscriptions.schedule(deps, [result.subscription]);
  if (result.charge.kind !== 'paid') {
    // The attempt stands (counted, its events written); the answer is the decline.
    const e = result.charge.error;
    throw new ApiError({ status: e.status, type: e.type, code: e.code, message: e.message, extra: e.extra, keepsWrites: true });
  }
  return result.invoice;
}
