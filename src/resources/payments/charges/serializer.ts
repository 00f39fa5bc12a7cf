import type { Charge } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const CHARGE_OBJECT = 'charge';

/** A charge's row (`balance_transaction` is read with SQL: see queries.ts). */
export type ChargeRow = Omit<Charge, 'seq'> & { balanceTransaction: string | null };

/** The public object (Charge). A charge is made only by a PaymentIntent's confirmation. */
export function serializeCharge(row: ChargeRow) {
  return {
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
    transfer_data: row.transferData as Record<string, unknown> | null,
    transfer_group: row.transferGroup,
  };
}

export type ChargeObject = ReturnType<typeof serializeCharge>;

export const expandable: ExpandableFields = {
  customer: ref('customer'),
  payment_intent: ref('payment_intent'),
};
