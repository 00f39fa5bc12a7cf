import { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { currencyOf } from '../../../lib/currencies';
import { hasIdShape, newId } from '../../../lib/ids';
import { invalidRequest, parameterMissing, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { previousAttributes, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import { lockCustomer } from '../../payments';
import { TxSql } from '../../../lib/sql';
import { applyBalance, attachedPaymentMethodParam, collectInvoice, discountParams, draftInvoice, emitIn, invoiceObject, lockInvoice, nextInvoiceNumber, refreshDraft, requestScope, type MadeInvoice, type Scope } from './billing';
import { createInvoiceLink } from './links';
import { customerDiscountRecords, detailsOfInvoice, saveDetails, type InvoiceDetails, type InvoiceRendering } from './queries';
import { INVOICE_OBJECT, type InvoiceRow } from './serializer';
import { scheduleFinalization, scheduleOverdue } from './jobs';

// Invoices made through the API (`billing_reason: manual`): a draft, changed or deleted while it
// is one, then finalized (numbered, its lines and totals fixed), and voided, marked uncollectible
// or sent. A draft with `auto_advance` finalizes by itself an hour after it was made
// (`invoice_details.finalize_at`, run by the billing worker: jobs.ts, pipeline.ts).

const NAME = 'invoice';
const DAY = 86_400;
/** How long after its creation a draft with auto_advance finalizes, as the public API waits. */
export const AUTO_FINALIZE_DELAY = 3_600;
const DEFAULT_DAYS_UNTIL_DUE = 30;

/** Billing time for a customer's objects: its test clock's frozen time, else now. */
async function billingNow(tx: Tx, testClockId: string | null, now: number): Promise<number> {
  if (testClockId === null) return now;
  const clock = await tx.testClock.findUnique({ where: { id: testClockId }, select: { frozenTime: true } });
  return clock?.frozenTime ?? now;
}

/** One of the caller's invoices, locked, with its details and a scope at its billing time. */
async function lockOwned(ctx: RequestContext, tx: Tx) {
  const id = ctx.pathParams.invoice;
  const made = hasIdShape('in', id) ? await lockInvoice(tx, ctx.caller.accountId, id) : null;
  if (!made) throw resourceMissing(NAME, id);
  const eventTime = unixSeconds(ctx.deps.clock);
  const scope = requestScope(ctx, tx, await billingNow(tx, made.row.testClockId, eventTime), eventTime);
  return { made, details: await detailsOfInvoice(tx, id), scope };
}

interface Terms {
  collectionMethod: string;
  daysUntilDue: number | null;
  dueDate: number | null;
}

/** `collection_method`, `days_until_due` and `due_date` over what an invoice had (`was`). */
function termsOf(params: Record<string, any>, was: Terms, now: number): Terms {
  if (params.days_until_due !== undefined && params.due_date !== undefined) throw parametersExclusive('days_until_due', 'due_date');
  const collectionMethod: string = params.collection_method ?? was.collectionMethod;
  if (collectionMethod === 'charge_automatically') {
    for (const name of ['days_until_due', 'due_date']) {
      if (params[name] !== undefined && params[name] !== '') {
        throw invalidRequest(`\`${name}\` can only be set on invoices with \`collection_method=send_invoice\`.`, 'parameter_invalid', name);
      }
    }
    return { collectionMethod, daysUntilDue: null, dueDate: null };
  }
  if (params.due_date !== undefined) {
    if (params.due_date <= now) throw invalidRequest('The `due_date` must be in the future.', 'parameter_invalid', 'due_date');
    return { collectionMethod, daysUntilDue: null, dueDate: params.due_date };
  }
  // A due date given before stays unless days replace it.
  if (params.days_until_due === undefined && was.collectionMethod === 'send_invoice' && was.dueDate !== null) return { collectionMethod, daysUntilDue: null, dueDate: was.dueDate };
  return { collectionMethod, daysUntilDue: params.days_until_due ?? was.daysUntilDue ?? DEFAULT_DAYS_UNTIL_DUE, dueDate: null };
}

/** A draft's due date: the one given, else its days from `from` (finalization fixes it from then). */
const dueDateOf = (terms: Terms, from: number): number | null =>
  terms.collectionMethod !== 'send_invoice' ? null : (terms.dueDate ?? from + DAY * (terms.daysUntilDue ?? DEFAULT_DAYS_UNTIL_DUE));

const writeRow = (tx: Tx, row: InvoiceRow) =>
  tx.invoice.update({
    where: { id: row.id },
    data: {
      status: row.status,
      collectionMethod: row.collectionMethod,
      dueDate: row.dueDate,
      defaultPaymentMethod: row.defaultPaymentMethod,
      metadata: row.metadata as Prisma.InputJsonValue,
      number: row.number,
      finalizedAt: row.finalizedAt,
      voidedAt: row.voidedAt,
      totals: row.totals as Prisma.InputJsonValue,
      amountDue: row.amountDue,
      discounts: row.discounts,
    },
    select: { id: true },
  });

/**
 * `rendering` as given over what the invoice had (`was`): a member sent replaces its own, an
 * empty `amount_tax_display` clears it. Templates are the Dashboard's, and Sandbank has none.
 */
function renderingOf(param: Record<string, any> | undefined, was: InvoiceRendering | null): InvoiceRendering | null {
  if (param === undefined) return was;
  if (param.template !== undefined) throw resourceMissing('invoice rendering template', String(param.template), 'rendering[template]', 400);
  if (param.template_version !== undefined && param.template_version !== '') throw parameterMissing('rendering[template]');
  const display = param.amount_tax_display === undefined ? (was?.amount_tax_display ?? null) : param.amount_tax_display || null;
  const pdf = param.pdf?.page_size === undefined ? (was?.pdf ?? null) : { page_size: param.pdf.page_size as string };
  return { amount_tax_display: display, pdf, template: null, template_version: null };
}

export async function createManualInvoice(ctx: RequestContext) {
  const { params, deps } = ctx;
  const accountId = ctx.caller.accountId;
  if (params.customer === undefined) throw parameterMissing('customer');
  const eventTime = unixSeconds(deps.clock);
  const result = await deps.prisma.$transaction(async (tx) => {
    const customerId: string = params.customer;
    await lockCustomer(new TxSql(tx), accountId, customerId, 'customer');
    const customer = await tx.customer.findUniqueOrThrow({ where: { id: customerId } });
    const now = await billingNow(tx, customer.testClockId, eventTime);
    const scope = requestScope(ctx, tx, now, eventTime);
    const terms = termsOf(params, { collectionMethod: 'charge_automatically', daysUntilDue: null, dueDate: null }, now);
    const include = params.pending_invoice_items_behavior === 'include';
    // Pending items a subscription will bill stay its own.
    const pending = include ? await tx.invoiceItem.findMany({ where: { accountId, customerId, invoiceId: null, subscriptionId: null }, orderBy: { seq: 'asc' }, select: { id: true, currency: true } }) : [];
    const currency = params.currency !== undefined ? currencyOf(params.currency) : (pending[0]?.currency ?? 'usd');
    const records = params.discounts === undefined ? await customerDiscountRecords(tx, customerId) : params.discounts === '' ? [] : await discountParams(scope, params.discounts, 'discounts');
    const defaultPaymentMethod = await attachedPaymentMethodParam(scope, ctx, params.default_payment_method, customerId);
    const id = newId('in');
    const drafted = draftInvoice({ customerId, subscription: null, currency, billingReason: 'manual', periodStart: now, periodEnd: now, lines: [], discounts: [] }, customer, now, id);
    const row: InvoiceRow = {
      ...drafted.row,
      collectionMethod: terms.collectionMethod,
      dueDate: dueDateOf(terms, now),
      defaultPaymentMethod: defaultPaymentMethod ?? null,
      metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
    };
    await tx.invoice.create({
      data: {
        ...row,
        accountId,
        totals: row.totals as Prisma.InputJsonValue,
        metadata: row.metadata as Prisma.InputJsonValue,
        subscriptionMetadata: Prisma.DbNull,
        lastPaymentError: Prisma.DbNull,
      },
      select: { id: true },
    });
    const autoAdvance: boolean = params.auto_advance ?? false;
    const details: InvoiceDetails = {
      description: params.description || null,
      footer: params.footer || null,
      autoAdvance,
      daysUntilDue: terms.daysUntilDue,
      discountRecords: records,
      markedUncollectibleAt: null,
      sentAt: null,
      finalizeAt: autoAdvance ? now + AUTO_FINALIZE_DELAY : null,
      rendering: renderingOf(params.rendering, null),
    };
    await saveDetails(tx, accountId, id, details);
    const taken = pending.filter((p) => p.currency === currency).map((p) => p.id);
    if (taken.length > 0) await tx.invoiceItem.updateMany({ where: { id: { in: taken } }, data: { invoiceId: id } });
    const made = await refreshDraft(scope, row);
    const object = await invoiceObject(tx, accountId, made, now, scope.deps);
    await emitIn(scope, 'invoice.created', object);
    return { object, events: scope.events, finalizeAt: details.finalizeAt };
  });
  await handOffEvents(deps.queues, result.events);
  if (result.finalizeAt !== null) await scheduleFinalization(deps, [result.object.id as string]);
  return result.object;
}

/** Parameters only a draft takes. */
const DRAFT_ONLY = ['collection_method', 'days_until_due', 'due_date', 'discounts', 'currency'];

export async function updateManualInvoice(ctx: RequestContext) {
  const { params, deps } = ctx;
  const accountId = ctx.caller.accountId;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { made, details, scope } = await lockOwned(ctx, tx);
    const before = made.row;
    const draft = before.status === 'draft';
    if (!draft) {
      const named = DRAFT_ONLY.find((name) => params[name] !== undefined);
      if (named) throw invalidRequest(`\`${named}\` can't be changed once an invoice is finalized; this invoice is ${before.status}.`, 'invoice_already_finalized', named);
      if (params.default_payment_method !== undefined && before.status !== 'open') {
        throw invalidRequest(`The default payment method of a ${before.status} invoice can't change.`, 'invoice_not_editable', 'default_payment_method');
      }
    }
    const terms = draft
      ? termsOf(params, { collectionMethod: before.collectionMethod, daysUntilDue: details.daysUntilDue, dueDate: details.daysUntilDue === null ? before.dueDate : null }, scope.now)
      : { collectionMethod: before.collectionMethod, daysUntilDue: details.daysUntilDue, dueDate: before.dueDate };
    const pm = await attachedPaymentMethodParam(scope, ctx, params.default_payment_method, before.customerId);
    const records = params.discounts === undefined ? details.discountRecords : params.discounts === '' ? [] : await discountParams(scope, params.discounts, 'discounts');
    const autoAdvance: boolean | null = params.auto_advance ?? details.autoAdvance;
    const nextDetails: InvoiceDetails = {
      ...details,
      description: params.description === undefined ? details.description : params.description || null,
      footer: params.footer === undefined ? details.footer : params.footer || null,
      rendering: renderingOf(params.rendering, details.rendering),
      autoAdvance,
      daysUntilDue: terms.daysUntilDue,
      discountRecords: records,
      finalizeAt: draft && autoAdvance ? (details.finalizeAt ?? before.created + AUTO_FINALIZE_DELAY) : null,
    };
    const row: InvoiceRow = {
      ...before,
      collectionMethod: terms.collectionMethod,
      dueDate: draft ? dueDateOf(terms, before.created) : before.dueDate,
      defaultPaymentMethod: pm === undefined ? before.defaultPaymentMethod : pm,
      metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
    };
    const was = await invoiceObject(tx, accountId, made, scope.now, scope.deps);
    await writeRow(tx, row);
    await saveDetails(tx, accountId, row.id, nextDetails);
    const after = draft && params.discounts !== undefined ? await refreshDraft(scope, row) : { row, lines: made.lines };
    const object = await invoiceObject(tx, accountId, after, scope.now, scope.deps);
    const previous = previousAttributes(was, object);
    if (Object.keys(previous).length > 0) await emitIn(scope, 'invoice.updated', object, previous);
    return { object, events: scope.events, finalizeAt: nextDetails.finalizeAt };
  });
  await handOffEvents(deps.queues, result.events);
  if (result.finalizeAt !== null) await scheduleFinalization(deps, [result.object.id as string]);
  return result.object;
}

export async function deleteManualInvoice(ctx: RequestContext) {
  const { deps } = ctx;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { made, scope } = await lockOwned(ctx, tx);
    if (made.row.status !== 'draft') throw invalidRequest(`You can only delete draft invoices; this invoice is ${made.row.status}. You may void it instead.`, 'invoice_not_editable', 'invoice');
    const object = await invoiceObject(tx, ctx.caller.accountId, made, scope.now, scope.deps);
    // Its items are pending again, for another invoice.
    await tx.invoiceItem.updateMany({ where: { invoiceId: made.row.id }, data: { invoiceId: null } });
    await tx.invoice.delete({ where: { id: made.row.id }, select: { id: true } });
    await emitIn(scope, 'invoice.deleted', object);
    return { id: made.row.id, events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  return { id: result.id, object: INVOICE_OBJECT, deleted: true as const };
}

/**
 * Finalizes a draft (a request or its auto-advance): its lines and totals worked out once more and
 * fixed, numbered, `open` (`invoice.finalized`); one that asks for nothing is paid at once
 * (`invoice.paid`), as the public API does.
 */
export async function finalizeDraft(scope: Scope, made: MadeInvoice, details: InvoiceDetails, autoAdvance?: boolean): Promise<MadeInvoice> {
  const { tx } = scope;
  const fresh = await refreshDraft(scope, made.row);
  const opened: InvoiceRow = {
    ...fresh.row,
    status: 'open',
    finalizedAt: scope.now,
    number: await nextInvoiceNumber(tx, made.row.customerId),
    dueDate: made.row.collectionMethod === 'send_invoice' && details.daysUntilDue !== null ? scope.now + DAY * details.daysUntilDue : made.row.dueDate,
  };
  await writeRow(tx, opened);
  // Its customer's balance applied (read after the number's lock on the customer).
  const row = await applyBalance(scope, opened, await tx.customer.findUniqueOrThrow({ where: { id: opened.customerId }, select: { balance: true, currency: true } }));
  await createInvoiceLink(tx, scope.deps, scope.accountId, row.id, scope.now);
  await saveDetails(tx, scope.accountId, row.id, { ...details, autoAdvance: autoAdvance ?? details.autoAdvance, finalizeAt: null });
  const finalized = { row, lines: fresh.lines };
  await emitIn(scope, 'invoice.finalized', await invoiceObject(tx, scope.accountId, finalized, scope.now, scope.deps));
  if (row.amountDue > 0n) return finalized;
  return (await collectInvoice(scope, finalized, null)).invoice;
}

export async function finalizeManualInvoice(ctx: RequestContext) {
  const { params, deps } = ctx;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { made, details, scope } = await lockOwned(ctx, tx);
    if (made.row.status !== 'draft') throw invalidRequest("This invoice is already finalized, you can't re-finalize a non-draft invoice.", 'invoice_already_finalized', 'invoice');
    const done = await finalizeDraft(scope, made, details, params.auto_advance);
    return { object: await invoiceObject(tx, ctx.caller.accountId, done, scope.now, scope.deps), events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  await scheduleOverdue(deps, { invoices: [result.object.id as string] });
  return result.object;
}

export async function voidManualInvoice(ctx: RequestContext) {
  const { deps } = ctx;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { made, details, scope } = await lockOwned(ctx, tx);
    const status = made.row.status;
    if (status === 'draft') throw invalidRequest("You can't void a draft invoice; delete it instead.", 'invoice_not_editable', 'invoice');
    if (status !== 'open' && status !== 'uncollectible') throw invalidRequest(`You can only void an open or uncollectible invoice; this invoice is ${status}.`, 'invoice_not_editable', 'invoice');
    const row: InvoiceRow = { ...made.row, status: 'void', voidedAt: scope.now };
    await writeRow(tx, row);
    if (details.autoAdvance !== null) await saveDetails(tx, scope.accountId, row.id, { ...details, autoAdvance: false });
    const object = await invoiceObject(tx, ctx.caller.accountId, { row, lines: made.lines }, scope.now, scope.deps);
    await emitIn(scope, 'invoice.voided', object);
    return { object, events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  return result.object;
}

export async function markManualInvoiceUncollectible(ctx: RequestContext) {
  const { deps } = ctx;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { made, details, scope } = await lockOwned(ctx, tx);
    if (made.row.status !== 'open') {
      throw invalidRequest(`You can only mark an open invoice as uncollectible; this invoice is ${made.row.status}.`, 'invoice_not_editable', 'invoice');
    }
    const row: InvoiceRow = { ...made.row, status: 'uncollectible' };
    await writeRow(tx, row);
    await saveDetails(tx, scope.accountId, row.id, { ...details, markedUncollectibleAt: scope.now });
    const object = await invoiceObject(tx, ctx.caller.accountId, { row, lines: made.lines }, scope.now, scope.deps);
    await emitIn(scope, 'invoice.marked_uncollectible', object);
    return { object, events: scope.events };
  });
  await handOffEvents(deps.queues, result.events);
  return result.object;
}

/** Sending is recorded (`invoice.sent`) and no email goes out, as in the public API's test mode; the status stays (a draft is finalized first). */
export async function sendManualInvoice(ctx: RequestContext) {
  const { deps } = ctx;
  const result = await deps.prisma.$transaction(async (tx) => {
    const { made, details, scope } = await lockOwned(ctx, tx);
    const { status, collectionMethod } = made.row;
    if (collectionMethod !== 'send_invoice') {
      throw invalidRequest("You can only manually send an invoice if its collection method is 'send_invoice'.", 'invoice_not_editable', 'invoice');
    }
    if (status === 'void') throw invalidRequest(`You can't send a ${status} invoice; only finalized invoices can be sent.`, 'invoice_not_editable', 'invoice');
    // A draft is finalized first, as the public API does (`invoice.finalized`).
    const sent = status === 'draft' ? await finalizeDraft(scope, made, details) : made;
    const kept = status === 'draft' ? await detailsOfInvoice(tx, made.row.id) : details;
    await saveDetails(tx, scope.accountId, made.row.id, { ...kept, sentAt: scope.now });
    const object = await invoiceObject(tx, ctx.caller.accountId, { row: sent.row, lines: sent.lines }, scope.now, scope.deps);
    await emitIn(scope, 'invoice.sent', object);
    return { object, events: scope.events, finalized: status === 'draft' };
  });
  await handOffEvents(deps.queues, result.events);
  if (result.finalized) await scheduleOverdue(deps, { invoices: [result.object.id as string] });
  return result.object;
}
