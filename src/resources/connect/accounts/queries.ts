import { raw, sql } from '../../../lib/sql';
import type { Write } from '../../../kernel/writes';
import type { ApiError } from '../../../kernel/errors';
import type { AccountRow } from './details';

// The hot statements of accounts, on the `pg` pool (src/lib/sql.ts). Prisma serves the rest.

export const insertAccount = (row: AccountRow): Write => ({
  sql: sql`
    INSERT INTO accounts (id, parent_account_id, created, type, country, email, business_type, default_currency, metadata, details)
    VALUES (${row.id}, ${row.parentAccountId}, ${row.created}, ${row.type}, ${row.country}, ${row.email}, ${row.businessType},
            ${row.defaultCurrency}, ${JSON.stringify(row.metadata)}::jsonb, ${JSON.stringify(row.details)}::jsonb)
    RETURNING id`,
});

/**
 * A connected account of `parentAccountId` about to change, with its row version (`xmin`): locked
 * for the transaction when `lock`, else read as it is (the change then applies only to that version).
 */
export const selectForChange = (id: string, parentAccountId: string, lock: boolean) => sql`
  SELECT id, parent_account_id AS "parentAccountId", created, type, country, email, business_type AS "businessType",
         default_currency AS "defaultCurrency", metadata, details, session_created_at, link_created_at, xmin::text AS version
  FROM accounts WHERE id = ${id} AND parent_account_id = ${parentAccountId}${raw(lock ? ' FOR UPDATE' : '')}`;

/** Writes `row` over the version that was read; no row changes when another change came first. */
export const updateAccountRow = (row: AccountRow, version: string, orElse: () => ApiError): Write => ({
  sql: sql`
    UPDATE accounts SET email = ${row.email}, business_type = ${row.businessType}, default_currency = ${row.defaultCurrency},
                        metadata = ${JSON.stringify(row.metadata)}::jsonb, details = ${JSON.stringify(row.details)}::jsonb
    WHERE id = ${row.id} AND xmin = ${version}::xid
    RETURNING id`,
  orElse,
});
