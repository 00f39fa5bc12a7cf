import { ref } from '../../../kernel/expand';
import { isJsonObject, type VersionChange } from '../../../kernel/versions';
import { invoiceChargeKey, invoiceIntentKey } from '../invoices/serializer';
import { decimalString, embeddedPrice, has, isWhole, planOf, singularDiscount, without, withDefaults, type Json } from './shared';

// Invoices, their lines and invoice items. 2025-03-31.basil replaced most of their top-level
// references with `parent`, `pricing`, `taxes` and `payments`; before it they were as below.

const BASIL = '2025-03-31.basil';

interface Tax {
  amount: number;
  tax_behavior: string;
  tax_rate_details: { tax_rate: string } | null;
  taxability_reason: string | null;
  taxable_amount: number | null;
}

const taxesOf = (value: unknown): Tax[] => (Array.isArray(value) ? (value as Tax[]) : []);

/** `taxes`/`total_taxes` as the older `tax_amounts`/`total_tax_amounts`. */
const taxAmountsOf = (taxes: Tax[]) =>
  taxes.map((t) => ({
    amount: t.amount,
    inclusive: t.tax_behavior === 'inclusive',
    tax_rate: t.tax_rate_details?.tax_rate ?? null,
    taxability_reason: t.taxability_reason ?? null,
    taxable_amount: t.taxable_amount ?? null,
  }));

const inclusiveTax = (taxes: Tax[]): number => taxes.filter((t) => t.tax_behavior === 'inclusive').reduce((sum, t) => sum + t.amount, 0);

export const invoiceChanges: readonly VersionChange[] = [
  // ── invoice ──
  {
    version: BASIL,
    object: 'invoice',
    description:
      'Adds `parent` to invoices, the details of what generated them, in place of `quote`, `subscription`, `subscription_details` ' +
      'and `subscription_proration_date` (Sandbank has no quotes: `quote` is null).',
    expandable: { subscription: ref('subscription'), parent: null },
    downgrade: (invoice) => {
      if (!has(invoice, 'parent')) return invoice;
      const out = without(invoice, ['parent']);
      const details = isJsonObject(invoice.parent) && isJsonObject(invoice.parent.subscription_details) ? invoice.parent.subscription_details : null;
      out.quote = isJsonObject(invoice.parent) && isJsonObject(invoice.parent.quote_details) ? invoice.parent.quote_details.quote : null;
      out.subscription = details?.subscription ?? null;
      out.subscription_details = details ? { metadata: details.metadata ?? null } : null;
      if (details && details.subscription_proration_date !== undefined) out.subscription_proration_date = details.subscription_proration_date;
      return out;
    },
  },
  {
    version: BASIL,
    object: 'invoice',
    description:
      'Adds support for multiple (partial) payments on invoices: removes `payment_intent`, `charge`, `paid` and `paid_out_of_band`, ' +
      'and `application_fee_amount` and `transfer_data`. Before, `paid` said whether the invoice is paid (its status `paid`); ' +
      '`payment_intent` is the PaymentIntent the invoice is paid through and `charge` its latest charge (null before any); ' +
      'Sandbank has no application fees or transfers: those are null (`paid_out_of_band` false).',
    // `payments` and `confirmation_secret` came with it.
    expandable: { payment_intent: ref('payment_intent'), charge: ref('charge'), payments: null, confirmation_secret: null },
    downgrade: (invoice, _newest, embedded) => {
      const out = has(invoice, 'status') ? { ...invoice, paid: invoice.status === 'paid' } : invoice;
      const id = String(invoice.id);
      const intent = (embedded[invoiceIntentKey(id)] ?? null) as Json;
      const charge = (embedded[invoiceChargeKey(id)] ?? null) as Json;
      return withDefaults(out, { paid_out_of_band: false, payment_intent: intent, charge, application_fee_amount: null, transfer_data: null });
    },
  },
  {
    version: BASIL,
    object: 'invoice',
    description:
      'Replaces top-level tax-related properties with `total_taxes`: before, `tax` (their sum, null without taxes) and ' +
      '`total_tax_amounts` (`amount`, `inclusive`, `tax_rate`, `taxability_reason`, `taxable_amount`).',
    downgrade: (invoice) => {
      if (!has(invoice, 'total_taxes')) return invoice;
      const taxes = taxesOf(invoice.total_taxes);
      const out = without(invoice, ['total_taxes']);
      out.tax = taxes.length === 0 ? null : taxes.reduce((sum, t) => sum + t.amount, 0);
      out.total_tax_amounts = taxAmountsOf(taxes);
      return out;
    },
  },
  {
    version: BASIL,
    object: 'invoice',
    description: 'Removes the singular `discount` in favor of `discounts`: before, `discount` was the first of them, whole (null without one).',
    downgrade: (invoice, _newest, embedded) => (has(invoice, 'discounts') ? { ...invoice, discount: singularDiscount(invoice.discounts, embedded) } : invoice),
  },
  {
    version: '2024-04-10',
    object: 'invoice',
    description: 'Renames the `rendering_options` attribute for invoices to `rendering`: before, `rendering_options` (`amount_tax_display`) beside it.',
    downgrade: (invoice) => {
      if (!has(invoice, 'rendering')) return invoice;
      const rendering = invoice.rendering;
      return { ...invoice, rendering_options: isJsonObject(rendering) ? { amount_tax_display: rendering.amount_tax_display ?? null } : null };
    },
  },
  {
    version: '2020-08-27',
    object: 'invoice',
    description: 'Removes the `tax_percent` attribute in favor of tax rates: before, invoices had it (null: taxes here are tax rates).',
    downgrade: (invoice) => withDefaults(invoice, { tax_percent: null }),
  },

  // ── line_item (an invoice's lines) ──
  {
    version: BASIL,
    object: 'line_item',
    description:
      'Adds `parent` to invoice line items in place of `type`, `subscription_item`, `invoice_item`, `proration` and ' +
      '`proration_details` (`subscription` stays): a line of a subscription item was `type: subscription`, one of an invoice ' +
      'item (a proration too) `type: invoiceitem`.',
    expandable: { parent: null },
    downgrade: (line) => {
      if (!has(line, 'parent')) return line;
      const out = without(line, ['parent']);
      const parent = isJsonObject(line.parent) ? line.parent : {};
      const details = isJsonObject(parent.subscription_item_details)
        ? parent.subscription_item_details
        : isJsonObject(parent.invoice_item_details)
          ? parent.invoice_item_details
          : null;
      const invoiceItem = details?.invoice_item ?? null;
      out.type = invoiceItem !== null || !isJsonObject(parent.subscription_item_details) ? 'invoiceitem' : 'subscription';
      if (invoiceItem !== null) out.invoice_item = invoiceItem;
      if (details?.subscription_item) out.subscription_item = details.subscription_item;
      out.proration = details?.proration ?? false;
      out.proration_details = details?.proration_details ?? null;
      if (!has(out, 'subscription')) out.subscription = details?.subscription ?? null;
      return out;
    },
  },
  {
    version: BASIL,
    object: 'line_item',
    description:
      'Replaces `price` and `plan` on invoice line items with `pricing`: before, the price whole and, for a recurring price, its plan.',
    expandable: { pricing: null },
    downgrade: (line, _newest, embedded) => {
      if (!has(line, 'pricing')) return line;
      const out = without(line, ['pricing']);
      const details = isJsonObject(line.pricing) && isJsonObject(line.pricing.price_details) ? line.pricing.price_details : null;
      const price = details ? embeddedPrice(details.price, embedded) : null;
      out.price = price;
      out.plan = price ? planOf(price) : null;
      return out;
    },
  },
  {
    version: BASIL,
    object: 'line_item',
    description:
      'Replaces `tax_amounts` and `tax_rates` on invoice line items with `taxes`, and removes `amount_excluding_tax` and ' +
      '`unit_amount_excluding_tax` (the amount and unit amount without inclusive taxes).',
    downgrade: (line, _newest, embedded) => {
      if (!has(line, 'taxes')) return line;
      const taxes = taxesOf(line.taxes);
      const out = without(line, ['taxes']);
      out.tax_amounts = taxAmountsOf(taxes);
      const rateIds = [...new Set(taxes.flatMap((t) => (t.tax_rate_details ? [t.tax_rate_details.tax_rate] : [])))];
      out.tax_rates = rateIds.flatMap((id) => (isJsonObject(embedded[id]) ? [embedded[id]] : []));
      if (typeof line.amount === 'number') {
        const excluding = line.amount - inclusiveTax(taxes);
        out.amount_excluding_tax = excluding;
        out.unit_amount_excluding_tax = typeof line.quantity === 'number' && line.quantity > 0 ? decimalString(excluding / line.quantity) : null;
      }
      return out;
    },
  },

  // ── invoiceitem ──
  {
    version: BASIL,
    object: 'invoiceitem',
    description: 'Adds `parent` to invoice items in place of `subscription` and `subscription_item`.',
    expandable: { subscription: ref('subscription'), parent: null },
    downgrade: (item) => {
      if (!has(item, 'parent')) return item;
      const out = without(item, ['parent']);
      const details = isJsonObject(item.parent) && isJsonObject(item.parent.subscription_details) ? item.parent.subscription_details : null;
      out.subscription = details?.subscription ?? null;
      if (details?.subscription_item) out.subscription_item = details.subscription_item;
      return out;
    },
  },
  {
    version: BASIL,
    object: 'invoiceitem',
    description:
      'Replaces `price`, `plan`, `unit_amount` and `unit_amount_decimal` on invoice items with `pricing`: before, the price whole, ' +
      'its plan for a recurring price, and the unit amount (`unit_amount` null when it has decimals).',
    expandable: { pricing: null },
    downgrade: (item, _newest, embedded) => {
      if (!has(item, 'pricing')) return item;
      const out = without(item, ['pricing']);
      const pricing = isJsonObject(item.pricing) ? item.pricing : {};
      const details = isJsonObject(pricing.price_details) ? pricing.price_details : null;
      const price = details ? embeddedPrice(details.price, embedded) : null;
      out.price = price;
      out.plan = price ? planOf(price) : null;
      const decimal = typeof pricing.unit_amount_decimal === 'string' ? pricing.unit_amount_decimal : null;
      out.unit_amount_decimal = decimal;
      out.unit_amount = decimal !== null && Number.isInteger(Number(decimal)) ? Number(decimal) : null;
      return out;
    },
  },
];
