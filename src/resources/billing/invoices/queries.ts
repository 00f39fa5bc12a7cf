import { raw, sql } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';

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
