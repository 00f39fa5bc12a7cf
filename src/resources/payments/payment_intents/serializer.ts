import type { PaymentIntent } from '../../../generated/prisma/client';
import { pathField, ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { embed } from '../../../kernel/versions';
import { invoiceKey, TRANSFER_DATA_OBJECT } from '../charges/serializer';

export const PAYMENT_INTENT_OBJECT = 'payment_intent';

/** A row as queries.ts reads it (the types as sent are newer than the generated client). */
export type PaymentIntentRow = Omit<PaymentIntent, 'seq' | 'allowedPaymentMethodTypes' | 'excludedPaymentMethodTypes'> & { allowedPaymentMethodTypes: string[] | null; excludedPaymentMethodTypes: string[] | null };

/** What the row doesn't say in the clear: the opened client secret, and an open challenge's `next_action`. */
export interface Presented {
  /** Null where the secret must not go (event payloads, which are stored in the clear). */
  readonly clientSecret: string | null;
  readonly nextAction: Record<string, unknown> | null;
}

/** The card options every PaymentIntent shows (PaymentIntent.PaymentMethodOptions.Card). */
const CARD_OPTIONS = { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' };

/** The public object (PaymentIntent). */
export function serializePaymentIntent(row: PaymentIntentRow, presented: Presented) {
  const stored = (row.paymentMethodOptions ?? {}) as Record<string, Record<string, unknown>>;
  const intent = {
    id: row.id,
    object: PAYMENT_INTENT_OBJECT,
    allowed_payment_method_types: row.allowedPaymentMethodTypes,
    amount: row.amount,
    amount_capturable: row.amountCapturable,
    amount_received: row.amountReceived,
    application: null,
    application_fee_amount: row.applicationFeeAmount,
    automatic_payment_methods: row.automaticPaymentMethods as Record<string, unknown> | null,
    canceled_at: row.canceledAt,
    cancellation_reason: row.cancellationReason,
    capture_method: row.captureMethod,
    client_secret: presented.clientSecret,
    confirmation_method: row.confirmationMethod,
    created: row.created,
    currency: row.currency,
    customer: row.customerId,
    customer_account: null,
    description: row.description,
    excluded_payment_method_types: row.excludedPaymentMethodTypes,
    last_payment_error: row.lastPaymentError as Record<string, unknown> | null,
    latest_charge: row.latestChargeId,
    livemode: false,
    managed_payments: null,
    metadata: row.metadata as Metadata,
    next_action: row.status === 'requires_action' ? presented.nextAction : null,
    on_behalf_of: row.onBehalfOf,
    payment_method: row.paymentMethodId,
    payment_method_configuration_details: null,
    payment_method_options: { card: { ...CARD_OPTIONS, ...(stored.card ?? {}) } },
    payment_method_types: row.paymentMethodTypes,
    payment_record: null,
    processing: null,
    receipt_email: row.receiptEmail,
    review: null,
    setup_future_usage: row.setupFutureUsage,
    shipping: row.shipping as Record<string, unknown> | null,
    source: null,
    statement_descriptor: row.statementDescriptor,
    statement_descriptor_suffix: row.statementDescriptorSuffix,
    status: row.status,
    transfer_data: row.transferData as Record<string, unknown> | null,
    transfer_group: row.transferGroup,
  };
  // The invoice it pays, which versions before 2025-03-31.basil show (payments/versions.ts).
  return row.invoiceId === null ? intent : embed(intent, { [invoiceKey(row.id)]: row.invoiceId });
}

export type PaymentIntentObject = ReturnType<typeof serializePaymentIntent>;

export const expandable: ExpandableFields = {
  customer: ref('customer'),
  latest_charge: ref('charge'),
  payment_method: ref('payment_method'),
  on_behalf_of: ref('account'),
  transfer_data: pathField(TRANSFER_DATA_OBJECT),
};
