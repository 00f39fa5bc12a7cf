import type { Invoice, InvoiceLine } from '../../../generated/prisma/client';
import { pathField, ref, type ExpandableField, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { embed, embeddedOf, type Embedded } from '../../../kernel/versions';
import { serializePrice, type PriceRow } from '../prices/serializer';
import { serializeTaxRate, type TaxRateRow } from '../tax_rates/serializer';
import type { InvoiceTotals, LineTax, DiscountAmount } from './amounts';
import { NO_DETAILS, type InvoiceDetails } from './queries';
import type { InvoiceLinkUrls } from './links';

export const INVOICE_OBJECT = 'invoice';
export const LINE_OBJECT = 'line_item';

/** An invoice's own columns, as written through the generated client (`payment_settings` is written by SQL: billing.ts). */
export type InvoiceRow = Omit<Invoice, 'seq' | 'accountId' | 'paymentSettings'>;
export type InvoiceLineRow = Omit<InvoiceLine, 'seq'>;

/** What an invoice fixed when it was made: its totals and the customer's details then. */
export interface StoredTotals extends InvoiceTotals {
  customer: { email: string | null; name: string | null; phone: string | null; address: unknown; shipping: unknown; tax_exempt: string };
}

/** How many lines an invoice shows inline; the rest are a page away (`lines.has_more`). */
export const INLINE_LINES = 10;

/**
 * The prices and tax rates lines name by id. Versions before 2025-03-31.basil showed a line's
 * price (and plan) and tax rates whole: they ride along out of sight (`embed`).
 */
export interface LineRefs {
  readonly prices: ReadonlyMap<string, PriceRow>;
  readonly taxRates: ReadonlyMap<string, TaxRateRow>;
  /** `discount` objects and their coupons by id, for older versions' singular `discount` of an invoice. */
  readonly discounts?: Embedded;
  /** The PaymentIntent each invoice is paid through (its newest) and that intent's latest charge, by invoice, for older versions' `payment_intent` and `charge`. */
  readonly intents?: ReadonlyMap<string, { readonly paymentIntent: string; readonly charge: string | null }>;
  /** The next automatic payment attempt of open invoices whose retry schedule runs, by invoice. */
  readonly retries?: ReadonlyMap<string, number>;
  /** The hosted page and PDF of each finalized invoice, by invoice (links.ts). */
  readonly links?: ReadonlyMap<string, InvoiceLinkUrls>;
  /** The payment settings each subscription invoice was made with (its subscription's), by invoice. */
  readonly paymentSettings?: ReadonlyMap<string, InvoicePaymentSettings>;
}

/** What an invoice keeps of its subscription's `payment_settings` (the rest is the subscription's own). */
export interface InvoicePaymentSettings {
  readonly payment_method_options: Record<string, unknown> | null;
  readonly payment_method_types: string[] | null;
}

/** Where an invoice embeds its PaymentIntent and charge, for the versions that show them (versions/invoices.ts). */
export const invoiceIntentKey = (id: string): string => `${id}.payment_intent`;
export const invoiceChargeKey = (id: string): string => `${id}.charge`;

const NO_REFS: LineRefs = { prices: new Map(), taxRates: new Map() };

/** What older versions show whole of what `priceIds` and `taxRateIds` name, by id. */
export function embeddedRefs(refs: LineRefs, priceIds: readonly string[], taxRateIds: readonly string[]): Embedded {
  const out: Record<string, unknown> = {};
  for (const id of priceIds) {
    const price = refs.prices.get(id);
    if (price) out[id] = serializePrice(price);
  }
  for (const id of taxRateIds) {
    const rate = refs.taxRates.get(id);
    if (rate) out[id] = serializeTaxRate(rate);
  }
  return out;
}

/** The discounts `ids` name, with their coupons. */
function discountsOf(refs: LineRefs, ids: readonly string[]): Embedded {
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    const discount = refs.discounts?.[id] as { source?: { coupon?: string } } | undefined;
    if (!discount) continue;
    out[id] = discount;
    const coupon = discount.source?.coupon;
    if (coupon && refs.discounts![coupon]) out[coupon] = refs.discounts![coupon];
  }
  return out;
}

const taxRateIdsOf = (row: InvoiceLineRow): string[] => (row.taxes as unknown as LineTax[]).map((t) => t.tax_rate_details.tax_rate);

export function serializeLine(row: InvoiceLineRow, refs: LineRefs = NO_REFS) {
  const fromItem = row.invoiceItemId !== null;
  const subscriptionItem = row.subscriptionItemId !== null;
  const line = {
    id: row.id,
    object: LINE_OBJECT,
    amount: Number(row.amount),
    currency: row.currency,
    description: row.description,
    discount_amounts: row.discountAmounts as unknown as DiscountAmount[],
    discountable: row.discountable,
    discounts: row.discounts,
    invoice: row.invoiceId,
    livemode: false,
    metadata: row.metadata as Metadata,
    parent: subscriptionItem
      ? {
          type: 'subscription_item_details' as const,
          invoice_item_details: null,
          subscription_item_details: {
            invoice_item: row.invoiceItemId,
            proration: row.proration,
            proration_details: { credited_items: null },
            subscription: row.subscriptionId,
            subscription_item: row.subscriptionItemId!,
          },
        }
      : {
          type: 'invoice_item_details' as const,
          invoice_item_details: fromItem
            ? { invoice_item: row.invoiceItemId!, proration: row.proration, proration_details: { credited_items: null }, subscription: row.subscriptionId }
            : null,
          subscription_item_details: null,
        },
    period: { end: row.periodEnd, start: row.periodStart },
    pretax_credit_amounts: (row.discountAmounts as unknown as DiscountAmount[]).map((d) => ({ amount: d.amount, discount: d.discount, type: 'discount' as const })),
    pricing: { type: 'price_details' as const, price_details: { price: row.priceId, product: row.productId }, unit_amount_decimal: row.unitAmountDecimal },
    quantity: row.quantity,
    quantity_decimal: row.quantity === null ? null : String(row.quantity),
    subscription: row.subscriptionId,
    subtotal: Number(row.amount),
    taxes: row.taxes as unknown as LineTax[],
  };
  return embed(line, embeddedRefs(refs, [row.priceId], taxRateIdsOf(row)));
}

/** The methods the public invoice's `payment_method_options` lists, each null unless given. */
const OPTION_METHODS = ['acss_debit', 'bancontact', 'card', 'customer_balance', 'konbini', 'payto', 'pix', 'sepa_debit', 'upi', 'us_bank_account'];

/** The public `payment_settings`: its subscription's types and options, else none (the account's defaults). */
const paymentSettingsOf = (kept: InvoicePaymentSettings | undefined) => {
  const options = kept?.payment_method_options ?? null;
  return {
    default_mandate: null,
    payment_method_options: options === null ? null : { ...Object.fromEntries(OPTION_METHODS.map((m) => [m, null])), ...options },
    payment_method_types: kept?.payment_method_types ?? null,
  };
};

/**
 * `details`: what a manual invoice carries beyond the row (`invoice_details`); a subscription's
 * invoice has none, and advances (`auto_advance`) while it is open.
 */
export function serializeInvoice(row: InvoiceRow, lines: readonly InvoiceLineRow[], defaultTaxRates: readonly TaxRateRow[] = [], refs: LineRefs = NO_REFS, details: InvoiceDetails = NO_DETAILS) {
  const inline = lines.slice(0, INLINE_LINES);
  // On the invoice too: an event keeps only its object's (see src/events/emit.ts).
  const intent = refs.intents?.get(row.id);
  const embedded = {
    ...embeddedRefs(refs, inline.map((l) => l.priceId), inline.flatMap(taxRateIdsOf)),
    ...discountsOf(refs, row.discounts),
    ...(intent ? { [invoiceIntentKey(row.id)]: intent.paymentIntent, [invoiceChargeKey(row.id)]: intent.charge } : {}),
  };
  const totals = row.totals as unknown as StoredTotals;
  const amountDue = Number(row.amountDue);
  const amountPaid = Number(row.amountPaid);
  const open = row.status === 'open';
  const customer = totals.customer;
  const invoice = {
    id: row.id,
    object: INVOICE_OBJECT,
    account_country: null,
    account_name: null,
    account_tax_ids: null,
    amount_due: amountDue,
    amount_overpaid: 0,
    amount_paid: amountPaid,
    amount_remaining: row.status === 'void' ? 0 : Math.max(0, amountDue - amountPaid),
    amount_shipping: 0,
    application: null,
    attempt_count: row.attemptCount,
    attempted: row.attemptCount > 0,
    auto_advance: details.autoAdvance ?? open,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    automatically_finalizes_at: row.status === 'draft' ? details.finalizeAt : null,
    billing_reason: row.billingReason,
    collection_method: row.collectionMethod,
    created: row.created,
    currency: row.currency,
    custom_fields: null,
    customer: row.customerId as string | Record<string, unknown>,
    customer_account: null,
    customer_address: customer.address as Record<string, unknown> | null,
    customer_email: customer.email,
    customer_name: customer.name,
    customer_phone: customer.phone,
    customer_shipping: customer.shipping as Record<string, unknown> | null,
    customer_tax_exempt: customer.tax_exempt,
    default_payment_method: row.defaultPaymentMethod as string | Record<string, unknown> | null,
    default_source: null,
    default_tax_rates: defaultTaxRates.map(serializeTaxRate),
    description: details.description,
    discounts: row.discounts,
    due_date: row.dueDate,
    effective_at: row.finalizedAt,
    ending_balance: row.finalizedAt === null ? null : Number(row.endingBalance ?? 0),
    footer: details.footer,
    from_invoice: null,
    // Finalized invoices only, as the public API: a draft has neither.
    hosted_invoice_url: row.status === 'draft' ? null : (refs.links?.get(row.id)?.hosted ?? null),
    invoice_pdf: row.status === 'draft' ? null : (refs.links?.get(row.id)?.pdf ?? null),
    issuer: { type: 'self' },
    last_finalization_error: null,
    // Not in the public object (a payment intent holds it there, and none exists here): the
    // decline of the latest attempt, or null.
    latest_revision: null,
    lines: {
      object: 'list' as const,
      data: inline.map((line) => serializeLine(line, refs)),
      has_more: lines.length > INLINE_LINES,
      total_count: lines.length,
      url: `/v1/invoices/${row.id}/lines`,
    },
    livemode: false,
    metadata: row.metadata as Metadata,
    // Only while it is open: paying or closing it ends the schedule.
    next_payment_attempt: row.status === 'open' ? (refs.retries?.get(row.id) ?? null) : null,
    number: row.number,
    on_behalf_of: null,
    parent:
      row.subscriptionId === null
        ? null
        : {
            type: 'subscription_details' as const,
            quote_details: null,
            subscription_details: {
              metadata: (row.subscriptionMetadata as Metadata | null) ?? null,
              subscription: row.subscriptionId as string | Record<string, unknown>,
              ...(row.subscriptionProrationDate === null ? {} : { subscription_proration_date: row.subscriptionProrationDate }),
            },
          },
    payment_settings: paymentSettingsOf(refs.paymentSettings?.get(row.id)),
    period_end: row.periodEnd,
    period_start: row.periodStart,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    rendering: details.rendering,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: Number(row.startingBalance),
    statement_descriptor: null,
    status: row.status,
    status_transitions: {
      finalized_at: row.finalizedAt,
      marked_uncollectible_at: details.markedUncollectibleAt,
      paid_at: row.paidAt,
      voided_at: row.voidedAt,
    },
    subtotal: totals.subtotal,
    subtotal_excluding_tax: totals.subtotal_excluding_tax,
    test_clock: row.testClockId as string | Record<string, unknown> | null,
    total: totals.total,
    total_discount_amounts: totals.total_discount_amounts,
    total_excluding_tax: totals.total_excluding_tax,
    total_pretax_credit_amounts: totals.total_discount_amounts.map((d) => ({ amount: d.amount, discount: d.discount, type: 'discount' as const })),
    total_taxes: totals.total_taxes,
    webhooks_delivered_at: row.created,
  };
  return embed(invoice, embedded);
}

/** Sub-objects an expand path goes through (`parent.subscription_details.subscription`). */
export const INVOICE_PARENT_OBJECT = 'invoice.parent';
export const SUBSCRIPTION_DETAILS_OBJECT = 'invoice.parent.subscription_details';
export const FROM_INVOICE_OBJECT = 'invoice.from_invoice';
/** A line's and an invoice item's `pricing` and its `price_details` (`pricing.price_details.price`). */
export const PRICING_OBJECT = 'invoice.pricing';
export const PRICE_DETAILS_OBJECT = 'invoice.pricing.price_details';

/**
 * `discounts` (ids) expanded to their `discount` objects: the object embeds them already, with
 * their coupons, for the versions that show them whole (an invoice's, a subscription's).
 */
export const discountsField: ExpandableField = {
  type: 'discount',
  expand: async (value, parent) => (typeof value === 'string' ? (embeddedOf(parent)?.[value] ?? value) : value),
};

/** Neither invoices nor subscriptions here have sources (cards are PaymentMethods): `default_source` is null. */
export const defaultSourceField: ExpandableField = { type: 'customer_source', expand: async (value) => value };

export const invoiceExpandable: ExpandableFields = {
  customer: ref('customer'),
  discounts: discountsField,
  default_source: defaultSourceField,
  default_payment_method: ref('payment_method'),
  test_clock: ref('test_helpers.test_clock'),
  on_behalf_of: ref('account'),
  latest_revision: ref('invoice'),
  parent: pathField(INVOICE_PARENT_OBJECT),
  from_invoice: pathField(FROM_INVOICE_OBJECT),
};
export const lineExpandable: ExpandableFields = { subscription: ref('subscription'), pricing: pathField(PRICING_OBJECT) };

/** The sub-objects' fields, by type. */
export const pathExpandable: Readonly<Record<string, ExpandableFields>> = {
  [INVOICE_PARENT_OBJECT]: { subscription_details: pathField(SUBSCRIPTION_DETAILS_OBJECT) },
  [SUBSCRIPTION_DETAILS_OBJECT]: { subscription: ref('subscription') },
  [FROM_INVOICE_OBJECT]: { invoice: ref('invoice') },
  [PRICING_OBJECT]: { price_details: pathField(PRICE_DETAILS_OBJECT) },
  [PRICE_DETAILS_OBJECT]: { price: ref('price') },
};
