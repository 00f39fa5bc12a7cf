import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';
import type { Write } from '../../../kernel/writes';

// The hot statements of prices, on the `pg` pool (src/lib/sql.ts). Prisma serves the rest.

/** A price in the row shape the serializer takes, and `seq`. */
const SELECT_ROW = raw(`
  SELECT id, seq, product_id AS "productId", created, active, type, billing_scheme AS "billingScheme", currency,
         unit_amount AS "unitAmount", unit_amount_decimal AS "unitAmountDecimal", custom_unit_amount AS "customUnitAmount",
         recurring, tiers_mode AS "tiersMode", tiers, transform_quantity AS "transformQuantity", tax_behavior AS "taxBehavior",
         lookup_key AS "lookupKey", nickname, metadata
  FROM prices`);

/** One of the account's prices. */
export const selectOwned = (id: string, accountId: string) => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId}`;

/** The same, locked for the rest of the transaction (an update's read). */
export const selectOwnedForUpdate = (id: string, accountId: string) => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;

/** What an update without a lookup key changes, over the row its transaction locked. */
export const updatePriceRow = (row: { id: string; active: boolean; nickname: string | null; taxBehavior: string | null; metadata: unknown }): Write => ({
  sql: sql`
    UPDATE prices SET active = ${row.active}, nickname = ${row.nickname}, tax_behavior = ${row.taxBehavior}, metadata = ${JSON.stringify(row.metadata)}::jsonb
    WHERE id = ${row.id}
    RETURNING id`,
});

export interface PriceFilters {
  readonly active?: boolean;
  readonly currency?: string;
  readonly product?: string;
  readonly type?: string;
  readonly created: readonly Fragment[];
  readonly lookupKeys?: readonly string[];
  /** `recurring[interval]=month`…: each member of `recurring` equal to the string given. */
  readonly recurring?: Readonly<Record<string, string>>;
}

/** The account's prices for the list, with its filters. */
export function listedRows(accountId: string, f: PriceFilters): SqlRows {
  const where = [sql`account_id = ${accountId}`, ...f.created];
  if (f.active !== undefined) where.push(sql`active = ${f.active}`);
  if (f.currency !== undefined) where.push(sql`currency = ${f.currency}`);
  if (f.product !== undefined) where.push(sql`product_id = ${f.product}`);
  if (f.type !== undefined) where.push(sql`type = ${f.type}`);
  if (f.lookupKeys !== undefined) where.push(sql`lookup_key = ANY(${f.lookupKeys}::text[])`);
  for (const [key, value] of Object.entries(f.recurring ?? {})) where.push(sql`recurring -> ${key}::text = to_jsonb(${value}::text)`);
  return { select: SELECT_ROW, where };
}

/** The account's prices a search looks through. */
export const searchedRows = (accountId: string): SqlRows => ({ select: SELECT_ROW, where: [sql`account_id = ${accountId}`] });

/** The public query fields of prices (https://docs.stripe.com/search#query-fields-for-prices). */
export const SEARCH: SearchResource = {
  name: 'prices',
  fields: {
    // Booleans as the public API compares them: `active:"true"`.
    active: { type: 'token', sql: 'active::text' },
    currency: { type: 'token', sql: 'currency' },
    lookup_key: { type: 'string', sql: 'lookup_key' },
    metadata: { type: 'metadata', sql: 'metadata' },
    product: { type: 'token', sql: 'product_id' },
    // `one_time` or `recurring`, kept in its column as the serializer shows it.
    type: { type: 'token', sql: 'type' },
  },
};
