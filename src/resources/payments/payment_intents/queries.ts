import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';

// PaymentIntents' SQL: the row select in the shape the serializer takes (PaymentIntentRow, with
// `seq`), for lists and the search; the operations themselves go through Prisma.

export const SELECT_ROW = raw(`
  SELECT id, seq, account_id AS "accountId", created, amount, currency, status, capture_method AS "captureMethod",
         confirmation_method AS "confirmationMethod", customer_id AS "customerId", payment_method_id AS "paymentMethodId",
         payment_method_types AS "paymentMethodTypes", allowed_payment_method_types AS "allowedPaymentMethodTypes",
         excluded_payment_method_types AS "excludedPaymentMethodTypes", automatic_payment_methods AS "automaticPaymentMethods",
         payment_method_options AS "paymentMethodOptions", setup_future_usage AS "setupFutureUsage", description,
         receipt_email AS "receiptEmail", statement_descriptor AS "statementDescriptor",
         statement_descriptor_suffix AS "statementDescriptorSuffix", shipping, metadata, on_behalf_of AS "onBehalfOf",
         transfer_data AS "transferData", transfer_group AS "transferGroup", application_fee_amount AS "applicationFeeAmount",
         amount_capturable AS "amountCapturable", amount_received AS "amountReceived", latest_charge_id AS "latestChargeId",
         last_payment_error AS "lastPaymentError", next_action AS "nextAction", return_url AS "returnUrl",
         cancellation_reason AS "cancellationReason", canceled_at AS "canceledAt", client_secret AS "clientSecret",
         invoice_id AS "invoiceId", due_at AS "dueAt"
  FROM payment_intents`);

/** One of the account's PaymentIntents. */
export const selectOwned = (id: string, accountId: string): Fragment => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId}`;

/** One of the account's PaymentIntents, locked for the rest of the transaction. */
export const selectOwnedForUpdate = (id: string, accountId: string): Fragment => sql`${selectOwned(id, accountId)} FOR UPDATE`;

/** The account's PaymentIntents for the list, with its filters. */
export function listedRows(accountId: string, filters: { customer?: string; created: readonly Fragment[] }): SqlRows {
  const where = [sql`account_id = ${accountId}`, ...filters.created];
  if (filters.customer !== undefined) where.push(sql`customer_id = ${filters.customer}`);
  return { select: SELECT_ROW, where };
}

/** Writes what the generated client doesn't know yet (migration 20261226100000): the types as sent. */
export const updateTypes = (id: string, allowed: readonly string[] | null, excluded: readonly string[] | null): Fragment =>
  sql`UPDATE payment_intents SET allowed_payment_method_types = ${allowed}::text[], excluded_payment_method_types = ${excluded}::text[] WHERE id = ${id} RETURNING id`;

/** The account's PaymentIntents a search looks through (serialize them with `presentAll`). */
export const searchedRows = (accountId: string): SqlRows => ({ select: SELECT_ROW, where: [sql`account_id = ${accountId}`] });

/** The public query fields of PaymentIntents (https://docs.stripe.com/search#query-fields-for-payment-intents). */
export const SEARCH: SearchResource = {
  name: 'payment_intents',
  fields: {
    amount: { type: 'numeric', sql: 'amount' },
    created: { type: 'numeric', sql: 'created' },
    currency: { type: 'token', sql: 'currency' },
    customer: { type: 'token', sql: 'customer_id' },
    metadata: { type: 'metadata', sql: 'metadata' },
    status: { type: 'token', sql: 'status' },
  },
};
