import type { ExpandableFields } from '../../../kernel/expand';

export const OBJECT = 'account_session';
/** What the sandbox claim endpoint answers with. */
export const CLAIM_OBJECT = 'account_session_claim';

// The spec's table of embedded components and their feature members, with the public API's
// default for each feature (public spelling: `disable_stripe_user_authentication`). The request
// schema, the response schema and the defaults all come from this one table.

const ACCOUNT = { disable_stripe_user_authentication: false, external_account_collection: true };
const PAYOUTS = {
  disable_stripe_user_authentication: false,
  edit_payout_schedule: false,
  external_account_collection: true,
  instant_payouts: false,
  standard_payouts: false,
};
const PAYMENTS = {
  capture_payments: true,
  destination_on_behalf_of_charge_management: false,
  dispute_management: true,
  refund_management: true,
  smart_disputes_management: false,
};
const NONE = {};

export const COMPONENTS: Readonly<Record<string, Readonly<Record<string, boolean>>>> = {
  account_management: ACCOUNT,
  account_onboarding: ACCOUNT,
  notification_banner: ACCOUNT,
  balances: PAYOUTS,
  payouts: PAYOUTS,
  disputes_list: PAYMENTS,
  payment_details: PAYMENTS,
  payments: PAYMENTS,
  payment_disputes: { destination_on_behalf_of_charge_management: false, dispute_management: true, refund_management: true, smart_disputes_management: false },
  financial_account: { disable_stripe_user_authentication: false, external_account_collection: true, send_money: true, transfer_balance: true },
  financial_account_transactions: { card_spend_dispute_management: false },
  instant_payouts_promotion: { disable_stripe_user_authentication: false, external_account_collection: true, instant_payouts: true },
  issuing_card: { card_management: false, card_spend_dispute_management: false, cardholder_management: false, spend_control_management: false },
  issuing_cards_list: {
    card_management: false,
    card_spend_dispute_management: false,
    cardholder_management: false,
    disable_stripe_user_authentication: false,
    spend_control_management: false,
  },
  payment_method_settings: { disable_stripe_user_authentication: false },
  balance_report: NONE,
  documents: NONE,
  payout_details: NONE,
  payout_reconciliation_report: NONE,
  payouts_list: NONE,
  // The SDK's types (stripe@23) list these too.
  reporting_chart: NONE,
  tax_registrations: NONE,
  tax_settings: NONE,
  terminal_hardware_orders: NONE,
  terminal_hardware_shop: NONE,
};

export const PUBLIC_AUTH_FEATURE = 'disable_stripe_user_authentication';
export const SPEC_AUTH_FEATURE = 'disable_service_user_authentication';

const BOOLEAN = { type: 'boolean' };

/** Request schema of `components` (generated into the OpenAPI document): both spellings accepted. */
export const componentsParamSchema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(
    Object.entries(COMPONENTS).map(([name, features]) => {
      const members = Object.keys(features).flatMap((f) => (f === PUBLIC_AUTH_FEATURE ? [f, SPEC_AUTH_FEATURE] : [f]));
      return [
        name,
        {
          type: 'object',
          additionalProperties: false,
          required: ['enabled'],
          properties: {
            enabled: BOOLEAN,
            features: { type: 'object', additionalProperties: false, properties: Object.fromEntries(members.map((m) => [m, BOOLEAN])) },
          },
        },
      ];
    }),
  ),
};

/** Response schema of `components`: every component, every feature, public spelling only. */
export const componentsSchema = {
  type: 'object',
  additionalProperties: false,
  required: Object.keys(COMPONENTS),
  properties: Object.fromEntries(
    Object.entries(COMPONENTS).map(([name, features]) => [
      name,
      {
        type: 'object',
        additionalProperties: false,
        required: ['enabled', 'features'],
        properties: {
          enabled: BOOLEAN,
          features: {
            type: 'object',
            additionalProperties: false,
            required: Object.keys(features),
            properties: Object.fromEntries(Object.keys(features).map((f) => [f, BOOLEAN])),
          },
        },
      },
    ]),
  ),
};

export type Components = Record<string, { enabled: boolean; features: Record<string, boolean> }>;

type ComponentsParam = Record<string, { enabled: boolean; features?: Record<string, boolean> }>;

/** Every component with defaults filled, the given ones applied; the spec's spelling becomes the public one. */
export function fillComponents(param: ComponentsParam): Components {
  const out: Components = {};
  for (const [name, defaults] of Object.entries(COMPONENTS)) {
    const given = param[name];
    const features: Record<string, boolean> = { ...defaults };
    for (const [feature, value] of Object.entries(given?.features ?? {})) {
      features[feature === SPEC_AUTH_FEATURE ? PUBLIC_AUTH_FEATURE : feature] = value;
    }
    out[name] = { enabled: given?.enabled ?? false, features };
  }
  return out;
}

export interface SessionView {
  account: string;
  clientSecret: string;
  components: Components;
  expiresAt: number;
}

export const serializeAccountSession = (s: SessionView) => ({
  object: OBJECT,
  account: s.account,
  client_secret: s.clientSecret,
  components: s.components,
  expires_at: s.expiresAt,
  livemode: false,
});

export const serializeClaim = (s: { account: string; components: Components; expiresAt: number }) => ({
  object: CLAIM_OBJECT,
  account: s.account,
  components: s.components,
  expires_at: s.expiresAt,
  livemode: false,
});

export const expandable: ExpandableFields = {};
