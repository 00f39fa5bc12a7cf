import { raw, sql, type Fragment } from '../../../lib/sql';
import type { Write } from '../../../kernel/writes';
import type { StoredPaymentMethod } from './serializer';

// The statements a payment goes through (resolving, making, attaching and readying a card), in
// SQL so that a confirmed PaymentIntent's writes can be sent as one statement (kernel/writes.ts).

const STORED = raw(`
  SELECT id, created, customer_id AS "customerId", billing_details AS "billingDetails", metadata, brand, funding, country, last4,
         exp_month AS "expMonth", exp_year AS "expYear", fingerprint, cvc_check AS "cvcCheck", outcome, off_session_ready AS "offSessionReady",
         allow_redisplay AS "allowRedisplay"
  FROM payment_methods`);

/** A payment method by id (one an intent of the same account named). */
export const selectById = (id: string): Fragment => sql`${STORED} WHERE id = ${id}`;

/** One of the account's payment methods, locked for the rest of the transaction. */
export const selectOwnedForUpdate = (id: string, accountId: string): Fragment => sql`${STORED} WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;

/** A new card; `number` and `cvc` come sealed. */
export const insertCard = (
  row: StoredPaymentMethod,
  sealed: { accountId: string; number: string; cvc: string | null; cvcExpiresAt: number | null; keyId: string },
): Write => ({
  sql: sql`
    INSERT INTO payment_methods (id, account_id, created, customer_id, type, billing_details, metadata, brand, funding, country, last4,
                                 exp_month, exp_year, fingerprint, outcome, number, cvc, cvc_check, cvc_expires_at, key_id, off_session_ready, allow_redisplay)
    VALUES (${row.id}, ${sealed.accountId}, ${row.created}, ${row.customerId}, 'card', ${JSON.stringify(row.billingDetails)}::jsonb,
            ${JSON.stringify(row.metadata)}::jsonb, ${row.brand}, ${row.funding}, ${row.country}, ${row.last4}, ${row.expMonth}, ${row.expYear},
            ${row.fingerprint}, ${row.outcome}, ${sealed.number}, ${sealed.cvc}, ${row.cvcCheck}, ${sealed.cvcExpiresAt}, ${sealed.keyId},
            ${row.offSessionReady}, ${row.allowRedisplay})
    RETURNING id`,
});

/** Saves the card to a customer (and readies it for off-session payments when `offSessionReady`). */
export const attachTo = (id: string, customerId: string | null, offSessionReady: boolean): Write => ({
  sql: sql`UPDATE payment_methods SET customer_id = ${customerId}, off_session_ready = ${offSessionReady} WHERE id = ${id} RETURNING id`,
});

/** What an update changes, over the row its transaction locked. */
export const updateCard = (row: StoredPaymentMethod): Write => ({
  sql: sql`
    UPDATE payment_methods SET exp_month = ${row.expMonth}, exp_year = ${row.expYear}, billing_details = ${JSON.stringify(row.billingDetails)}::jsonb,
      metadata = ${JSON.stringify(row.metadata)}::jsonb, allow_redisplay = ${row.allowRedisplay}
    WHERE id = ${row.id}
    RETURNING id`,
});

/** One of the account's live customers, locked. */
export const lockLiveCustomerRow = (id: string, accountId: string): Fragment =>
  sql`SELECT id FROM customers WHERE id = ${id} AND account_id = ${accountId} AND NOT deleted FOR UPDATE`;
