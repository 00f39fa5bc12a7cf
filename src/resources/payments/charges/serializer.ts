import type { Charge } from '../../../generated/prisma/client';
import { pathField, ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { embed } from '../../../kernel/versions';

export const CHARGE_OBJECT = 'charge';

/** Where an object (a charge, a PaymentIntent) embeds the invoice it pays, for the versions that show it. */
export const invoiceKey = (id: string): string => `${id}.invoice`;

/** A charge's row (`balance_transaction` is read with SQL: see queries.ts). */
export type ChargeRow = Omit<Charge, 'seq'> & { balanceTransaction: string | null };

/** The public object (Charge). A charge is made only by a PaymentIntent's confirmation. */
export function serializeCharge(row: ChargeRow) {
  const charge = {
    id: row.id,
    object: CHARGE_OBJECT,
    amount: row.amount,
    amount_captured: row.amountCaptured,
    amount_refunded: row.amountRefunded,
    application: null,
    application_fee: null,
    application_fee_amount: row.applicationFeeAmount,
    balance_transaction: row.balanceTransaction,
    billing_details: row.billingDetails as Record<string, unknown>,
    calculated_statement_descriptor: row.calculatedStatementDescriptor,
    captured: row.captured,
    created: row.created,
    currency: row.currency,
    customer: row.customerId,
    description: row.description,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: row.failureCode,
    failure_message: row.failureMessage,
    fraud_details: row.fraudDetails as Record<string, string>,
    livemode: false,
    metadata: row.metadata as Metadata,
    on_behalf_of: row.onBehalfOf,
    outcome: row.outcome as Record<string, unknown> | null,
    paid: row.paid,
    payment_intent: row.paymentIntentId,
    payment_method: row.paymentMethodId,
    payment_method_details: row.paymentMethodDetails as Record<string, unknown>,
    receipt_email: row.receiptEmail,
    receipt_number: null,
    receipt_url: null,
    // Released in full: a canceled authorization, or a charge refunded to its last cent.
    refunded: row.amountRefunded > 0 && row.amountRefunded >= row.amount,
    review: null,
    shipping: row.shipping as Record<string, unknown> | null,
    source: null,
    source_transfer: null,
    statement_descriptor: row.statementDescriptor,
    statement_descriptor_suffix: row.statementDescriptorSuffix,
    status: row.status,
    // A charge's `amount` is null when the intent named none (the whole charge goes), where the intent's has none.
    transfer_data: row.transferData === null ? null : { amount: null, ...(row.transferData as Record<string, unknown>) },
    transfer_group: row.transferGroup,
  };
  // The invoice it paid, which versions before 2025-03-31.basil show (payments/versions.ts).
  return row.invoiceId === null ? charge : embed(charge, { [invoiceKey(row.id)]: row.invoiceId });
}

export type ChargeObject = ReturnType<typeof serializeCharge>;

/** A payment's `transfer_data` (an intent's, a charge's), whose `destination` expands to the account. */
export const TRANSFER_DATA_OBJECT = 'charge.transfer_data';

export const expandable: ExpandableFields = {
  customer: ref('customer'),
  payment_intent: ref('payment_intent'),
  on_behalf_of: ref('account'),
  transfer_data: pathField(TRANSFER_DATA_OBJECT),
};

export const transferDataExpandable: ExpandableFields = { destination: ref('account') };
