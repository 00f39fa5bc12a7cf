import type { SetupIntent } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';

export const SETUP_INTENT_OBJECT = 'setup_intent';

export type SetupIntentRow = Pick<
  SetupIntent,
  | 'id'
  | 'created'
  | 'status'
  | 'customerId'
  | 'paymentMethodId'
  | 'paymentMethodTypes'
  | 'automaticPaymentMethods'
  | 'paymentMethodOptions'
  | 'usage'
  | 'description'
  | 'metadata'
  | 'onBehalfOf'
  | 'lastSetupError'
  | 'latestAttempt'
  | 'returnUrl'
  | 'cancellationReason'
>;

/** The card options every SetupIntent shows (3-D Secure as the issuer asks: `automatic`). */
export const CARD_OPTIONS = { card: { mandate_options: null, network: null, request_three_d_secure: 'automatic' } };

/** What only the API's answers show: the opened client secret, and the open challenge's `next_action` (its page token). */
export interface Shown {
  readonly clientSecret: string;
  readonly nextAction: Record<string, unknown> | null;
}

/**
 * The public object. Without `shown` (events, an error's `setup_intent`: copies that are stored)
 * `client_secret` and `next_action` are null, so no secret is kept at rest in plain text.
 */
export function serializeSetupIntent(row: SetupIntentRow, shown?: Shown) {
  return {
    id: row.id,
    object: SETUP_INTENT_OBJECT,
    // What was asked for (no automatic payment methods), and what it takes: cards, the only payment methods here.
    allowed_payment_method_types: row.automaticPaymentMethods === null ? row.paymentMethodTypes : null,
    application: null,
    automatic_payment_methods: row.automaticPaymentMethods as Record<string, unknown> | null,
    cancellation_reason: row.cancellationReason,
    client_secret: shown?.clientSecret ?? null,
    created: row.created,
    customer: row.customerId,
    description: row.description,
    excluded_payment_method_types: null,
    flow_directions: null,
    last_setup_error: row.lastSetupError as Record<string, unknown> | null,
    latest_attempt: row.latestAttempt,
    livemode: false,
    mandate: null,
    metadata: row.metadata as Metadata,
    next_action: shown?.nextAction ?? null,
    on_behalf_of: row.onBehalfOf,
    payment_method: row.paymentMethodId,
    payment_method_configuration_details: null,
    payment_method_options: row.paymentMethodOptions as Record<string, unknown>,
    payment_method_types: row.paymentMethodTypes,
    single_use_mandate: null,
    status: row.status,
    usage: row.usage,
  };
}

export type SetupIntentObject = ReturnType<typeof serializeSetupIntent>;

export const expandable: ExpandableFields = {
  customer: ref('customer'),
  payment_method: ref('payment_method'),
  on_behalf_of: ref('account'),
};
