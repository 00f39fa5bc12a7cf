import { raw, sql } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { Write } from '../../../kernel/writes';
import type { ApiError } from '../../../kernel/errors';
import type { WebhookEndpointRow } from './serializer';

// The hot statements of webhook endpoints, on the `pg` pool (src/lib/sql.ts). Prisma serves the rest.

/** An endpoint in the row shape the serializer takes (and `seq`, for lists). */
const SELECT_ROW = raw(`
  SELECT id, seq, created, url, enabled_events AS "enabledEvents", api_version AS "apiVersion", description, metadata, status, connect
  FROM webhook_endpoints`);

/** One of the account's endpoints. */
export const selectOwned = (id: string, accountId: string) => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId}`;

/** The account's endpoints, for the list. */
export const ownedRows = (accountId: string): SqlRows => ({ select: SELECT_ROW, where: [sql`account_id = ${accountId}`] });

/** Takes one of the account's endpoint slots; the row lock makes concurrent creates queue on the count. */
export const takeSlot = (accountId: string, limit: number, orElse: () => ApiError): Write => ({
  sql: sql`
    UPDATE accounts SET webhook_endpoint_count = webhook_endpoint_count + 1
    WHERE id = ${accountId} AND webhook_endpoint_count < ${limit}
    RETURNING id`,
  orElse,
});

export const insertEndpoint = (row: WebhookEndpointRow, accountId: string, connect: boolean, sealedSecret: string, keyId: string | null): Write => ({
  sql: sql`
    INSERT INTO webhook_endpoints (id, account_id, created, url, enabled_events, api_version, connect, description, metadata, status, secret, key_id)
    VALUES (${row.id}, ${accountId}, ${row.created}, ${row.url}, ${row.enabledEvents}::text[], ${row.apiVersion}, ${connect},
            ${row.description}, ${JSON.stringify(row.metadata)}::jsonb, ${row.status}, ${sealedSecret}, ${keyId})
    RETURNING id`,
});
