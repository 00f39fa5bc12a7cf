import type { PaymentMethod } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { DISPLAY_BRANDS, type Brand } from './testCards';

export const PAYMENT_METHOD_OBJECT = 'payment_method';

export type PaymentMethodRow = Pick<
  PaymentMethod,
  'id' | 'created' | 'customerId' | 'billingDetails' | 'metadata' | 'brand' | 'funding' | 'country' | 'last4' | 'expMonth' | 'expYear' | 'fingerprint' | 'cvcCheck' | 'allowRedisplay'
>;

/** A row as services read it: the public fields, the card's outcome, and whether it was set up for off-session payments. */
export type StoredPaymentMethod = PaymentMethodRow & { outcome: string; offSessionReady: boolean };

export const EMPTY_BILLING_DETAILS = { address: null, email: null, name: null, phone: null, tax_id: null };

/** The public object: never the number or the CVC, which rows keep sealed. */
export function serializePaymentMethod(row: PaymentMethodRow) {
  return {
    id: row.id,
    object: PAYMENT_METHOD_OBJECT,
    allow_redisplay: row.allowRedisplay,
    billing_details: row.billingDetails as Record<string, unknown>,
    card: {
      brand: row.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: row.cvcCheck },
      country: row.country,
      display_brand: DISPLAY_BRANDS[row.brand as Brand],
      exp_month: row.expMonth,
      exp_year: row.expYear,
      fingerprint: row.fingerprint,
      funding: row.funding,
      generated_from: null,
      last4: row.last4,
      networks: { available: [row.brand], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: row.created,
    customer: row.customerId,
    customer_account: null,
    livemode: false,
    metadata: row.metadata as Metadata,
    type: 'card',
  };
}

export const expandable: ExpandableFields = {
  customer: ref('customer'),
};
