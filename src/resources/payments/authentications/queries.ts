import { sql, type Fragment } from '../../../lib/sql';
import type { Write } from '../../../kernel/writes';

// The statements an intent's confirmation sends for its challenge, in SQL so they can be held
// with the confirmation's other writes (kernel/writes.ts).

export interface NewChallenge {
  readonly id: string;
  readonly accountId: string;
  readonly created: number;
  readonly intentType: string;
  readonly intentId: string;
  readonly tokenHash: string;
  /** Sealed. */
  readonly token: string;
  readonly returnUrl: string | null;
  readonly expiresAt: number;
}

export const insertChallenge = (c: NewChallenge): Write => ({
  sql: sql`
    INSERT INTO payment_authentications (id, account_id, created, intent_type, intent_id, token_hash, token, return_url, status, expires_at)
    VALUES (${c.id}, ${c.accountId}, ${c.created}, ${c.intentType}, ${c.intentId}, ${c.tokenHash}, ${c.token}, ${c.returnUrl}, 'pending', ${c.expiresAt})
    RETURNING id`,
});

/** Ends an intent's open challenges; changing none is fine. */
export const closeOpen = (intentId: string, now: number): Write => ({
  sql: sql`UPDATE payment_authentications SET status = 'canceled', answered_at = ${now} WHERE intent_id = ${intentId} AND status = 'pending' RETURNING id`,
});

/** The intent's newest open challenge: its sealed token and return URL. */
export const selectOpen = (intentId: string): Fragment =>
  sql`SELECT token, return_url AS "returnUrl" FROM payment_authentications WHERE intent_id = ${intentId} AND status = 'pending' ORDER BY seq DESC LIMIT 1`;
