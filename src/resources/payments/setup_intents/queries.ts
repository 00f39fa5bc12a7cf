import type { Tx } from '../../../events/emit';

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
