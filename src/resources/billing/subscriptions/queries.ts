import { raw, sql } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';

// The search of subscriptions on the `pg` pool (src/lib/sql.ts): it finds ids, and the page's rows
// are read through Prisma as the list reads them, so both render the same.

/** The account's subscriptions a search looks through (canceled ones too), as `id` and `seq`. */
export const searchedRows = (accountId: string): SqlRows => ({ select: raw('SELECT id, seq FROM subscriptions'), where: [sql`account_id = ${accountId}`] });

/** The public query fields of subscriptions (https://docs.stripe.com/search#query-fields-for-subscriptions). */
export const SEARCH: SearchResource = {
  name: 'subscriptions',
  fields: {
    created: { type: 'numeric', sql: 'created' },
    metadata: { type: 'metadata', sql: 'metadata' },
    status: { type: 'token', sql: 'status' },
  },
};
