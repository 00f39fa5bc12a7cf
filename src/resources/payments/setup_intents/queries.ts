import type { Tx } from '../../../events/emit';
import { sql, type Fragment } from '../../../lib/sql';
import type { Write } from '../../../kernel/writes';
import type { SetupIntentRow } from './serializer';

// The statements SetupIntents write with besides Prisma: the row lock every change takes first
// (so of two concurrent confirmations one waits and then sees what the other did), and the
// connected-account check of `on_behalf_of` (an account row of the platform; payments imports
// no connect code).

/** Locks one of the account's SetupIntents for the rest of the transaction; false when it has none of that id. */
export async function lockSetupIntentRow(tx: Tx, id: string, accountId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM setup_intents WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;
  return rows.length > 0;
}

/** Whether `id` is a connected account of the platform. */
export async function isConnectedAccountOf(tx: Tx, id: string, platformAccountId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM accounts WHERE id = ${id} AND parent_account_id = ${platformAccountId}`;
  return rows.length > 0;
}

/** Marks a card set up for payments without its customer (a SetupIntent with `usage=off_session` succeeded). */
export async function markOffSessionReady(tx: Tx, paymentMethodId: string): Promise<void> {
  await tx.$executeRaw`UPDATE payment_methods SET off_session_ready = true WHERE id = ${paymentMethodId}`;
}

// The hot statements of an update without a card, on the `pg` pool (src/lib/sql.ts).

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** One of the account's SetupIntents in the service's shape (its row, account and sealed secret), locked for the rest of the transaction. */
export const selectOwnedForUpdate = (id: string, accountId: string): Fragment => sql`
  SELECT id, account_id AS "accountId", created, status, customer_id AS "customerId", payment_method_id AS "paymentMethodId",
         payment_method_types AS "paymentMethodTypes", automatic_payment_methods AS "automaticPaymentMethods",
         payment_method_options AS "paymentMethodOptions", usage, description, metadata, on_behalf_of AS "onBehalfOf",
         last_setup_error AS "lastSetupError", latest_attempt AS "latestAttempt", return_url AS "returnUrl",
         cancellation_reason AS "cancellationReason", client_secret AS "clientSecret"
  FROM setup_intents WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;

/** What an update without a card changes, over the row its transaction locked. */
export const updateSetupIntentRow = (r: SetupIntentRow): Write => ({
  sql: sql`
    UPDATE setup_intents SET customer_id = ${r.customerId}, payment_method_types = ${r.paymentMethodTypes}::text[],
      automatic_payment_methods = ${json(r.automaticPaymentMethods)}::jsonb, description = ${r.description}, metadata = ${json(r.metadata)}::jsonb
    WHERE id = ${r.id}
    RETURNING id`,
});
