import type { Tx } from '../../../events/emit';

// Invoice items' SQL: the lock a change takes, so an item and the draft it is on change together.

/** One of the account's invoice items, locked for the rest of the transaction; false when there is none. */
export async function lockItem(tx: Tx, accountId: string, id: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM invoice_items WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;
  return rows.length > 0;
}
