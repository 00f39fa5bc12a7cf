import type { Charge, Refund } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const REFUND_OBJECT = 'refund';
/** The type of a charge's expanded `refunds` list (nothing in it expands further: the kernel expands into an object's lists only at the top). */
export const REFUND_LIST_OBJECT = 'refund.list';

/** A refund's row, with what its public object shows of its charge (customer, payment method). */
export type RefundRow = Pick<
  Refund,
  'id' | 'accountId' | 'created' | 'amount' | 'currency' | 'chargeId' | 'paymentIntentId' | 'status' | 'reason' | 'failureReason' | 'metadata' | 'dueAt'
> & {
  customerId: string | null;
  paymentMethodId: string | null;
};

/**
 * The public object. A card refund goes back to the card (`destination_details.card`); Sandbank
 * keeps no balance transactions, so those fields are null. `failure_reason` shows once it failed
 * or was canceled, as the public API's does.
 */
export function serializeRefund(row: RefundRow) {
  const ended = row.status === 'failed' || row.status === 'canceled';
  return {
    id: row.id,
    object: REFUND_OBJECT,
    amount: row.amount,
    balance_transaction: null,
    charge: row.chargeId,
    created: row.created,
    currency: row.currency,
    customer: row.customerId,
    customer_account: null,
    destination_details: { card: { type: 'refund' }, type: 'card' },
    ...(ended ? { failure_reason: row.failureReason } : {}),
    metadata: row.metadata as Metadata,
    payment_intent: row.paymentIntentId,
    payment_method: row.paymentMethodId,
    reason: row.reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: row.status,
    transfer_reversal: null,
  };
}

export const expandable: ExpandableFields = {
  customer: ref('customer'),
  payment_method: ref('payment_method'),
};

export type ChargeRow = Charge;

/** `refunded` (no column of its own): all of it went back (refunds, and what a partial capture released). */
export const chargeRefunded = (row: Pick<Charge, 'amount' | 'amountRefunded'>): boolean => row.amountRefunded > 0 && row.amountRefunded >= row.amount;

/**
 * A charge as its public object, for the events a refund raises about it (`charge.refunded`)
 * until the charges resource's serializer is handed over (`useChargeObjects`).
 */
export function serializeChargeRow(row: ChargeRow) {
  return {
    id: row.id,
    object: 'charge',
    amount: row.amount,
    amount_captured: row.amountCaptured,
    amount_refunded: row.amountRefunded,
    application: null,
    application_fee: null,
    application_fee_amount: row.applicationFeeAmount,
    balance_transaction: null,
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
    fraud_details: row.fraudDetails as Record<string, unknown>,
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
    refunded: chargeRefunded(row),
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
