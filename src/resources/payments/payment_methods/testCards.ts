import { ApiError } from '../../../kernel/errors';

// The public test cards: the only numbers test mode accepts. Each number carries its brand,
// funding, country and what a payment with it does (`outcome`, stored on the payment method's row
// so billing can read it). The public test PaymentMethods (`pm_card_visa`) and tokens (`tok_visa`)
// name a number: `pm_card_<name>` and `tok_<name>` for every name below.

export type Brand = 'amex' | 'diners' | 'discover' | 'jcb' | 'mastercard' | 'unionpay' | 'visa';
export type Funding = 'credit' | 'debit' | 'prepaid';

/**
 * What a payment attempted with the card does. `charge_customer_fail` declines like
 * `generic_decline` but, unlike the other declines, can be attached to a customer.
 */
export const OUTCOMES = [
  'succeeds',
  'generic_decline',
  'insufficient_funds',
  'lost_card',
  'stolen_card',
  'expired_card',
  'incorrect_cvc',
  'processing_error',
  'fraudulent',
  'cvc_check_fails',
  'charge_customer_fail',
  'authentication_required',
  'authentication_unless_setup',
  'authentication_then_insufficient_funds',
  'refund_fails',
  'velocity_exceeded',
  'highest_risk',
  'elevated_risk',
  'address_checks_fail',
  'address_line1_check_fails',
  'address_zip_check_fails',
  'address_unavailable',
] as const;
export type CardOutcome = (typeof OUTCOMES)[number];

export interface TestCard {
  readonly number: string;
  readonly brand: Brand;
  readonly funding: Funding;
  readonly country: string;
  readonly outcome: CardOutcome;
}

const card = (number: string, brand: Brand, funding: Funding, outcome: CardOutcome = 'succeeds', country = 'US'): TestCard => ({
  number,
  brand,
  funding,
  country,
  outcome,
});

/** Every accepted number. */
const CARDS: readonly TestCard[] = [
  card('4242424242424242', 'visa', 'credit'),
  card('4000056655665556', 'visa', 'debit'),
  card('5555555555554444', 'mastercard', 'credit'),
  card('2223003122003222', 'mastercard', 'credit'),
  card('5200828282828210', 'mastercard', 'debit'),
  card('5105105105105100', 'mastercard', 'prepaid'),
  card('378282246310005', 'amex', 'credit'),
  card('371449635398431', 'amex', 'credit'),
  card('6011111111111117', 'discover', 'credit'),
  card('6011000990139424', 'discover', 'credit'),
  card('6011981111111113', 'discover', 'debit'),
  card('3056930009020004', 'diners', 'credit'),
  card('36227206271667', 'diners', 'credit'),
  card('3566002020360505', 'jcb', 'credit', 'succeeds', 'JP'),
  card('6200000000000005', 'unionpay', 'credit', 'succeeds', 'CN'),
  card('6200000000000047', 'unionpay', 'debit', 'succeeds', 'CN'),
  card('4000008260000000', 'visa', 'credit', 'succeeds', 'GB'),
  card('4000002760000016', 'visa', 'credit', 'succeeds', 'DE'),
  card('4000002500000003', 'visa', 'credit', 'succeeds', 'FR'),
  card('4000001240000000', 'visa', 'credit', 'succeeds', 'CA'),
  card('4000000360000006', 'visa', 'credit', 'succeeds', 'AU'),
  card('4000003920000003', 'visa', 'credit', 'succeeds', 'JP'),
  card('4000000000000002', 'visa', 'credit', 'generic_decline'),
  card('4000000000009995', 'visa', 'credit', 'insufficient_funds'),
  card('4000000000009987', 'visa', 'credit', 'lost_card'),
  card('4000000000009979', 'visa', 'credit', 'stolen_card'),
  card('4000000000000069', 'visa', 'credit', 'expired_card'),
  card('4000000000000127', 'visa', 'credit', 'incorrect_cvc'),
  card('4000000000000119', 'visa', 'credit', 'processing_error'),
  card('4100000000000019', 'visa', 'credit', 'fraudulent'),
  card('4000000000000101', 'visa', 'credit', 'cvc_check_fails'),
  card('4000000000000341', 'visa', 'credit', 'charge_customer_fail'),
  card('4000000000006975', 'visa', 'credit', 'velocity_exceeded'),
  card('4000000000004954', 'visa', 'credit', 'highest_risk'),
  card('4000000000009235', 'visa', 'credit', 'elevated_risk'),
  card('4000000000000010', 'visa', 'credit', 'address_checks_fail'),
  card('4000000000000028', 'visa', 'credit', 'address_line1_check_fails'),
  card('4000000000000036', 'visa', 'credit', 'address_zip_check_fails'),
  card('4000000000000044', 'visa', 'credit', 'address_unavailable'),
  card('4000000000005126', 'visa', 'credit', 'refund_fails'),
  // Funds available at once in the public test mode; the sandbox keeps no pending balance, so it just succeeds.
  card('4000000000000077', 'visa', 'credit'),
  // Authentication (3-D Secure): always, unless set up for off-session use, or then declined.
  card('4000002760003184', 'visa', 'credit', 'authentication_required'),
  card('4000000000003220', 'visa', 'credit', 'authentication_required'),
  card('4000000000003063', 'visa', 'credit', 'authentication_required'),
  card('4000000000003055', 'visa', 'credit'),
  card('4000002500003155', 'visa', 'credit', 'authentication_unless_setup'),
  card('4000008260003178', 'visa', 'credit', 'authentication_then_insufficient_funds'),
];

const BY_NUMBER: ReadonlyMap<string, TestCard> = new Map(CARDS.map((c) => [c.number, c]));

/** The names of `pm_card_<name>` and `tok_<name>`, as the public test mode spells them. */
export const TEST_CARD_NAMES: Readonly<Record<string, string>> = {
  visa: '4242424242424242',
  visa_debit: '4000056655665556',
  mastercard: '5555555555554444',
  mastercard_debit: '5200828282828210',
  mastercard_prepaid: '5105105105105100',
  amex: '378282246310005',
  discover: '6011111111111117',
  diners: '3056930009020004',
  jcb: '3566002020360505',
  unionpay: '6200000000000005',
  us: '4242424242424242',
  gb: '4000008260000000',
  de: '4000002760000016',
  fr: '4000002500000003',
  ca: '4000001240000000',
  au: '4000000360000006',
  jp: '4000003920000003',
  chargeDeclined: '4000000000000002',
  visa_chargeDeclined: '4000000000000002',
  chargeDeclinedInsufficientFunds: '4000000000009995',
  visa_chargeDeclinedInsufficientFunds: '4000000000009995',
  chargeDeclinedLostCard: '4000000000009987',
  visa_chargeDeclinedLostCard: '4000000000009987',
  chargeDeclinedStolenCard: '4000000000009979',
  visa_chargeDeclinedStolenCard: '4000000000009979',
  chargeDeclinedExpiredCard: '4000000000000069',
  visa_chargeDeclinedExpiredCard: '4000000000000069',
  chargeDeclinedIncorrectCvc: '4000000000000127',
  visa_chargeDeclinedIncorrectCvc: '4000000000000127',
  chargeDeclinedProcessingError: '4000000000000119',
  visa_chargeDeclinedProcessingError: '4000000000000119',
  chargeDeclinedFraudulent: '4100000000000019',
  radarBlock: '4100000000000019',
  cvcCheckFail: '4000000000000101',
  chargeCustomerFail: '4000000000000341',
  chargeDeclinedVelocityLimitExceeded: '4000000000006975',
  riskLevelHighest: '4000000000004954',
  riskLevelElevated: '4000000000009235',
  avsFail: '4000000000000010',
  avsLine1Fail: '4000000000000028',
  avsZipFail: '4000000000000036',
  avsUnchecked: '4000000000000044',
  refundFail: '4000000000005126',
  bypassPending: '4000000000000077',
  authenticationRequired: '4000002760003184',
  threeDSecure2Required: '4000000000003220',
  threeDSecureRequired: '4000000000003063',
  threeDSecureOptional: '4000000000003055',
  authenticationRequiredOnSetup: '4000002500003155',
  authenticationRequiredChargeDeclinedInsufficientFunds: '4000008260003178',
};

export const testCardOf = (number: string): TestCard | undefined => BY_NUMBER.get(number);

/** The number a public test PaymentMethod id (`pm_card_visa`) names, if it is one. */
export const numberOfTestPaymentMethod = (id: string): string | undefined =>
  id.startsWith('pm_card_') ? Object.prototype.hasOwnProperty.call(TEST_CARD_NAMES, id.slice(8)) ? TEST_CARD_NAMES[id.slice(8)] : undefined : undefined;

/** The number a public test token (`tok_visa`) names, if it is one. */
export const numberOfTestToken = (token: string): string | undefined =>
  token.startsWith('tok_') && Object.prototype.hasOwnProperty.call(TEST_CARD_NAMES, token.slice(4)) ? TEST_CARD_NAMES[token.slice(4)] : undefined;

/** The brand as `display_brand` spells it. */
export const DISPLAY_BRANDS: Readonly<Record<Brand, string>> = {
  amex: 'american_express',
  diners: 'diners_club',
  discover: 'discover',
  jcb: 'jcb',
  mastercard: 'mastercard',
  unionpay: 'union_pay',
  visa: 'visa',
};

/** The CVC's length for a brand: four digits for American Express, three otherwise. */
export const cvcLength = (brand: Brand): number => (brand === 'amex' ? 4 : 3);

export function luhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** A 402 `card_error`, as the public API answers card problems. */
export const cardError = (message: string, code: string, extra: { param?: string; declineCode?: string } = {}): ApiError =>
  new ApiError({
    status: 402,
    type: 'card_error',
    message,
    code,
    param: extra.param,
    extra: extra.declineCode === undefined ? undefined : { decline_code: extra.declineCode },
  });

/** A payment method type other than a card (the only one here), in the public API's words; `code` is the intent's (`payment_intent_invalid_parameter`). */
export const unavailableTypeError = (type: unknown, code: string, param: string): ApiError =>
  new ApiError({
    status: 400,
    code,
    param,
    message: `The payment method type provided: ${String(type)} is invalid. Please ensure the provided type is activated in your dashboard (https://dashboard.stripe.com/account/payments/settings) and your account is enabled for any preview features that you are trying to use.`,
  });

/** A number that is not a public test card. */
export const liveCardError = (): ApiError =>
  cardError(
    'Your card was declined. Your request was in test mode, but used a non test (live) card. For a list of valid test cards, visit: https://stripe.com/docs/testing.',
    'card_declined',
    { declineCode: 'test_mode_live_card' },
  );

const DECLINES: Readonly<Partial<Record<CardOutcome, { message: string; code: string; declineCode: string }>>> = {
  generic_decline: { message: 'Your card was declined.', code: 'card_declined', declineCode: 'generic_decline' },
  charge_customer_fail: { message: 'Your card was declined.', code: 'card_declined', declineCode: 'generic_decline' },
  insufficient_funds: { message: 'Your card has insufficient funds.', code: 'card_declined', declineCode: 'insufficient_funds' },
  lost_card: { message: 'Your card was declined.', code: 'card_declined', declineCode: 'lost_card' },
  stolen_card: { message: 'Your card was declined.', code: 'card_declined', declineCode: 'stolen_card' },
  expired_card: { message: 'Your card has expired.', code: 'expired_card', declineCode: 'expired_card' },
  incorrect_cvc: { message: "Your card's security code is incorrect.", code: 'incorrect_cvc', declineCode: 'incorrect_cvc' },
  cvc_check_fails: { message: "Your card's security code is incorrect.", code: 'incorrect_cvc', declineCode: 'incorrect_cvc' },
  processing_error: { message: 'An error occurred while processing your card. Try again in a little bit.', code: 'processing_error', declineCode: 'processing_error' },
  fraudulent: { message: 'Your card was declined.', code: 'card_declined', declineCode: 'fraudulent' },
  highest_risk: { message: 'Your card was declined.', code: 'card_declined', declineCode: 'fraudulent' },
  velocity_exceeded: { message: 'Your card was declined.', code: 'card_declined', declineCode: 'card_velocity_exceeded' },
};

/**
 * What a payment attempted with a card of this outcome does: it succeeds, needs the customer to
 * authenticate (off-session: declines with `authentication_required`), or declines with this error.
 */
export type PaymentResult = { status: 'succeeded' } | { status: 'requires_action' } | { status: 'declined'; error: ApiError };

export function paymentResult(outcome: CardOutcome): PaymentResult {
  if (outcome === 'authentication_required' || outcome === 'authentication_unless_setup' || outcome === 'authentication_then_insufficient_funds') {
    return { status: 'requires_action' };
  }
  const decline = DECLINES[outcome];
  if (!decline) return { status: 'succeeded' };
  return { status: 'declined', error: cardError(decline.message, decline.code, { declineCode: decline.declineCode }) };
}

/**
 * Attaching a card to a customer checks it with the issuer: every declining card but
 * `charge_customer_fail` (made for exactly this) fails there already.
 */
export function attachError(outcome: CardOutcome): ApiError | undefined {
  if (outcome === 'charge_customer_fail') return undefined;
  const result = paymentResult(outcome);
  return result.status === 'declined' ? result.error : undefined;
}

/** The public `risk_level` a test card's payments get (Radar's score behind it). */
export function riskOf(outcome: CardOutcome): { level: 'normal' | 'elevated' | 'highest'; score: number } {
  if (outcome === 'highest_risk' || outcome === 'fraudulent') return { level: 'highest', score: 95 };
  if (outcome === 'elevated_risk') return { level: 'elevated', score: 72 };
  return { level: 'normal', score: 32 };
}

/** The declines Radar makes before the card network sees the payment (outcome type `blocked`). */
export const blockedByRadar = (outcome: CardOutcome): boolean => outcome === 'highest_risk' || outcome === 'fraudulent';

/** A charge's `outcome` (Charge.Outcome): approved, declined by the issuer, or blocked by Radar. */
export function chargeOutcome(outcome: CardOutcome, declineCode: string | null): Record<string, unknown> {
  const risk = riskOf(outcome);
  const base = { advice_code: null, network_advice_code: null, network_decline_code: null, risk_level: risk.level, risk_score: risk.score };
  if (declineCode === null) {
    return {
      ...base,
      network_status: 'approved_by_network',
      reason: outcome === 'elevated_risk' ? 'elevated_risk_level' : null,
      seller_message: 'Payment complete.',
      type: 'authorized',
    };
  }
  if (blockedByRadar(outcome)) {
    return { ...base, network_status: 'not_sent_to_network', reason: 'highest_risk_level', seller_message: 'Stripe blocked this payment as too risky.', type: 'blocked' };
  }
  return {
    ...base,
    network_status: 'declined_by_network',
    reason: declineCode,
    seller_message:
      declineCode === 'generic_decline' ? 'The bank did not return any further details with this decline.' : `The bank returned the decline code \`${declineCode}\`.`,
    type: 'issuer_declined',
  };
}

/** A payment that needed authentication and didn't get it (off-session, or `error_on_requires_action`). */
export const authenticationRequiredError = (): ApiError =>
  cardError('Your card was declined. This transaction requires authentication.', 'authentication_required', { declineCode: 'authentication_required' });

/** After authenticating, the 4000008260003178 card declines for insufficient funds. */
export const insufficientFundsError = (): ApiError =>
  cardError('Your card has insufficient funds.', 'card_declined', { declineCode: 'insufficient_funds' });

/**
 * The card's `checks` as a charge reports them: the CVC passes when one was given (fails for the
 * cvc_check_fails card); the address checks pass when the billing address has the line or postal
 * code, fail for the AVS cards, are `unavailable` for the unchecked one, and null without an address.
 */
export function cardChecks(outcome: CardOutcome, cvcGiven: boolean, address: { line1?: string | null; postal_code?: string | null } | null): Record<string, string | null> {
  const check = (present: boolean, fails: boolean): string | null => {
    if (!present) return null;
    if (outcome === 'address_unavailable') return 'unavailable';
    return fails ? 'fail' : 'pass';
  };
  return {
    address_line1_check: check(Boolean(address?.line1), outcome === 'address_checks_fail' || outcome === 'address_line1_check_fails'),
    address_postal_code_check: check(Boolean(address?.postal_code), outcome === 'address_checks_fail' || outcome === 'address_zip_check_fails'),
    cvc_check: cvcGiven ? (outcome === 'cvc_check_fails' ? 'fail' : 'pass') : null,
  };
}
