import { raw, sql, type Fragment } from '../../../lib/sql';
import type { SqlRows } from '../../../kernel/list';
import type { SearchResource } from '../../../kernel/search';
import type { Write } from '../../../kernel/writes';
import type { PaymentIntentRow } from './serializer';

// PaymentIntents' SQL: the row select in the shape the serializer takes (PaymentIntentRow, with
// `seq`) and the writes, all of it SQL so a create's writes can go as one statement.

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

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

/** The newest of an invoice's PaymentIntents (the one its payments go through), locked. */
export const selectInvoiceIntentForUpdate = (invoiceId: string, accountId: string): Fragment =>
  sql`${SELECT_ROW} WHERE invoice_id = ${invoiceId} AND account_id = ${accountId} ORDER BY seq DESC LIMIT 1 FOR UPDATE`;

/** The account's PaymentIntents for the list, with its filters. */
export function listedRows(accountId: string, filters: { customer?: string; created: readonly Fragment[] }): SqlRows {
  const where = [sql`account_id = ${accountId}`, ...filters.created];
  if (filters.customer !== undefined) where.push(sql`customer_id = ${filters.customer}`);
  return { select: SELECT_ROW, where };
}

export const insertIntent = (r: PaymentIntentRow): Write => ({
  sql: sql`
    INSERT INTO payment_intents (id, account_id, created, amount, currency, status, capture_method, confirmation_method, customer_id,
                                 payment_method_id, payment_method_types, allowed_payment_method_types, excluded_payment_method_types,
                                 automatic_payment_methods, payment_method_options, setup_future_usage, description, receipt_email,
                                 statement_descriptor, statement_descriptor_suffix, shipping, metadata, on_behalf_of, transfer_data,
                                 transfer_group, application_fee_amount, amount_capturable, amount_received, latest_charge_id,
                                 last_payment_error, next_action, return_url, cancellation_reason, canceled_at, client_secret, invoice_id, due_at)
    VALUES (${r.id}, ${r.accountId}, ${r.created}, ${r.amount}, ${r.currency}, ${r.status}, ${r.captureMethod}, ${r.confirmationMethod},
            ${r.customerId}, ${r.paymentMethodId}, ${r.paymentMethodTypes}::text[], ${r.allowedPaymentMethodTypes}::text[],
            ${r.excludedPaymentMethodTypes}::text[], ${json(r.automaticPaymentMethods)}::jsonb, ${json(r.paymentMethodOptions ?? {})}::jsonb,
            ${r.setupFutureUsage}, ${r.description}, ${r.receiptEmail}, ${r.statementDescriptor}, ${r.statementDescriptorSuffix},
            ${json(r.shipping)}::jsonb, ${json(r.metadata)}::jsonb, ${r.onBehalfOf}, ${json(r.transferData)}::jsonb, ${r.transferGroup},
            ${r.applicationFeeAmount}, ${r.amountCapturable}, ${r.amountReceived}, ${r.latestChargeId}, ${json(r.lastPaymentError)}::jsonb,
            ${json(r.nextAction)}::jsonb, ${r.returnUrl}, ${r.cancellationReason}, ${r.canceledAt}, ${r.clientSecret}, ${r.invoiceId}, ${r.dueAt})
    RETURNING id`,
});

/** Writes every column a change may touch (all but the intent's identity and client secret). */
export const updateIntent = (r: PaymentIntentRow): Write => ({
  sql: sql`
    UPDATE payment_intents SET
      amount = ${r.amount}, currency = ${r.currency}, status = ${r.status}, capture_method = ${r.captureMethod},
      confirmation_method = ${r.confirmationMethod}, customer_id = ${r.customerId}, payment_method_id = ${r.paymentMethodId},
      payment_method_types = ${r.paymentMethodTypes}::text[], allowed_payment_method_types = ${r.allowedPaymentMethodTypes}::text[],
      excluded_payment_method_types = ${r.excludedPaymentMethodTypes}::text[], automatic_payment_methods = ${json(r.automaticPaymentMethods)}::jsonb,
      payment_method_options = ${json(r.paymentMethodOptions ?? {})}::jsonb, setup_future_usage = ${r.setupFutureUsage},
      description = ${r.description}, receipt_email = ${r.receiptEmail}, statement_descriptor = ${r.statementDescriptor},
      statement_descriptor_suffix = ${r.statementDescriptorSuffix}, shipping = ${json(r.shipping)}::jsonb, metadata = ${json(r.metadata)}::jsonb,
      on_behalf_of = ${r.onBehalfOf}, transfer_data = ${json(r.transferData)}::jsonb, transfer_group = ${r.transferGroup},
      application_fee_amount = ${r.applicationFeeAmount}, amount_capturable = ${r.amountCapturable}, amount_received = ${r.amountReceived},
      latest_charge_id = ${r.latestChargeId}, last_payment_error = ${json(r.lastPaymentError)}::jsonb, next_action = ${json(r.nextAction)}::jsonb,
      return_url = ${r.returnUrl}, cancellation_reason = ${r.cancellationReason}, canceled_at = ${r.canceledAt}, invoice_id = ${r.invoiceId},
      due_at = ${r.dueAt}
    WHERE id = ${r.id}
    RETURNING id`,
});

/** Accounts the caller may name in `on_behalf_of` or `transfer_data[destination]`: its own connected accounts. */
export const selectConnected = (id: string, parentAccountId: string): Fragment => sql`SELECT id FROM accounts WHERE id = ${id} AND parent_account_id = ${parentAccountId}`;

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
