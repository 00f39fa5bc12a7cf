import { sql } from '../../../lib/sql';
import type { Write } from '../../../kernel/writes';

// The statements of Stripe CLI sessions, on the `pg` pool (src/lib/sql.ts).

export interface NewSession {
  id: string;
  created: number;
  deviceName: string;
  feature: string;
  filters: unknown;
}

/** A session starts after the account's newest event: `stripe listen` shows what happens from now on. */
export const insertSession = (row: NewSession, accountId: string, sealedSecret: string, keyId: string | null): Write => ({
  sql: sql`
    INSERT INTO stripecli_sessions (id, account_id, created, device_name, feature, filters, secret, key_id, event_cursor)
    VALUES (${row.id}, ${accountId}, ${row.created}, ${row.deviceName}, ${row.feature},
            ${row.filters === null ? null : JSON.stringify(row.filters)}::jsonb, ${sealedSecret}, ${keyId},
            COALESCE((SELECT max(seq) FROM events), 0))
    RETURNING id`,
});
