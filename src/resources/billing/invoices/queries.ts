import { Prisma } from '../../../generated/prisma/client';
import type { Tx } from '../../../events/emit';
import type { DiscountRecord } from '../coupons/serializer';
import { raw, sql } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';
import type { RetryPolicy } from './retries';

// Invoices' SQL: `invoice_details`, what a manual invoice carries beyond every invoice's columns
// (the generated client predates the table, so it is read and written here).

export interface InvoiceDetails {
  readonly description: string | null;
  readonly footer: string | null;
  /** Null: as every invoice (on while it is open). */
  readonly autoAdvance: boolean | null;
  readonly daysUntilDue: number | null;
  readonly discountRecords: readonly DiscountRecord[];
  readonly markedUncollectibleAt: number | null;
  readonly sentAt: number | null;
  readonly finalizeAt: number | null;
  /** `rendering` as create or update set it; null: never set. */
  readonly rendering: InvoiceRendering | null;
}

/** An invoice's `rendering`, as the public object shows it (no templates here: those stay null). */
export interface InvoiceRendering {
  readonly amount_tax_display: string | null;
  readonly pdf: { readonly page_size: string | null } | null;
  readonly template: null;
  readonly template_version: null;
}

export const NO_DETAILS: InvoiceDetails = {
  description: null,
  footer: null,
  autoAdvance: null,
  daysUntilDue: null,
  discountRecords: [],
  markedUncollectibleAt: null,
  sentAt: null,
  finalizeAt: null,
  rendering: null,
};

interface DetailsRow {
  invoice_id: string;
  description: string | null;
  footer: string | null;
  auto_advance: boolean | null;
  days_until_due: number | null;
  discount_records: DiscountRecord[];
  marked_uncollectible_at: number | null;
  sent_at: number | null;
  finalize_at: number | null;
  rendering: InvoiceRendering | null;
}

const detailsOf = (r: DetailsRow): InvoiceDetails => ({
  description: r.description,
  footer: r.footer,
  autoAdvance: r.auto_advance,
  daysUntilDue: r.days_until_due,
  discountRecords: r.discount_records,
  markedUncollectibleAt: r.marked_uncollectible_at,
  sentAt: r.sent_at,
  finalizeAt: r.finalize_at,
  rendering: r.rendering,
});

/** The details of those invoices that have some, by invoice id. */
export async function detailsByInvoice(tx: Tx, ids: readonly string[]): Promise<Map<string, InvoiceDetails>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.$queryRaw<DetailsRow[]>`SELECT * FROM invoice_details WHERE invoice_id IN (${Prisma.join([...new Set(ids)])})`;
  return new Map(rows.map((r) => [r.invoice_id, detailsOf(r)]));
}

export const detailsOfInvoice = async (tx: Tx, id: string): Promise<InvoiceDetails> => (await detailsByInvoice(tx, [id])).get(id) ?? NO_DETAILS;

/** Writes an invoice's details (made or replaced). */
export async function saveDetails(tx: Tx, accountId: string, invoiceId: string, d: InvoiceDetails): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO invoice_details (invoice_id, account_id, description, footer, auto_advance, days_until_due, discount_records, marked_uncollectible_at, sent_at, finalize_at, rendering)
    VALUES (${invoiceId}, ${accountId}, ${d.description}, ${d.footer}, ${d.autoAdvance}, ${d.daysUntilDue}, ${JSON.stringify(d.discountRecords)}::jsonb,
            ${d.markedUncollectibleAt}, ${d.sentAt}, ${d.finalizeAt}, ${d.rendering === null ? null : JSON.stringify(d.rendering)}::jsonb)
    ON CONFLICT (invoice_id) DO UPDATE SET description = EXCLUDED.description, footer = EXCLUDED.footer, auto_advance = EXCLUDED.auto_advance,
      days_until_due = EXCLUDED.days_until_due, discount_records = EXCLUDED.discount_records, marked_uncollectible_at = EXCLUDED.marked_uncollectible_at,
      sent_at = EXCLUDED.sent_at, finalize_at = EXCLUDED.finalize_at, rendering = EXCLUDED.rendering`;
}

/** Drafts whose auto-finalization is due by `now` (on any clock: the caller keeps the real-clock ones), a page after `afterId`. */
export const dueDrafts = (tx: Tx, now: number, afterId: string, limit: number) =>
  tx.$queryRaw<{ invoice_id: string; finalize_at: number }[]>`
    SELECT invoice_id, finalize_at FROM invoice_details WHERE finalize_at <= ${now} AND invoice_id > ${afterId} ORDER BY invoice_id LIMIT ${limit}`;

/** The discounts a customer carries (its invoices inherit them). */
export async function customerDiscountRecords(tx: Tx, id: string): Promise<DiscountRecord[]> {
  const rows = await tx.$queryRaw<{ discounts: unknown }[]>`SELECT discounts FROM customers WHERE id = ${id}`;
  return Array.isArray(rows[0]?.discounts) ? (rows[0].discounts as DiscountRecord[]) : [];
}

// The search of invoices on the `pg` pool (src/lib/sql.ts): it finds ids, and the page's rows are
// read through Prisma as the list reads them, so both render the same.

/** The account's invoices a search looks through, as `id` and `seq`. */
export const searchedRows = (accountId: string): SqlRows => ({ select: raw('SELECT id, seq FROM invoices'), where: [sql`account_id = ${accountId}`] });

/**
 * The public query fields of invoices (https://docs.stripe.com/search#query-fields-for-invoices)
 * that invoices here have: no finalization errors nor receipts, so no `last_finalization_error_code`
 * nor `receipt_number`.
 */
export const SEARCH: SearchResource = {
  name: 'invoices',
  fields: {
    created: { type: 'numeric', sql: 'created' },
    currency: { type: 'token', sql: 'currency' },
    customer: { type: 'token', sql: 'customer_id' },
    metadata: { type: 'metadata', sql: 'metadata' },
    number: { type: 'string', sql: 'number' },
    status: { type: 'token', sql: 'status' },
    subscription: { type: 'token', sql: 'subscription_id' },
    // The total the serializer shows, kept with the invoice's other totals.
    total: { type: 'numeric', sql: "(totals ->> 'total')::bigint" },
  },
};

// Dunning (`invoice_payment_retries`): an open subscription invoice's next automatic attempt.

export interface PaymentRetry {
  readonly invoiceId: string;
  readonly accountId: string;
  readonly testClockId: string | null;
  readonly nextAttemptAt: number;
  readonly retriesDone: number;
  readonly policy: RetryPolicy;
}

interface RetryRow {
  invoice_id: string;
  account_id: string;
  test_clock_id: string | null;
  next_attempt_at: number;
  retries_done: number;
  policy: RetryPolicy;
}

const retryOf = (r: RetryRow): PaymentRetry => ({
  invoiceId: r.invoice_id,
  accountId: r.account_id,
  testClockId: r.test_clock_id,
  nextAttemptAt: r.next_attempt_at,
  retriesDone: r.retries_done,
  policy: r.policy,
});

/** An invoice's retry, locked for the rest of the transaction when `lock`; null when none is due. */
export async function retryOfInvoice(tx: Tx, invoiceId: string, lock = false): Promise<PaymentRetry | null> {
  const rows = lock
    ? await tx.$queryRaw<RetryRow[]>`SELECT * FROM invoice_payment_retries WHERE invoice_id = ${invoiceId} FOR UPDATE`
    : await tx.$queryRaw<RetryRow[]>`SELECT * FROM invoice_payment_retries WHERE invoice_id = ${invoiceId}`;
  return rows.length === 0 ? null : retryOf(rows[0]);
}

/** Writes an invoice's retry (made or moved on). */
export async function saveRetry(tx: Tx, r: PaymentRetry): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO invoice_payment_retries (invoice_id, account_id, test_clock_id, next_attempt_at, retries_done, policy)
    VALUES (${r.invoiceId}, ${r.accountId}, ${r.testClockId}, ${r.nextAttemptAt}, ${r.retriesDone}, ${JSON.stringify(r.policy)}::jsonb)
    ON CONFLICT (invoice_id) DO UPDATE SET next_attempt_at = EXCLUDED.next_attempt_at, retries_done = EXCLUDED.retries_done, policy = EXCLUDED.policy`;
}

/** Ends an invoice's schedule (paid, closed, or its last retry done). */
export async function clearRetry(tx: Tx, invoiceId: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM invoice_payment_retries WHERE invoice_id = ${invoiceId}`;
}

/** The next attempt of those of the invoices that are open with a retry due, by invoice id (their `next_payment_attempt`). */
export async function nextAttempts(tx: Tx, invoiceIds: readonly string[]): Promise<Map<string, number>> {
  if (invoiceIds.length === 0) return new Map();
  const rows = await tx.$queryRaw<{ invoice_id: string; next_attempt_at: number }[]>`
    SELECT r.invoice_id, r.next_attempt_at FROM invoice_payment_retries r JOIN invoices i ON i.id = r.invoice_id
    WHERE r.invoice_id IN (${Prisma.join([...new Set(invoiceIds)])}) AND i.status = 'open'`;
  return new Map(rows.map((r) => [r.invoice_id, r.next_attempt_at]));
}

/** The earliest retry on a test clock due by `until`, or null. */
export async function nextDueRetryOnClock(tx: Tx, clockId: string, until: number): Promise<{ id: string; at: number } | null> {
  const rows = await tx.$queryRaw<{ id: string; at: number }[]>`
    SELECT invoice_id AS id, next_attempt_at AS at FROM invoice_payment_retries
    WHERE test_clock_id = ${clockId} AND next_attempt_at <= ${until} ORDER BY next_attempt_at, invoice_id LIMIT 1`;
  return rows[0] ?? null;
}

/** Real-clock retries due by `now`, a page after `afterId` (the reconciler's). */
export const dueRetries = (tx: Pick<Tx, '$queryRaw'>, now: number, afterId: string, limit: number) =>
  tx.$queryRaw<{ invoice_id: string; next_attempt_at: number }[]>`
    SELECT invoice_id, next_attempt_at FROM invoice_payment_retries
    WHERE test_clock_id IS NULL AND next_attempt_at <= ${now} AND invoice_id > ${afterId} ORDER BY invoice_id LIMIT ${limit}`;

/** The real-clock retries of those subscriptions' invoices, or of those invoices (to add their jobs). */
export async function realClockRetries(tx: Pick<Tx, '$queryRaw'>, ids: { subscriptions?: readonly string[]; invoices?: readonly string[] }) {
  const subs = [...new Set(ids.subscriptions ?? [])];
  const invoices = [...new Set(ids.invoices ?? [])];
  if (subs.length === 0 && invoices.length === 0) return [];
  const bySub = subs.length === 0 ? Prisma.sql`FALSE` : Prisma.sql`i.subscription_id IN (${Prisma.join(subs)})`;
  const byInvoice = invoices.length === 0 ? Prisma.sql`FALSE` : Prisma.sql`r.invoice_id IN (${Prisma.join(invoices)})`;
  return tx.$queryRaw<{ invoice_id: string; next_attempt_at: number }[]>`
    SELECT r.invoice_id, r.next_attempt_at FROM invoice_payment_retries r JOIN invoices i ON i.id = r.invoice_id
    WHERE r.test_clock_id IS NULL AND (${bySub} OR ${byInvoice})`;
}

/**
 * Open real-clock `send_invoice` invoices of those subscriptions, or those invoices, whose
 * `invoice.overdue` is not yet sent (to add their overdue jobs).
 */
export async function realClockOverdue(tx: Pick<Tx, '$queryRaw'>, ids: { subscriptions?: readonly string[]; invoices?: readonly string[] }) {
  const subs = [...new Set(ids.subscriptions ?? [])];
  const invoices = [...new Set(ids.invoices ?? [])];
  if (subs.length === 0 && invoices.length === 0) return [];
  const bySub = subs.length === 0 ? Prisma.sql`FALSE` : Prisma.sql`i.subscription_id IN (${Prisma.join(subs)})`;
  const byInvoice = invoices.length === 0 ? Prisma.sql`FALSE` : Prisma.sql`i.id IN (${Prisma.join(invoices)})`;
  return tx.$queryRaw<{ id: string; due_date: number }[]>`
    SELECT i.id, i.due_date FROM invoices i
    WHERE i.test_clock_id IS NULL AND i.status = 'open' AND i.collection_method = 'send_invoice' AND i.due_date IS NOT NULL AND (${bySub} OR ${byInvoice})
      AND NOT EXISTS (SELECT 1 FROM invoice_overdue_notices n WHERE n.invoice_id = i.id)`;
}
