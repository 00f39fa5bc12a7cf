import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';
import type { Write } from '../../../kernel/writes';
import type { ChargeRow } from './serializer';

// The statements of charges. They go through SQL (not Prisma's model) because
// `balance_transaction` (migration 20261226100000) is newer than the generated client.

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** A charge in the row shape the serializer takes (and `seq`, for lists); the search reuses it. */
export const SELECT_ROW = raw(`
  SELECT id, seq, account_id AS "accountId", created, amount, amount_captured AS "amountCaptured", amount_refunded AS "amountRefunded",
         currency, status, captured, paid, payment_intent_id AS "paymentIntentId", customer_id AS "customerId",
         payment_method_id AS "paymentMethodId", payment_method_details AS "paymentMethodDetails", billing_details AS "billingDetails",
         outcome, failure_code AS "failureCode", failure_message AS "failureMessage", description, receipt_email AS "receiptEmail",
         statement_descriptor AS "statementDescriptor", statement_descriptor_suffix AS "statementDescriptorSuffix",
         calculated_statement_descriptor AS "calculatedStatementDescriptor", shipping, metadata, fraud_details AS "fraudDetails",
         on_behalf_of AS "onBehalfOf", transfer_data AS "transferData", transfer_group AS "transferGroup",
         application_fee_amount AS "applicationFeeAmount", invoice_id AS "invoiceId", balance_transaction AS "balanceTransaction"
  FROM charges`);

/** One of the account's charges. */
export const selectOwned = (id: string, accountId: string): Fragment => sql`${SELECT_ROW} WHERE id = ${id} AND account_id = ${accountId}`;

/** One of the account's charges, locked for the rest of the transaction. */
export const selectOwnedForUpdate = (id: string, accountId: string): Fragment => sql`${selectOwned(id, accountId)} FOR UPDATE`;

/** The account's charges for the list, with its filters. */
export function listedRows(accountId: string, filters: { customer?: string; paymentIntent?: string; transferGroup?: string; created: readonly Fragment[] }): SqlRows {
  const where = [sql`account_id = ${accountId}`, ...filters.created];
  if (filters.customer !== undefined) where.push(sql`customer_id = ${filters.customer}`);
  if (filters.paymentIntent !== undefined) where.push(sql`payment_intent_id = ${filters.paymentIntent}`);
  if (filters.transferGroup !== undefined) where.push(sql`transfer_group = ${filters.transferGroup}`);
  return { select: SELECT_ROW, where };
}

/** The account's charges a search looks through. */
export const searchedRows = (accountId: string): SqlRows => ({ select: SELECT_ROW, where: [sql`account_id = ${accountId}`] });

export const insertCharge = (row: ChargeRow): Write => ({
  sql: sql`
    INSERT INTO charges (id, account_id, created, amount, amount_captured, amount_refunded, currency, status, captured, paid,
                         payment_intent_id, customer_id, payment_method_id, payment_method_details, billing_details, outcome,
                         failure_code, failure_message, description, receipt_email, statement_descriptor, statement_descriptor_suffix,
                         calculated_statement_descriptor, shipping, metadata, fraud_details, on_behalf_of, transfer_data, transfer_group,
                         application_fee_amount, invoice_id, balance_transaction)
    VALUES (${row.id}, ${row.accountId}, ${row.created}, ${row.amount}, ${row.amountCaptured}, ${row.amountRefunded}, ${row.currency},
            ${row.status}, ${row.captured}, ${row.paid}, ${row.paymentIntentId}, ${row.customerId}, ${row.paymentMethodId},
            ${json(row.paymentMethodDetails)}::jsonb, ${json(row.billingDetails)}::jsonb, ${json(row.outcome)}::jsonb, ${row.failureCode},
            ${row.failureMessage}, ${row.description}, ${row.receiptEmail}, ${row.statementDescriptor}, ${row.statementDescriptorSuffix},
            ${row.calculatedStatementDescriptor}, ${json(row.shipping)}::jsonb, ${json(row.metadata)}::jsonb, ${json(row.fraudDetails)}::jsonb,
            ${row.onBehalfOf}, ${json(row.transferData)}::jsonb, ${row.transferGroup}, ${row.applicationFeeAmount}, ${row.invoiceId},
            ${row.balanceTransaction})
    RETURNING id`,
});

/** Writes what a change may touch after the charge was made: its money, its capture and what an update sets. */
export const updateCharge = (row: ChargeRow): Write => ({
  sql: sql`
    UPDATE charges SET amount = ${row.amount}, amount_captured = ${row.amountCaptured}, amount_refunded = ${row.amountRefunded}, captured = ${row.captured},
           status = ${row.status}, paid = ${row.paid}, description = ${row.description}, receipt_email = ${row.receiptEmail},
           shipping = ${json(row.shipping)}::jsonb, metadata = ${json(row.metadata)}::jsonb, fraud_details = ${json(row.fraudDetails)}::jsonb,
           application_fee_amount = ${row.applicationFeeAmount}, balance_transaction = ${row.balanceTransaction}, transfer_group = ${row.transferGroup},
           payment_method_details = ${json(row.paymentMethodDetails)}::jsonb
    WHERE id = ${row.id}
    RETURNING id`,
});

/** The public query fields of charges (https://docs.stripe.com/search#query-fields-for-charges). */
export const SEARCH: SearchResource = {
  name: 'charges',
  fields: {
    amount: { type: 'numeric', sql: 'amount' },
    'billing_details.address.postal_code': { type: 'string', sql: "(billing_details -> 'address' ->> 'postal_code')" },
    created: { type: 'numeric', sql: 'created' },
    currency: { type: 'token', sql: 'currency' },
    customer: { type: 'token', sql: 'customer_id' },
    // No disputes here: every charge answers false.
    disputed: { type: 'token', sql: "'false'" },
    metadata: { type: 'metadata', sql: 'metadata' },
    'payment_method_details.card.brand': { type: 'token', sql: "(payment_method_details -> 'card' ->> 'brand')" },
    'payment_method_details.card.exp_month': { type: 'numeric', sql: "(payment_method_details -> 'card' ->> 'exp_month')::int" },
    'payment_method_details.card.exp_year': { type: 'numeric', sql: "(payment_method_details -> 'card' ->> 'exp_year')::int" },
    'payment_method_details.card.fingerprint': { type: 'token', sql: "(payment_method_details -> 'card' ->> 'fingerprint')" },
    'payment_method_details.card.last4': { type: 'token', sql: "(payment_method_details -> 'card' ->> 'last4')" },
    // As the serializer says it: released in full.
    refunded: { type: 'token', sql: "(amount_refunded > 0 AND amount_refunded >= amount)::text" },
    status: { type: 'token', sql: 'status' },
  },
};
