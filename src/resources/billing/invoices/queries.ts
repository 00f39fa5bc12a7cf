import { Prisma } from '../../../generated/prisma/client';
import type { Tx } from '../../../events/emit';
import type { DiscountRecord } from '../coupons/serializer';
import { raw, sql } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';

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
    INSERT INTO invoice_details (invoice_id, account_id, description, footer, auto_advance, days_until_due, discount_records, marked_uncollectible_at, sent_at, finalize_at)
    VALUES (${invoiceId}, ${accountId}, ${d.description}, ${d.footer}, ${d.autoAdvance}, ${d.daysUntilDue}, ${JSON.stringify(d.discountRecords)}::jsonb,
            ${d.markedUncollectibleAt}, ${d.sentAt}, ${d.finalizeAt})
    ON CONFLICT (invoice_id) DO UPDATE SET description = EXCLUDED.description, footer = EXCLUDED.footer, auto_advance = EXCLUDED.auto_advance,
      days_until_due = EXCLUDED.days_until_due, discount_records = EXCLUDED.discount_records, marked_uncollectible_at = EXCLUDED.marked_uncollectible_at,
      sent_at = EXCLUDED.sent_at, finalize_at = EXCLUDED.finalize_at`;
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
