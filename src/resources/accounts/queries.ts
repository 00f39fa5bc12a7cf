import { sql } from '../../lib/sql';
import type { Write } from '../../kernel/writes';
import type { AccountRow } from './serializer';

// The hot statements of accounts, on the `pg` pool (src/lib/sql.ts). Prisma serves the rest.

export const insertAccount = (row: AccountRow): Write => ({
  sql: sql`
    INSERT INTO accounts (id, parent_account_id, created, type, country, email, business_type, default_currency, metadata, details)
    VALUES (${row.id}, ${row.parentAccountId}, ${row.created}, ${row.type}, ${row.country}, ${row.email}, ${row.businessType},
            ${row.defaultCurrency}, ${JSON.stringify(row.metadata)}::jsonb, ${JSON.stringify(row.details)}::jsonb)
    RETURNING id`,
});
