import type { InvoiceItem } from '../../../generated/prisma/client';
import { pathField, ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { embed } from '../../../kernel/versions';
import type { PriceRow } from '../prices/serializer';
import { serializeTaxRate, type TaxRateRow } from '../tax_rates/serializer';
import type { DiscountAmount } from '../invoices/amounts';
import { embeddedRefs, PRICING_OBJECT } from '../invoices/serializer';

export const INVOICE_ITEM_OBJECT = 'invoiceitem';

/** An item as its object shows it (its discounts' records, `discountRecords`, are read and written apart). */
export type InvoiceItemRow = Omit<InvoiceItem, 'seq' | 'accountId' | 'discountRecords'>;

/** `price`: the item's price, which versions before 2025-03-31.basil showed whole (`embed`). */
export function serializeInvoiceItem(row: InvoiceItemRow, taxRates: readonly TaxRateRow[], price?: PriceRow) {
  const discountAmounts = row.discountAmounts as unknown as DiscountAmount[];
  const item = {
    id: row.id,
    object: INVOICE_ITEM_OBJECT,
    amount: Number(row.amount),
    currency: row.currency,
    customer: row.customerId as string | Record<string, unknown>,
    customer_account: null,
    date: row.date,
    description: row.description,
    discountable: row.discountable,
    discounts: row.discounts,
    invoice: row.invoiceId as string | Record<string, unknown> | null,
    livemode: false,
    metadata: row.metadata as Metadata,
    net_amount: Number(row.amount) - discountAmounts.reduce((sum, d) => sum + d.amount, 0),
    parent:
      row.subscriptionId === null
        ? null
        : {
            type: 'subscription_details' as const,
            subscription_details: { subscription: row.subscriptionId, ...(row.subscriptionItemId === null ? {} : { subscription_item: row.subscriptionItemId }) },
          },
    period: { end: row.periodEnd, start: row.periodStart },
    pricing: { type: 'price_details' as const, price_details: { price: row.priceId, product: row.productId }, unit_amount_decimal: row.unitAmountDecimal },
    proration: row.proration,
    proration_details: { credited_items: null, discount_amounts: discountAmounts },
    quantity: row.quantity,
    quantity_decimal: String(row.quantity),
    tax_rates: taxRates.length === 0 ? null : taxRates.map(serializeTaxRate),
    test_clock: row.testClockId as string | Record<string, unknown> | null,
  };
  return embed(item, price ? embeddedRefs({ prices: new Map([[price.id, price]]), taxRates: new Map() }, [price.id], []) : {});
}

export const invoiceItemExpandable: ExpandableFields = {
  customer: ref('customer'),
  invoice: ref('invoice'),
  test_clock: ref('test_helpers.test_clock'),
  pricing: pathField(PRICING_OBJECT),
};

/** What a deleted invoice item answers. */
export const deletedInvoiceItem = (id: string) => ({ id, object: INVOICE_ITEM_OBJECT, deleted: true as const });
