import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';
import type { Write } from '../../../kernel/writes';
import type { CustomerRow } from './serializer';

// The hot statements of customers, on the `pg` pool (src/lib/sql.ts). Prisma serves the rest.

const jsonOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

export const insertCustomer = (row: CustomerRow, accountId: string): Write => ({
  sql: sql`
    INSERT INTO customers (id, account_id, created, email, name, phone, description, address, shipping, metadata,
                           preferred_locales, tax_exempt, default_payment_method, test_clock_id, discounts)
    VALUES (${row.id}, ${accountId}, ${row.created}, ${row.email}, ${row.name}, ${row.phone}, ${row.description},
            ${jsonOrNull(row.address)}::jsonb, ${jsonOrNull(row.shipping)}::jsonb, ${JSON.stringify(row.metadata)}::jsonb,
            ${row.preferredLocales}::text[], ${row.taxExempt}, ${row.defaultPaymentMethod}, ${row.testClockId},
            ${JSON.stringify(row.discounts)}::jsonb)
    RETURNING id`,
});

/** A customer in the row shape the serializer takes (and `seq`, for lists). */
const SELECT_ROW = raw(`
  SELECT id, seq, created, email, name, phone, description, address, shipping, metadata, preferred_locales AS "preferredLocales",
         tax_exempt AS "taxExempt", default_payment_method AS "defaultPaymentMethod", test_clock_id AS "testClockId", discounts, deleted,
         balance, currency
  FROM customers`);

/** One of the account's customers, deleted ones included. */
export const selectOwned = (id: string, accountId: string) => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId}`;

/** The same, locked for the rest of the transaction (an update's read). */
export const selectOwnedForUpdate = (id: string, accountId: string) => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;

/** An update's every column, over the row its transaction locked (selectOwnedForUpdate). */
export const updateCustomerRow = (row: CustomerRow): Write => ({
  sql: sql`
    UPDATE customers SET email = ${row.email}, name = ${row.name}, phone = ${row.phone}, description = ${row.description},
                         address = ${jsonOrNull(row.address)}::jsonb, shipping = ${jsonOrNull(row.shipping)}::jsonb,
                         metadata = ${JSON.stringify(row.metadata)}::jsonb, preferred_locales = ${row.preferredLocales}::text[],
                         tax_exempt = ${row.taxExempt}, default_payment_method = ${row.defaultPaymentMethod},
                         discounts = ${JSON.stringify(row.discounts)}::jsonb
    WHERE id = ${row.id}
    RETURNING id`,
});

/** The account's customers for the list (deleted ones never), with its filters. */
export function listedRows(accountId: string, filters: { email?: string; testClock?: string; created: readonly Fragment[] }): SqlRows {
  const where = [sql`account_id = ${accountId}`, sql`NOT deleted`, ...filters.created];
  if (filters.email !== undefined) where.push(sql`email = ${filters.email}`);
  if (filters.testClock !== undefined) where.push(sql`test_clock_id = ${filters.testClock}`);
  return { select: SELECT_ROW, where };
}

/** The account's customers a search looks through (deleted ones never). */
export const searchedRows = (accountId: string): SqlRows => ({ select: SELECT_ROW, where: [sql`account_id = ${accountId}`, sql`NOT deleted`] });

/** The public query fields of customers (https://docs.stripe.com/search#query-fields-for-customers). */
export const SEARCH: SearchResource = {
  name: 'customers',
  fields: {
    created: { type: 'numeric', sql: 'created' },
    email: { type: 'string', sql: 'email' },
    metadata: { type: 'metadata', sql: 'metadata' },
    name: { type: 'string', sql: 'name' },
    phone: { type: 'string', sql: 'phone' },
  },
};
