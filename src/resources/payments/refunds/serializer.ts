import type { Refund } from '../../../generated/prisma/client';
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
  charge: ref('charge'),
  customer: ref('customer'),
  payment_intent: ref('payment_intent'),
  payment_method: ref('payment_method'),
};
