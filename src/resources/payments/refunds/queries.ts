import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';

// The statements that read refunds in their public shape: the row and, from its charge, the
// customer and payment method the object names.

/** A refund in the row shape the serializer takes (and `seq`, for lists). */
export const SELECT_REFUND = raw(`
  SELECT id, seq, account_id AS "accountId", created, amount, currency, charge_id AS "chargeId", payment_intent_id AS "paymentIntentId",
         status, reason, failure_reason AS "failureReason", metadata, due_at AS "dueAt",
         (SELECT c.customer_id FROM charges c WHERE c.id = refunds.charge_id) AS "customerId",
         (SELECT c.payment_method_id FROM charges c WHERE c.id = refunds.charge_id) AS "paymentMethodId"
  FROM refunds`);

/** One of the account's refunds. */
export const selectOwnedRefund = (id: string, accountId: string) => sql`${SELECT_REFUND} WHERE id = ${id} AND account_id = ${accountId}`;

/** The account's refunds for the list, with its filters (`charge`, `payment_intent`, `created`). */
export function listedRefunds(accountId: string, filters: { charge?: string; paymentIntent?: string; created: readonly Fragment[] }): SqlRows {
  const where = [sql`account_id = ${accountId}`, ...filters.created];
  if (filters.charge !== undefined) where.push(sql`charge_id = ${filters.charge}`);
  if (filters.paymentIntent !== undefined) where.push(sql`payment_intent_id = ${filters.paymentIntent}`);
  return { select: SELECT_REFUND, where };
}
