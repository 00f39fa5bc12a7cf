import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';
import type { Write } from '../../../kernel/writes';
import type { ProductRow } from './serializer';

// The hot statements of products, on the `pg` pool (src/lib/sql.ts). Prisma serves the rest.

/** A product in the row shape the serializer takes, and `seq`. */
const SELECT_ROW = raw(`
  SELECT id, seq, created, updated, active, name, description, images, marketing_features AS "marketingFeatures", metadata,
         package_dimensions AS "packageDimensions", shippable, statement_descriptor AS "statementDescriptor",
         tax_code AS "taxCode", unit_label AS "unitLabel", url, default_price AS "defaultPrice", type
  FROM products`);

/** One of the account's products. */
export const selectOwned = (id: string, accountId: string) => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId}`;

/** The same, locked for the rest of the transaction (an update's read). */
export const selectOwnedForUpdate = (id: string, accountId: string) => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;

/** An update's every changeable column, over the row its transaction locked. */
export const updateProductRow = (row: ProductRow): Write => ({
  sql: sql`
    UPDATE products SET updated = ${row.updated}, active = ${row.active}, name = ${row.name}, description = ${row.description},
                        images = ${row.images}::text[], marketing_features = ${JSON.stringify(row.marketingFeatures)}::jsonb,
                        metadata = ${JSON.stringify(row.metadata)}::jsonb,
                        package_dimensions = ${row.packageDimensions === null ? null : JSON.stringify(row.packageDimensions)}::jsonb,
                        shippable = ${row.shippable}, statement_descriptor = ${row.statementDescriptor}, tax_code = ${row.taxCode},
                        unit_label = ${row.unitLabel}, url = ${row.url}, default_price = ${row.defaultPrice}
    WHERE id = ${row.id}
    RETURNING id`,
});

export interface ProductFilters {
  readonly active?: boolean;
  readonly created: readonly Fragment[];
  readonly shippable?: boolean;
  readonly url?: string;
  readonly ids?: readonly string[];
}

/** The account's products for the list, with its filters. */
export function listedRows(accountId: string, f: ProductFilters): SqlRows {
  const where = [sql`account_id = ${accountId}`, ...f.created];
  if (f.active !== undefined) where.push(sql`active = ${f.active}`);
  if (f.shippable !== undefined) where.push(sql`shippable = ${f.shippable}`);
  if (f.url !== undefined) where.push(sql`url = ${f.url}`);
  if (f.ids !== undefined) where.push(sql`id = ANY(${f.ids}::text[])`);
  return { select: SELECT_ROW, where };
}

/** The account's products a search looks through (deleted ones are gone from the table). */
export const searchedRows = (accountId: string): SqlRows => ({ select: SELECT_ROW, where: [sql`account_id = ${accountId}`] });

/** The public query fields of products (https://docs.stripe.com/search#query-fields-for-products). */
export const SEARCH: SearchResource = {
  name: 'products',
  fields: {
    // Booleans as the public API compares them: `active:"true"`.
    active: { type: 'token', sql: 'active::text' },
    description: { type: 'string', sql: 'description' },
    metadata: { type: 'metadata', sql: 'metadata' },
    name: { type: 'string', sql: 'name' },
    shippable: { type: 'token', sql: 'shippable::text' },
    url: { type: 'string', sql: 'url' },
  },
};
