import { Prisma, type Customer } from '../../../generated/prisma/client';
import { hasIdShape, newId } from '../../../lib/ids';
import { ApiError, invalidRequest, resourceMissing } from '../../../kernel/errors';
import type { Deps, RequestContext } from '../../../kernel/route';
import { unixSeconds } from '../../../lib/clock';
import { prismaDb, type Db } from '../../../kernel/writes';
import { accountApiVersion, automaticCause, causeOf, emitIn as emitTo, holdingEvents, type EventCause, type Tx } from '../../../events/emit';
import type { EventType } from '../../../events/types';
import type { PriceRow } from '../prices/serializer';
import type { TaxRateRow } from '../tax_rates/serializer';
import { discountObjects, isCouponValid, type DiscountRecord } from '../coupons/serializer';
import type { Embedded } from '../../../kernel/versions';
import { applyCustomerBalance, resolvePaymentMethod, cancelInvoiceIntent, invoiceAttemptResult, payInvoiceAmount, type CustomerDiscount, type InvoiceIntent } from '../../payments';
import { cancelInvoicePayments, recordInvoicePayment } from '../invoice_payments/service';
import { addInterval, computeInvoice, type AppliedDiscount, type DiscountAmount, type LineInput, type LineTax } from './amounts';
import { serializeInvoice, type InvoiceLineRow, type InvoicePaymentSettings, type InvoiceRow, type LineRefs, type StoredTotals } from './serializer';
import { clearRetry, detailsByInvoice, detailsOfInvoice, nextAttempts, NO_DETAILS, retryOfInvoice, saveRetry, type InvoiceDetails } from './queries';
import { accountPolicy, retryDelaySeconds, type RetryPolicy } from './retries';
import { createInvoiceLink, invoiceLinks, type LinkDeps } from './links';

// Making and charging invoices, for whoever bills: a request (a subscription's creation or
// change, an invoice's payment) or the renewal worker. Everything happens in the caller's
// transaction, and events go to the outbox in it (`Scope.events` collects their ids).

/** What billing uses besides its transaction: payments seal an invoice's intent's secret and queue its challenge's expiry. */
export type BillingDeps = Pick<Deps, 'clock' | 'config' | 'encryption' | 'queues'>;

/** Where billing work happens: the transaction, whose account, at what time, and its events. */
export interface Scope {
  readonly tx: Tx;
  readonly deps: BillingDeps;
  readonly accountId: string;
  /** The version events are rendered at (the account's default). */
  readonly apiVersion: string;
  readonly cause: EventCause;
  /** Billing time: the test clock's frozen time for objects on a clock, else now. */
  readonly now: number;
  /** Real time, for events' `created` (billing time may be far in the past or future). */
  readonly eventTime: number;
  readonly events: string[];
  /** Where its writes through payments, and its events, go: `tx` at once, or with its events held (`heldScope`). */
  readonly db: Db;
}

export const requestScope = (ctx: RequestContext, tx: Tx, now: number, eventTime: number): Scope => ({
  tx,
  deps: ctx.deps,
  accountId: ctx.caller.accountId,
  apiVersion: ctx.caller.defaultApiVersion,
  cause: causeOf(ctx),
  now,
  eventTime,
  events: [],
  db: prismaDb(tx),
});

/**
 * The scope of work the system does on its own for an account, at billing time `now`.
 * `apiVersion`: the account's, when the caller has read it already.
 */
export async function systemScope(tx: Tx, deps: BillingDeps, accountId: string, now: number, apiVersion?: string): Promise<Scope> {
  return {
    tx,
    deps,
    accountId,
    apiVersion: apiVersion ?? (await accountApiVersion(tx, accountId, deps.config.defaultApiVersion)),
    cause: automaticCause,
    now,
    eventTime: unixSeconds(deps.clock),
    events: [],
    db: prismaDb(tx),
  };
}

/**
 * Runs `work` in `scope` with its events held, then writes them as one statement: for a step
 * that owns its transaction and writes many (a renewal). Answers the events' ids.
 */
export async function withHeldEvents(scope: Scope, work: (scope: Scope) => Promise<void>): Promise<string[]> {
  const db = holdingEvents(scope.db);
  const held: Scope = { ...scope, db };
  await work(held);
  await db.flush();
  return held.events;
}

export async function emitIn(scope: Scope, type: EventType, object: Record<string, unknown>, previous?: Record<string, unknown>): Promise<void> {
  scope.events.push(
    await emitTo(scope.db, type, object, { accountId: scope.accountId, apiVersion: scope.apiVersion, created: scope.eventTime, cause: scope.cause, previousAttributes: previous }),
  );
}

/** The account's tax rates by id (unknown ids are left out). */
export async function taxRatesById(tx: Tx, accountId: string, ids: readonly string[]): Promise<Map<string, TaxRateRow>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.taxRate.findMany({ where: { accountId, id: { in: [...new Set(ids)] } } });
  return new Map(rows.map(({ seq: _seq, accountId: _a, ...row }) => [row.id, row]));
}

/**
 * The prices and tax rates `lines` name, and the discounts of the subscriptions of their
 * invoices (`invoices`), for what older versions show whole (see `LineRefs`).
 */
export async function lineRefs(
  tx: Tx,
  accountId: string,
  lines: readonly Pick<InvoiceLineRow, 'priceId' | 'taxes'>[],
  invoices: readonly Pick<InvoiceRow, 'id' | 'subscriptionId' | 'discounts'>[] = [],
  now = 0,
  /** To show the invoices' hosted page and PDF URLs (their tokens are sealed). */
  linkDeps?: LinkDeps,
  /** What the caller knows already (of the invoice it just made): not read again. */
  known: Partial<LineRefs> = {},
): Promise<LineRefs> {
  const rateIds = lines.flatMap((l) => (l.taxes as unknown as LineTax[]).map((t) => t.tax_rate_details.tax_rate));
  const ids = invoices.map((i) => i.id);
  const [prices, taxRates, discounts, intents, retries, links, paymentSettings] = await Promise.all([
    known.prices ?? pricesById(tx, accountId, lines.map((l) => l.priceId)),
    known.taxRates ?? taxRatesById(tx, accountId, rateIds),
    known.discounts ?? invoiceDiscounts(tx, invoices, now),
    known.intents ?? invoiceIntents(tx, ids),
    known.retries ?? nextAttempts(tx, ids),
    known.links ?? (linkDeps ? invoiceLinks(tx, linkDeps, ids) : undefined),
    known.paymentSettings ?? invoicePaymentSettings(tx, invoices),
  ]);
  return { prices, taxRates, discounts, intents, retries, links, paymentSettings };
}

/**
 * The payment settings of subscription invoices: those they were made with; a preview (no row
 * yet) shows its subscription's, as the invoice it previews will.
 */
async function invoicePaymentSettings(tx: Tx, invoices: readonly Pick<InvoiceRow, 'id' | 'subscriptionId'>[]): Promise<LineRefs['paymentSettings']> {
  const ofSubscriptions = invoices.filter((i) => i.subscriptionId !== null);
  if (ofSubscriptions.length === 0) return new Map();
  const rows = await tx.$queryRaw<{ id: string; settings: InvoicePaymentSettings | null }[]>`
    SELECT v.id, CASE WHEN i.id IS NULL THEN s.payment_settings ELSE i.payment_settings END AS settings
    FROM unnest(${ofSubscriptions.map((i) => i.id)}::text[], ${ofSubscriptions.map((i) => i.subscriptionId as string)}::text[]) AS v(id, sub)
    LEFT JOIN invoices i ON i.id = v.id
    LEFT JOIN subscriptions s ON s.id = v.sub`;
  return new Map(rows.flatMap((r) => (r.settings ? [[r.id, keptSettings(r.settings)] as const] : [])));
}

/** The part of a subscription's payment settings an invoice shows. */
const keptSettings = (settings: InvoicePaymentSettings): InvoicePaymentSettings => ({
  payment_method_options: settings.payment_method_options ?? null,
  payment_method_types: settings.payment_method_types ?? null,
});

/** The PaymentIntent each invoice is paid through (its newest) and its latest charge, by invoice. */
async function invoiceIntents(tx: Tx, invoiceIds: readonly string[]): Promise<LineRefs['intents']> {
  if (invoiceIds.length === 0) return new Map();
  const rows = await tx.paymentIntent.findMany({ where: { invoiceId: { in: [...new Set(invoiceIds)] } }, orderBy: { seq: 'asc' }, select: { id: true, invoiceId: true, latestChargeId: true } });
  return new Map(rows.map((r) => [r.invoiceId!, { paymentIntent: r.id, charge: r.latestChargeId }]));
}

/** What the lines of a draft refer to, at hand: their prices and tax rates. */
export const draftLineRefs = (lines: readonly DraftLine[]): Pick<LineRefs, 'prices' | 'taxRates'> => ({
  prices: new Map(lines.map((l) => [l.price.id, l.price])),
  taxRates: new Map(lines.flatMap((l) => l.taxRates.map((r) => [r.id, r] as const))),
});

/** The same, with the discounts of the draft's subscription. */
const draftRefs = async (tx: Tx, lines: readonly DraftLine[], invoice: Pick<InvoiceRow, 'subscriptionId' | 'discounts'>, now: number): Promise<LineRefs> => ({
  ...draftLineRefs(lines),
  discounts: await invoiceDiscounts(tx, [invoice], now),
});

/** The discounts of the subscriptions of those invoices that have discounts. */
const invoiceDiscounts = (tx: Tx, invoices: readonly Pick<InvoiceRow, 'subscriptionId' | 'discounts'>[], now: number) =>
  subscriptionDiscounts(
    tx,
    invoices.flatMap((i) => (i.subscriptionId === null || i.discounts.length === 0 ? [] : [i.subscriptionId])),
    now,
  );

/** A stored discount and what it belongs to. */
export interface OwnedDiscount {
  readonly record: DiscountRecord;
  readonly customer: string;
  readonly subscription: string | null;
  readonly subscriptionItem: string | null;
}

/** `owned` as `discount` objects, with their coupons (`valid` at `now`), by id (see `discountObjects`). */
export async function discountRefs(tx: Tx, owned: readonly OwnedDiscount[], now: number): Promise<Embedded> {
  if (owned.length === 0) return {};
  const coupons = await tx.coupon.findMany({ where: { seq: { in: [...new Set(owned.map((o) => o.record.coupon_seq))].map(BigInt) } } });
  const bySeq = new Map(coupons.map(({ seq, accountId: _a, ...c }) => [String(seq), c]));
  return Object.assign(
    {},
    ...owned.flatMap((o) => {
      const coupon = bySeq.get(o.record.coupon_seq);
      return coupon ? [discountObjects(o.record, coupon, o, now)] : [];
    }),
  );
}

/** The discounts subscriptions and their items carry now (an invoice's are among them while they last). */
async function subscriptionDiscounts(tx: Tx, ids: readonly string[], now: number): Promise<Embedded> {
  if (ids.length === 0) return {};
  const unique = [...new Set(ids)];
  const [subs, items] = await Promise.all([
    tx.subscription.findMany({ where: { id: { in: unique } }, select: { id: true, customerId: true, discounts: true } }),
    tx.subscriptionItem.findMany({ where: { subscriptionId: { in: unique } }, select: { id: true, subscriptionId: true, discounts: true } }),
  ]);
  const customerOf = new Map(subs.map((s) => [s.id, s.customerId]));
  const records = (stored: unknown) => (Array.isArray(stored) ? (stored as unknown as DiscountRecord[]) : []);
  // A subscription without a discount of its own bills its customer's (by SQL: the column is newer than some generated clients).
  const customerIds = [...new Set(subs.filter((s) => records(s.discounts).length === 0).map((s) => s.customerId))];
  const customers =
    customerIds.length === 0 ? [] : await tx.$queryRaw<{ id: string; discounts: unknown }[]>`SELECT id, discounts FROM customers WHERE id IN (${Prisma.join(customerIds)})`;
  return discountRefs(
    tx,
    [
      ...customers.flatMap((c) => records(c.discounts).map((record) => ({ record, customer: c.id, subscription: null, subscriptionItem: null }))),
      ...subs.flatMap((s) => records(s.discounts).map((record) => ({ record, customer: s.customerId, subscription: s.id, subscriptionItem: null }))),
      ...items.flatMap((i) =>
        records(i.discounts).map((record) => ({ record, customer: customerOf.get(i.subscriptionId) ?? '', subscription: i.subscriptionId, subscriptionItem: i.id })),
      ),
    ],
    now,
  );
}

/** The account's prices by id. */
export async function pricesById(tx: Tx, accountId: string, ids: readonly string[]): Promise<Map<string, PriceRow>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.price.findMany({ where: { accountId, id: { in: [...new Set(ids)] } } });
  return new Map(rows.map(({ seq: _seq, accountId: _a, ...row }) => [row.id, row]));
}

/** One line an invoice is about to bill, with its amount worked out (its currency and product are its price's). */
export interface DraftLine extends Omit<LineInput, 'currency' | 'productId'> {
  readonly invoiceItemId: string | null;
  readonly subscriptionItemId: string | null;
  readonly price: PriceRow;
  readonly quantity: number | null;
  readonly description: string;
  readonly proration: boolean;
  readonly periodStart: number;
  readonly periodEnd: number;
}

export interface InvoiceSpec {
  readonly customerId: string;
  readonly subscription: { id: string; metadata: unknown; testClockId: string | null; collectionMethod: string; daysUntilDue: number | null; defaultPaymentMethod: string | null } | null;
  readonly currency: string;
  readonly billingReason: string;
  readonly periodStart: number;
  readonly periodEnd: number;
  readonly lines: readonly DraftLine[];
  readonly discounts: readonly AppliedDiscount[];
  readonly prorationDate?: number;
  /** The new invoice's id, when the caller must name it first (in an event before the invoice's). */
  readonly id?: string;
  /** Left a draft, not finalized (a subscription's `pause_collection[behavior]=keep_as_draft`). */
  readonly draft?: boolean;
}

/**
 * What an invoice made for `spec` would ask for (amount_due), without writing anything: with
 * `customer`, its balance applied as finalizing will (in the lines' currency only).
 */
export function amountDueOf(spec: Pick<InvoiceSpec, 'lines' | 'discounts'>, customer?: Pick<Customer, 'balance' | 'currency'> | null): number {
  const total = computeInvoice(spec.lines.map(lineInputOf), spec.discounts).totals.total;
  const currency = spec.lines[0]?.price.currency;
  const balance = customer && (customer.currency === null || customer.currency === currency) ? Number(customer.balance) : 0;
  return Math.max(0, total + balance);
}

const lineInputOf = (line: DraftLine) => ({
  amount: line.amount,
  currency: line.price.currency,
  productId: line.price.productId,
  discountable: line.discountable,
  taxRates: line.taxRates,
  discountAmounts: line.discountAmounts,
  discounts: line.discounts,
});

export interface MadeInvoice {
  readonly row: InvoiceRow;
  readonly lines: InvoiceLineRow[];
  /**
   * What its object refers to, as known by whoever made or charged it in this transaction (its
   * details too: a new invoice has none), so its next event reads none of it again.
   */
  readonly known?: Partial<LineRefs> & { readonly details?: InvoiceDetails };
}

type CustomerDetails = Pick<Customer, 'id' | 'email' | 'name' | 'phone' | 'address' | 'shipping' | 'taxExempt' | 'testClockId'>;

/** The draft an invoice for `spec` is (its lines and totals worked out), written nowhere. */
export function draftInvoice(spec: InvoiceSpec, customer: CustomerDetails, now: number, id: string): MadeInvoice {
  const { lines: results, totals } = computeInvoice(spec.lines.map(lineInputOf), spec.discounts);
  const stored: StoredTotals = {
    ...totals,
    customer: { email: customer.email, name: customer.name, phone: customer.phone, address: customer.address, shipping: customer.shipping, tax_exempt: customer.taxExempt },
  };
  const sub = spec.subscription;
  const row: InvoiceRow = {
    id,
    customerId: customer.id,
    subscriptionId: sub?.id ?? null,
    testClockId: sub?.testClockId ?? customer.testClockId,
    created: now,
    status: 'draft',
    billingReason: spec.billingReason,
    collectionMethod: sub?.collectionMethod ?? 'charge_automatically',
    currency: spec.currency,
    periodStart: spec.periodStart,
    periodEnd: spec.periodEnd,
    totals: stored as unknown as Prisma.JsonValue,
    amountDue: BigInt(Math.max(0, totals.total)),
    amountPaid: 0n,
    attemptCount: 0,
    number: null,
    defaultPaymentMethod: sub?.defaultPaymentMethod ?? null,
    dueDate: sub?.collectionMethod === 'send_invoice' ? now + 86_400 * (sub.daysUntilDue ?? 30) : null,
    finalizedAt: null,
    paidAt: null,
    voidedAt: null,
    lastPaymentError: null,
    discounts: [...new Set(results.flatMap((r) => r.discount_amounts.map((d) => d.discount)))],
    metadata: {},
    subscriptionMetadata: (sub?.metadata ?? null) as Prisma.JsonValue,
    subscriptionProrationDate: spec.prorationDate ?? null,
    startingBalance: 0n,
    endingBalance: null,
  };
  const lines: InvoiceLineRow[] = spec.lines.map((line, i) => ({
    id: newId('il'),
    invoiceId: id,
    invoiceItemId: line.invoiceItemId,
    subscriptionId: sub?.id ?? null,
    subscriptionItemId: line.subscriptionItemId,
    priceId: line.price.id,
    productId: line.price.productId,
    quantity: line.quantity,
    unitAmountDecimal: line.price.unitAmountDecimal,
    amount: BigInt(line.amount),
    currency: spec.currency,
    description: line.description,
    proration: line.proration,
    discountable: line.discountable,
    periodStart: line.periodStart,
    periodEnd: line.periodEnd,
    discounts: results[i].discount_amounts.map((d) => d.discount),
    discountAmounts: results[i].discount_amounts as unknown as Prisma.JsonValue,
    taxes: results[i].taxes as unknown as Prisma.JsonValue,
    metadata: {},
  }));
  return { row, lines };
}

/**
 * The number a customer's next finalized invoice takes: its invoice prefix (as the customer
 * object shows it) and a sequence, `ABCD1234-0001`. Numbers follow each other per customer: the
 * customer's lock keeps two invoices from sharing one.
 */
export async function nextInvoiceNumber(tx: Tx, customerId: string): Promise<string> {
  await tx.$queryRaw`SELECT id FROM customers WHERE id = ${customerId} FOR NO KEY UPDATE`;
  // A statement of its own: its snapshot, taken after the lock, sees the number the lock's last holder gave.
  const numbered = await tx.invoice.count({ where: { customerId, number: { not: null } } });
  return `${customerId.slice(4, 12).toUpperCase()}-${String(numbered + 1).padStart(4, '0')}`;
}

/**
 * Makes an invoice for `spec` and finalizes it at once (`invoice.created`, `invoice.finalized`):
 * its lines and totals are fixed, the invoice items it bills are no longer pending, and it is
 * `open` with a number. Subscriptions' renewal invoices are finalized at once too, where the
 * public API leaves them a draft for about an hour.
 */
export async function createInvoice(scope: Scope, spec: InvoiceSpec): Promise<MadeInvoice> {
  const { tx } = scope;
  const customer = await tx.customer.findUniqueOrThrow({ where: { id: spec.customerId } });
  const number = await nextInvoiceNumber(tx, customer.id);
  const { row: draft, lines } = draftInvoice(spec, customer, scope.now, spec.id ?? newId('in'));
  const id = draft.id;
  // Stored finalized at once (unless it stays a draft); `invoice.created` still shows the draft it was.
  let row: InvoiceRow = spec.draft ? draft : { ...draft, status: 'open', finalizedAt: scope.now, number };
  await tx.invoice.create({
    data: {
      ...row,
      accountId: scope.accountId,
      totals: draft.totals as Prisma.InputJsonValue,
      metadata: {},
      subscriptionMetadata: draft.subscriptionMetadata === null ? Prisma.DbNull : (draft.subscriptionMetadata as Prisma.InputJsonValue),
      lastPaymentError: Prisma.DbNull,
    },
    select: { id: true },
  });
  // One statement, in line order (seq follows it).
  await tx.invoiceLine.createMany({ data: lines.map((l) => ({ ...l, discountAmounts: l.discountAmounts as Prisma.InputJsonValue, taxes: l.taxes as Prisma.InputJsonValue, metadata: {} })) });
  const items = spec.lines.flatMap((l) => (l.invoiceItemId ? [l.invoiceItemId] : []));
  if (items.length > 0) await tx.invoiceItem.updateMany({ where: { id: { in: items } }, data: { invoiceId: id } });
  const defaultRates: TaxRateRow[] = [];
  const refs = { ...(await draftRefs(tx, spec.lines, draft, scope.now)), paymentSettings: await copyPaymentSettings(tx, draft) };
  await emitIn(scope, 'invoice.created', serializeInvoice(draft, lines, defaultRates, refs));
  if (spec.draft) return { row: draft, lines };
  row = await applyBalance(scope, row, customer);
  const links = new Map([[id, await createInvoiceLink(tx, scope.deps, scope.accountId, id, scope.now)]]);
  const known = { ...refs, links, intents: new Map(), retries: new Map(), details: NO_DETAILS };
  await emitIn(scope, 'invoice.finalized', serializeInvoice(row, lines, defaultRates, known));
  return { row, lines, known };
}

/**
 * Applies the customer's balance (as read under its lock) to an invoice being finalized, after its
 * `invoice.created` and before its `invoice.finalized`: `starting_balance`, `ending_balance` and
 * what is left due written on its row (only when the balance moves: otherwise both are 0).
 */
export async function applyBalance(scope: Scope, row: InvoiceRow, customer: Pick<Customer, 'balance' | 'currency'>): Promise<InvoiceRow> {
  const total = BigInt((row.totals as unknown as StoredTotals).total);
  if (customer.balance === 0n && total >= 0n) return row;
  const events = { accountId: scope.accountId, apiVersion: scope.apiVersion, created: scope.eventTime, cause: scope.cause };
  const applied = await applyCustomerBalance(scope.tx, scope.db, { accountId: scope.accountId, customerId: row.customerId, invoiceId: row.id, currency: row.currency, total }, customer, events);
  const next: InvoiceRow = { ...row, startingBalance: applied.startingBalance, endingBalance: applied.endingBalance, amountDue: applied.amountDue };
  await scope.tx.invoice.update({ where: { id: row.id }, data: { startingBalance: next.startingBalance, endingBalance: next.endingBalance, amountDue: next.amountDue }, select: { id: true } });
  return next;
}

/** A subscription's invoice keeps the payment settings its subscription has when it is made. */
async function copyPaymentSettings(tx: Tx, invoice: Pick<InvoiceRow, 'id' | 'subscriptionId'>): Promise<LineRefs['paymentSettings']> {
  if (invoice.subscriptionId === null) return new Map();
  const [copied] = await tx.$queryRaw<{ settings: InvoicePaymentSettings | null }[]>`
    UPDATE invoices SET payment_settings = (SELECT payment_settings FROM subscriptions WHERE id = ${invoice.subscriptionId})
    WHERE id = ${invoice.id} RETURNING payment_settings AS settings`;
  return copied?.settings ? new Map([[invoice.id, keptSettings(copied.settings)]]) : new Map();
}

/** What charging a payment method does, known before anything is written. */
export type Charge =
  | { kind: 'paid' }
  | { kind: 'declined'; error: ApiError }
  | { kind: 'action_required'; error: ApiError }
  | { kind: 'no_payment_method'; error: ApiError };

export const noPaymentMethod = (): ApiError =>
  new ApiError({
    status: 400,
    message: 'This customer has no attached payment source or default payment method. Please consider adding a default payment method.',
    code: 'invoice_no_payment_method_types',
  });

const authenticationRequired = (): ApiError =>
  new ApiError({
    status: 402,
    type: 'card_error',
    code: 'authentication_required',
    message: 'Your card was declined. This transaction requires authentication.',
    extra: { decline_code: 'authentication_required' },
  });

/**
 * What charging `amount` to a payment method of the account would do, known before anything is
 * written: the invoice's PaymentIntent decides the same way (payments' `invoiceAttemptResult`);
 * a charge of nothing always succeeds.
 */
export async function chargeOutcome(tx: Tx, accountId: string, paymentMethodId: string | null, amount: number): Promise<Charge> {
  if (amount <= 0) return { kind: 'paid' };
  const pm = paymentMethodId === null ? null : await tx.paymentMethod.findFirst({ where: { id: paymentMethodId, accountId }, select: { outcome: true, offSessionReady: true } });
  if (!pm) return { kind: 'no_payment_method', error: noPaymentMethod() };
  const result = invoiceAttemptResult(pm);
  if (result === 'succeeds') return { kind: 'paid' };
  if (result === 'authenticate') return { kind: 'action_required', error: authenticationRequired() };
  return { kind: 'declined', error: result };
}

/** The payment method an invoice is charged to: its own default, else its customer's. */
export async function paymentMethodFor(tx: Tx, invoice: Pick<InvoiceRow, 'defaultPaymentMethod' | 'customerId'>): Promise<string | null> {
  if (invoice.defaultPaymentMethod) return invoice.defaultPaymentMethod;
  const customer = await tx.customer.findUnique({ where: { id: invoice.customerId }, select: { defaultPaymentMethod: true } });
  return customer?.defaultPaymentMethod ?? null;
}

/** The description of an invoice's PaymentIntent, as the public API gives it. */
const intentDescription = (row: InvoiceRow): string =>
  row.billingReason === 'subscription_create' ? 'Subscription creation' : row.billingReason === 'subscription_update' ? 'Subscription update' : row.billingReason === 'subscription_cycle' ? 'Subscription cycle' : 'Payment for Invoice';

/** The payment through the invoice's PaymentIntent (made, or its open one confirmed again); its events join the scope's. */
async function payThroughIntent(scope: Scope, made: MadeInvoice, paymentMethodId: string | null, confirm: boolean, setupFutureUsage?: 'off_session', returnUrl?: string) {
  const { row } = made;
  const paid = await payInvoiceAmount(scope.db, scope.deps, {
    newInvoice: made.known?.intents?.size === 0,
    accountId: scope.accountId,
    invoiceId: row.id,
    customerId: row.customerId,
    amount: Number(row.amountDue),
    currency: row.currency,
    description: intentDescription(row),
    paymentMethodId,
    confirm,
    setupFutureUsage,
    returnUrl,
    now: scope.now,
    events: { accountId: scope.accountId, apiVersion: scope.apiVersion, created: scope.eventTime, cause: scope.cause },
  });
  scope.events.push(...paid.eventIds);
  await recordInvoicePayment(scope.db, row, paid.intent, scope.now);
  return paid;
}

/** Voiding an invoice cancels its open PaymentIntent (`void_invoice`). */
export async function cancelInvoicePayment(scope: Scope, invoiceId: string): Promise<void> {
  const events = { accountId: scope.accountId, apiVersion: scope.apiVersion, created: scope.eventTime, cause: scope.cause };
  scope.events.push(...(await cancelInvoiceIntent(scope.db, scope.deps, scope.accountId, invoiceId, scope.now, events)));
  await cancelInvoicePayments(scope.db, invoiceId, scope.now);
}

/**
 * Opens an invoice's PaymentIntent without charging it (`default_incomplete`): it waits for its
 * customer to confirm it with its client secret (with `paymentMethodId`, requires_confirmation).
 */
export async function openInvoicePayment(scope: Scope, made: MadeInvoice, paymentMethodId: string | null, setupFutureUsage?: 'off_session'): Promise<void> {
  if (Number(made.row.amountDue) <= 0) return;
  await payThroughIntent(scope, made, paymentMethodId, false, setupFutureUsage);
}

/**
 * Attempts to collect an open invoice with `paymentMethodId` (default: the invoice's or its
 * customer's) through its PaymentIntent, which records the charge: paid (`invoice.paid`,
 * `invoice.payment_succeeded`), or still open with the attempt counted and the decline recorded
 * (`invoice.payment_failed`, or `invoice.payment_action_required` for a card that asks for
 * authentication: the intent waits in requires_action, and its customer's answer pays the invoice).
 * `returnUrl`: where that challenge sends its customer back to (the hosted invoice page paying it).
 */
export async function collectInvoice(
  scope: Scope,
  made: MadeInvoice,
  paymentMethodId?: string | null,
  options: { retries?: 'start' | 'retry'; returnUrl?: string } = {},
): Promise<{ invoice: MadeInvoice; charge: Charge; retries: RetryOutcome }> {
  const { tx } = scope;
  const pmId = paymentMethodId === undefined ? await paymentMethodFor(tx, made.row) : paymentMethodId;
  const amount = Number(made.row.amountDue);
  let charge: Charge = { kind: 'paid' };
  let error: Prisma.JsonValue = null;
  let intent: { paymentIntent: string; charge: string | null } | null = null;
  if (amount > 0) {
    const pm = pmId === null ? null : await tx.paymentMethod.findFirst({ where: { id: pmId, accountId: scope.accountId }, select: { id: true } });
    const paid = await payThroughIntent(scope, made, pm?.id ?? null, true, undefined, options.returnUrl);
    intent = { paymentIntent: paid.intent.id, charge: paid.intent.latestChargeId };
    if (pm === null) charge = { kind: 'no_payment_method', error: noPaymentMethod() };
    else if (paid.error) charge = { kind: 'declined', error: paid.error };
    else if (paid.intent.status === 'requires_action') charge = { kind: 'action_required', error: authenticationRequired() };
    // The intent's own error when it has one (the decline with its charge), else what billing answers.
    if (charge.kind !== 'paid') error = paid.intent.lastPaymentError ?? (charge.error.toBody().error as Prisma.JsonValue);
  }
  let row: InvoiceRow;
  if (charge.kind === 'paid') {
    row = { ...made.row, status: 'paid', amountPaid: made.row.amountDue, paidAt: scope.now, attemptCount: made.row.attemptCount + (amount > 0 ? 1 : 0), lastPaymentError: null };
  } else {
    row = { ...made.row, attemptCount: made.row.attemptCount + 1, lastPaymentError: error };
  }
  await saveCollection(tx, row);
  // Written before the events, which show `next_payment_attempt`. A paid invoice's schedule ends
  // (a new one, known to have no retry, has none to end).
  let retries: RetryOutcome = { exhausted: null };
  if (charge.kind !== 'paid') retries = await scheduleRetry(scope, row, charge, options.retries);
  else if (made.known?.retries?.size !== 0) await clearRetry(tx, row.id);
  // A new invoice's intent is the one just made, and a paid one has no retry left.
  const known = made.known && intent ? { ...made.known, intents: new Map([[row.id, intent]]), retries: charge.kind === 'paid' ? new Map() : undefined } : undefined;
  const invoice: MadeInvoice = { row, lines: made.lines, known };
  const object = await invoiceObject(tx, scope.accountId, invoice, scope.now, scope.deps);
  if (charge.kind === 'paid') {
    await emitIn(scope, 'invoice.paid', object);
    await emitIn(scope, 'invoice.payment_succeeded', object);
  } else if (charge.kind === 'action_required') {
    await emitIn(scope, 'invoice.payment_action_required', object);
  } else {
    await emitIn(scope, 'invoice.payment_failed', object);
  }
  return { invoice, charge, retries };
}

/** Where an invoice's retry schedule stands after an attempt: `exhausted` is the policy whose last retry just failed. */
export interface RetryOutcome {
  readonly exhausted: RetryPolicy | null;
}

/**
 * Dunning after a failed attempt: `start` (a subscription's automatic charge) begins the schedule
 * unless one runs (the first retry `days[0]` after now); `retry` (a scheduled retry) moves it to
 * the next retry, counted from this one's due time, or ends it after the last. Other attempts
 * (`POST /v1/invoices/{id}/pay`) leave it as it is. A card asking for authentication starts none:
 * its customer must answer the challenge.
 */
async function scheduleRetry(scope: Scope, row: InvoiceRow, charge: Charge, mode: 'start' | 'retry' | undefined): Promise<RetryOutcome> {
  if (mode === undefined) return { exhausted: null };
  const { tx } = scope;
  const current = await retryOfInvoice(tx, row.id, true);
  if (mode === 'start') {
    if (current !== null || charge.kind === 'action_required') return { exhausted: null };
    const policy = await accountPolicy(tx, scope.deps.config, scope.accountId);
    await saveRetry(tx, { invoiceId: row.id, accountId: scope.accountId, testClockId: row.testClockId, nextAttemptAt: scope.now + retryDelaySeconds(policy.days[0]), retriesDone: 0, policy });
    return { exhausted: null };
  }
  if (current === null) return { exhausted: null };
  const done = current.retriesDone + 1;
  if (done >= current.policy.days.length) {
    await clearRetry(tx, row.id);
    return { exhausted: current.policy };
  }
  await saveRetry(tx, { ...current, retriesDone: done, nextAttemptAt: current.nextAttemptAt + retryDelaySeconds(current.policy.days[done]) });
  return { exhausted: null };
}

async function saveCollection(tx: Tx, row: InvoiceRow): Promise<void> {
  await tx.invoice.update({
    where: { id: row.id },
    data: {
      status: row.status,
      amountPaid: row.amountPaid,
      paidAt: row.paidAt,
      attemptCount: row.attemptCount,
      lastPaymentError: row.lastPaymentError === null ? Prisma.DbNull : (row.lastPaymentError as Prisma.InputJsonValue),
    },
    select: { id: true },
  });
}

/**
 * An invoice's PaymentIntent settled outside billing's collection (its customer confirmed it or
 * answered its challenge): a success pays the open invoice (`invoice.paid`,
 * `invoice.payment_succeeded`), a failure is recorded on it (`invoice.payment_failed`). Answers
 * the scope it worked in and the invoice, or null when the invoice is no longer open.
 */
export async function settleInvoiceIntent(tx: Tx, deps: BillingDeps, intent: InvoiceIntent, outcome: 'succeeded' | 'failed'): Promise<{ scope: Scope; invoice: MadeInvoice } | null> {
  const made = await lockInvoice(tx, intent.accountId, intent.invoiceId!);
  if (!made || made.row.status !== 'open') return null;
  const eventTime = unixSeconds(deps.clock);
  const clock = made.row.testClockId === null ? null : await tx.testClock.findUnique({ where: { id: made.row.testClockId }, select: { frozenTime: true } });
  const scope: Scope = {
    tx,
    deps,
    accountId: intent.accountId,
    apiVersion: await accountApiVersion(tx, intent.accountId, deps.config.defaultApiVersion),
    cause: automaticCause,
    now: clock?.frozenTime ?? eventTime,
    eventTime,
    events: [],
    db: prismaDb(tx),
  };
  const row: InvoiceRow =
    outcome === 'succeeded'
      ? { ...made.row, status: 'paid', amountPaid: made.row.amountDue, paidAt: scope.now, attemptCount: Math.max(1, made.row.attemptCount), lastPaymentError: null }
      : { ...made.row, lastPaymentError: intent.lastPaymentError };
  await saveCollection(tx, row);
  // Paid by its customer: no retry runs after.
  if (outcome === 'succeeded') await clearRetry(tx, row.id);
  await recordInvoicePayment(scope.db, row, intent, scope.now);
  const object = await invoiceObject(tx, scope.accountId, { row, lines: made.lines }, scope.now, scope.deps);
  if (outcome === 'succeeded') {
    await emitIn(scope, 'invoice.paid', object);
    await emitIn(scope, 'invoice.payment_succeeded', object);
  } else {
    await emitIn(scope, 'invoice.payment_failed', object);
  }
  return { scope, invoice: { row, lines: made.lines } };
}

// Billing's lock order, in every transaction that locks more than one of these rows: the customer,
// then its subscription, then the invoice, then what hangs off the invoice (its retry row, its
// PaymentIntent). A path that starts from an invoice (a payment, a retry, an overdue notice, a
// draft's finalization) reads its owners unlocked first (an invoice's customer and subscription,
// a subscription's customer never change) and locks them before it; one that starts from a
// subscription (a renewal, an unpaid first invoice expiring, a change) locks its customer first.
// Without one order, a retry (invoice, then subscription) and an expiry (subscription, then
// invoice), or a renewal (subscription, then customer for the invoice's number) and a finalization
// (invoice, then customer), could each wait for the other. Locking a row held already is free.
// The customer's lock is NO KEY UPDATE: rows referring to the customer can still be inserted.

/** Locks `customerId`, then `subscriptionId` (when given), as billing's lock order says. */
export async function lockOwners(tx: Tx, customerId: string, subscriptionId: string | null): Promise<void> {
  await tx.$queryRaw`SELECT id FROM customers WHERE id = ${customerId} FOR NO KEY UPDATE`;
  if (subscriptionId !== null) await tx.$queryRaw`SELECT id FROM subscriptions WHERE id = ${subscriptionId} FOR UPDATE`;
}

/** Locks subscription `id` (of `accountId` when given) after its customer; answers whether there is one. */
export async function lockSubscriptionRow(tx: Tx, id: string, accountId?: string): Promise<boolean> {
  // The customer found and locked in one statement (a subscription's customer never changes).
  const owner =
    accountId === undefined
      ? await tx.$queryRaw<{ id: string }[]>`SELECT id FROM customers WHERE id = (SELECT customer_id FROM subscriptions WHERE id = ${id}) FOR NO KEY UPDATE`
      : await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM customers WHERE id = (SELECT customer_id FROM subscriptions WHERE id = ${id} AND account_id = ${accountId}) FOR NO KEY UPDATE`;
  if (owner.length === 0) return false;
  await tx.$queryRaw`SELECT id FROM subscriptions WHERE id = ${id} FOR UPDATE`;
  return true;
}

/** An invoice of the account with its lines, locked (after its customer and subscription) for the rest of the transaction; null when there is none. */
export async function lockInvoice(tx: Tx, accountId: string, id: string): Promise<MadeInvoice | null> {
  const [owner] = await tx.$queryRaw<{ customer_id: string; subscription_id: string | null }[]>`
    SELECT customer_id, subscription_id FROM invoices WHERE id = ${id} AND account_id = ${accountId}`;
  if (!owner) return null;
  await lockOwners(tx, owner.customer_id, owner.subscription_id);
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM invoices WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;
  if (locked.length === 0) return null;
  const { seq: _seq, accountId: _a, ...row } = await tx.invoice.findUniqueOrThrow({ where: { id } });
  const lines = await tx.invoiceLine.findMany({ where: { invoiceId: id }, orderBy: { seq: 'asc' } });
  return { row, lines: lines.map(({ seq: _s, ...l }) => l) };
}

/** A draft's stored lines that no invoice item made (a subscription's period), as lines to bill again, their discounts carried. */
async function periodLinesOf(scope: Scope, invoiceId: string): Promise<DraftLine[]> {
  const stored = await scope.tx.invoiceLine.findMany({ where: { invoiceId, invoiceItemId: null }, orderBy: { seq: 'asc' } });
  const rateIds = (l: (typeof stored)[number]) => (l.taxes as unknown as LineTax[]).map((t) => t.tax_rate_details.tax_rate);
  const [prices, rates] = await Promise.all([pricesById(scope.tx, scope.accountId, stored.map((l) => l.priceId)), taxRatesById(scope.tx, scope.accountId, stored.flatMap(rateIds))]);
  return stored.map((l) => ({ ...billedLine(l, prices, rates, rateIds(l)), invoiceItemId: null, discountAmounts: l.discountAmounts as unknown as DiscountAmount[] }));
}

/** What a stored line or invoice item bills, with its price and tax rates (`rateIds`) looked up. */
function billedLine(
  l: Pick<StoredItem, 'subscriptionItemId' | 'priceId' | 'amount' | 'description' | 'proration' | 'discountable' | 'periodStart' | 'periodEnd'> & { quantity: number | null },
  prices: ReadonlyMap<string, PriceRow>,
  rates: ReadonlyMap<string, TaxRateRow>,
  rateIds: readonly string[],
) {
  return {
    subscriptionItemId: l.subscriptionItemId,
    price: prices.get(l.priceId)!,
    quantity: l.quantity,
    amount: Number(l.amount),
    description: l.description ?? '',
    proration: l.proration,
    discountable: l.discountable,
    periodStart: l.periodStart,
    periodEnd: l.periodEnd,
    taxRates: rateIds.flatMap((id) => (rates.has(id) ? [rates.get(id)!] : [])),
  };
}

type StoredItem = Omit<Prisma.InvoiceItemGetPayload<object>, 'seq' | 'accountId'>;

/** Invoice items as the lines of an invoice, in their order (`items` as stored). */
export async function itemLines(tx: Tx, accountId: string, items: readonly StoredItem[]): Promise<DraftLine[]> {
  const records = (i: StoredItem) => (Array.isArray(i.discountRecords) ? (i.discountRecords as unknown as DiscountRecord[]) : []);
  const [prices, rates, applied] = await Promise.all([
    pricesById(tx, accountId, items.map((i) => i.priceId)),
    taxRatesById(tx, accountId, items.flatMap((i) => i.taxRates)),
    appliedOf(tx, items.flatMap(records)),
  ]);
  const byId = new Map(applied.map((d) => [d.id, d]));
  return items.map((i) => ({
    ...billedLine(i, prices, rates, i.taxRates),
    invoiceItemId: i.id,
    discountAmounts: i.discountAmounts as unknown as DiscountAmount[],
    // The item's own discounts, applied to its line before the invoice's (amounts.ts).
    discounts: records(i).flatMap((r) => (byId.has(r.id) ? [byId.get(r.id)!] : [])),
  }));
}

/**
 * Works a draft's lines and totals out again from the invoice items on it, rewriting its lines;
 * nothing is emitted. The customer's details are read again:
 * a draft shows them as they are until it is finalized.
 */
export async function refreshDraft(scope: Scope, row: InvoiceRow): Promise<MadeInvoice> {
  const { tx } = scope;
  const items = await tx.invoiceItem.findMany({ where: { invoiceId: row.id }, orderBy: { seq: 'asc' } });
  // A subscription's draft (a paused or unpaid subscription's) keeps the lines its period billed,
  // with the discounts they carry; the items on it are worked out again after them.
  const kept = row.subscriptionId === null ? [] : await periodLinesOf(scope, row.id);
  const lines = [...kept, ...(await itemLines(tx, scope.accountId, items))];
  const customer = await tx.customer.findUniqueOrThrow({ where: { id: row.customerId } });
  const discounts = await appliedOf(tx, (await detailsOfInvoice(tx, row.id)).discountRecords);
  const spec: InvoiceSpec = {
    customerId: row.customerId,
    subscription:
      row.subscriptionId === null
        ? null
        : { id: row.subscriptionId, metadata: row.subscriptionMetadata, testClockId: row.testClockId, collectionMethod: row.collectionMethod, daysUntilDue: null, defaultPaymentMethod: row.defaultPaymentMethod },
    currency: row.currency,
    billingReason: row.billingReason,
    periodStart: row.periodStart,
    periodEnd: row.periodEnd,
    lines,
    discounts,
  };
  const drafted = draftInvoice(spec, customer, row.created, row.id);
  // A manual invoice shows its own discounts; a subscription's, every discount its lines carry.
  const next: InvoiceRow = { ...row, totals: drafted.row.totals, amountDue: drafted.row.amountDue, discounts: row.subscriptionId === null ? discounts.map((d) => d.id) : drafted.row.discounts };
  await tx.invoiceLine.deleteMany({ where: { invoiceId: row.id } });
  if (drafted.lines.length > 0) {
    await tx.invoiceLine.createMany({ data: drafted.lines.map((l) => ({ ...l, discountAmounts: l.discountAmounts as Prisma.InputJsonValue, taxes: l.taxes as Prisma.InputJsonValue, metadata: {} })) });
  }
  await tx.invoice.update({ where: { id: row.id }, data: { totals: next.totals as Prisma.InputJsonValue, amountDue: next.amountDue, discounts: next.discounts }, select: { id: true } });
  return { row: next, lines: drafted.lines };
}

/** Stored discount records as the discounts an invoice applies (their coupons read by row key). */
export async function appliedOf(tx: Tx, records: readonly DiscountRecord[]): Promise<AppliedDiscount[]> {
  if (records.length === 0) return [];
  const coupons = await tx.coupon.findMany({ where: { seq: { in: records.map((r) => BigInt(r.coupon_seq)) } } });
  const bySeq = new Map(coupons.map(({ seq, accountId: _a, ...c }) => [String(seq), { ...c, seq }]));
  return records.flatMap((r) => {
    const coupon = bySeq.get(r.coupon_seq);
    return coupon ? [{ id: r.id, coupon: coupon as unknown as AppliedDiscount['coupon'] }] : [];
  });
}

/**
 * An invoice's public object with what it refers to: its lines' prices and tax rates, its
 * subscription's discounts or its own, and its details (a manual invoice's).
 */
export async function invoiceObject(tx: Tx, accountId: string, made: MadeInvoice, now: number, deps: LinkDeps) {
  return (await invoiceObjects(tx, accountId, [made], now, deps))[0];
}

/** The same for several invoices (a list page), with one query per kind of reference. */
export async function invoiceObjects(tx: Tx, accountId: string, invoices: readonly MadeInvoice[], now: number, deps: LinkDeps) {
  const known = invoices.length === 1 ? invoices[0].known : undefined;
  const [refs, details] = await Promise.all([
    lineRefs(
      tx,
      accountId,
      invoices.flatMap((i) => i.lines),
      invoices.map((i) => i.row),
      now,
      deps,
      known,
    ),
    known?.details
      ? new Map([[invoices[0].row.id, known.details]])
      : detailsByInvoice(
          tx,
          invoices.map((i) => i.row.id),
        ),
  ]);
  const owned = invoices.flatMap(({ row }) =>
    (details.get(row.id)?.discountRecords ?? []).map((record) => ({ record, customer: row.customerId, subscription: null, subscriptionItem: null })),
  );
  const withOwn: LineRefs = owned.length === 0 ? refs : { ...refs, discounts: { ...refs.discounts, ...(await discountRefs(tx, owned, now)) } };
  return invoices.map(({ row, lines }) => serializeInvoice(row, lines, [], withOwn, details.get(row.id) ?? NO_DETAILS));
}

/**
 * A `default_payment_method` parameter (of an invoice or a subscription): a payment method attached
 * to the customer; `''` clears it (null); undefined when not sent.
 */
export async function attachedPaymentMethodParam(scope: Scope, ctx: RequestContext, id: string | undefined, customerId: string): Promise<string | null | undefined> {
  if (id === undefined) return undefined;
  if (id === '') return null;
  const pm = await resolvePaymentMethod(prismaDb(scope.tx), ctx, id, 'default_payment_method');
  if (pm.customerId !== customerId) {
    throw new ApiError({
      status: 400,
      code: 'resource_missing',
      param: 'default_payment_method',
      message: `The customer does not have a payment method with the ID ${id}. The payment method must be attached to the customer.`,
    });
  }
  return pm.id;
}

/**
 * One discount: the coupon `coupon` names, or the one behind the active promotion code
 * `promotion_code`, checked valid and redeemed at `scope.now` (`at` names the parameters in errors;
 * `preview`: checked only, not redeemed).
 * Subscriptions, customers (`customerDiscounts`) and manual invoices store what it answers.
 */
export async function redeemDiscount(scope: Scope, d: { coupon?: string; promotion_code?: string }, at: (name: string) => string, options: { preview?: boolean } = {}): Promise<CustomerDiscount> {
  let coupon;
  let promotionCode: string | null = null;
  if (d.promotion_code !== undefined) {
    const code = hasIdShape('promo', d.promotion_code) ? await scope.tx.promotionCode.findFirst({ where: { id: d.promotion_code, accountId: scope.accountId }, include: { coupon: true } }) : null;
    if (!code || !code.active) throw resourceMissing('promotion code', d.promotion_code, at('promotion_code'), 400);
    coupon = code.coupon;
    promotionCode = code.id;
  } else {
    coupon = await scope.tx.coupon.findFirst({ where: { id: d.coupon, accountId: scope.accountId, deleted: false } });
    if (!coupon) throw resourceMissing('coupon', d.coupon ?? '', at('coupon'), 400);
  }
  if (!isCouponValid(coupon, scope.now)) throw invalidRequest(`Coupon ${coupon.id} is no longer valid.`, 'coupon_expired', at('coupon'));
  const end = coupon.duration === 'repeating' ? addInterval(scope.now, 'month', coupon.durationInMonths ?? 1) : null;
  // A preview checks the discount as the redemption would, and counts nothing.
  if (!options.preview) await scope.tx.coupon.update({ where: { seq: coupon.seq }, data: { timesRedeemed: { increment: 1 } }, select: { seq: true } });
  return { id: newId('di'), coupon: coupon.id, coupon_seq: String(coupon.seq), promotion_code: promotionCode, start: scope.now, end };
}

/**
 * A `discounts` parameter's entries as stored discounts: each `coupon` or `promotion_code` redeemed
 * (`redeemDiscount`); `discount` reuses one of `reusable` (those of the object or its ancestors),
 * or is refused where the object takes none (null). `param` names the parameter in errors.
 */
export async function discountParams<R extends DiscountRecord = CustomerDiscount>(
  scope: Scope,
  list: readonly Record<string, string>[],
  param: string,
  reusable: readonly R[] | null = null,
  /** `preview`: checked, not redeemed. */
  options: { preview?: boolean } = {},
): Promise<(R | CustomerDiscount)[]> {
  const kinds = reusable === null ? ['coupon', 'promotion_code'] : ['coupon', 'discount', 'promotion_code'];
  const out: (R | CustomerDiscount)[] = [];
  for (const [i, d] of list.entries()) {
    const at = (n: string) => `${param}[${i}][${n}]`;
    if (reusable === null && d.discount !== undefined) throw invalidRequest('Only `coupon` and `promotion_code` discounts can be given here.', 'parameter_invalid', at('discount'));
    const given = kinds.filter((n) => d[n] !== undefined);
    if (given.length !== 1) throw invalidRequest(`Each discount needs exactly one of ${kinds.map((k) => `\`${k}\``).join(', ')}.`, 'parameter_invalid', at(given[1] ?? 'coupon'));
    const reused = d.discount === undefined ? undefined : reusable?.find((r) => r.id === d.discount);
    if (d.discount !== undefined && !reused) throw resourceMissing('discount', d.discount, at('discount'), 400);
    out.push(reused ?? (await redeemDiscount(scope, d, at, options)));
  }
  // A discount named twice applies once.
  return out.filter((r, i) => out.findIndex((o) => o.id === r.id) === i);
}
