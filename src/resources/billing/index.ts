import { expandableOnly, type Area } from '../area';
import * as products from './products/routes';
import * as productSerializer from './products/serializer';
import { retrieveProductObject } from './products/service';
import * as prices from './prices/routes';
import * as priceSerializer from './prices/serializer';
import { retrievePriceObject } from './prices/service';
import * as taxRates from './tax_rates/routes';
import * as taxRateSerializer from './tax_rates/serializer';
import * as coupons from './coupons/routes';
import * as couponSerializer from './coupons/serializer';
import * as promotionCodes from './promotion_codes/routes';
import * as promotionCodeSerializer from './promotion_codes/serializer';
import * as subscriptions from './subscriptions/routes';
import * as subscriptionSerializer from './subscriptions/serializer';
import { customerSubscriptionsField, retrieveSubscriptionObject } from './subscriptions/service';
import * as invoices from './invoices/routes';
import { pages as invoicePages } from './invoices/pages';
import * as invoiceSerializer from './invoices/serializer';
import { invoiceIntentSettled, retrieveInvoiceObject } from './invoices/service';
import { lockInvoice } from './invoices/billing';
import * as invoiceItems from './invoice_items/routes';
import * as invoiceItemSerializer from './invoice_items/serializer';
import { invoicePaid } from './subscriptions/renewals';
import { scheduleSubscriptions } from './subscriptions/jobs';
import { useInvoicePayments } from '../payments';
import * as invoicePayments from './invoice_payments/routes';
import * as invoicePaymentSerializer from './invoice_payments/serializer';
import { confirmationSecretField, invoicePaymentsField, retrieveInvoicePaymentObject } from './invoice_payments/service';
import * as testClocks from './test_clocks/routes';
import * as testClockSerializer from './test_clocks/serializer';
import { retrieveTestClockObject } from './test_clocks/service';
import { billingWorker, reconcileBilling } from './subscriptions/pipeline';
import { invoicesWorker, reconcileInvoices } from './invoices/pipeline';
import { versionChanges } from './versions';
import { requestChanges } from './requestVersions';
import { retrySchedules } from './invoices/retries';

// Billing: products, prices, tax rates, coupons, promotion codes, subscriptions and their items,
// invoices and invoice items, and test clocks.
//
// Inside, calls run one way: test clocks → subscriptions → invoices → prices, products, coupons,
// tax rates; prices → products (a price makes or finds its product); promotion codes → coupons.
// The other directions go through interfaces the lower one declares, filled in by its route:
// a product's `default_price_data` (`DefaultPrices`, products/service.ts) and an invoice paid
// through its own operation (`InvoicePaid`, invoices/service.ts). The billing worker
// (subscriptions/pipeline.ts) runs subscription renewals and test clock advances; the invoices
// worker (invoices/pipeline.ts) finalizes drafts with auto_advance.
// Across areas: billing → payments (a customer's card, a test card's outcome), through its index.

// An invoice's PaymentIntent confirmed by its customer (or its challenge answered) pays the invoice here.
useInvoicePayments({
  settled: (tx, deps, intent, outcome) => invoiceIntentSettled(tx, deps, intent, outcome, { paid: invoicePaid, schedule: scheduleSubscriptions }),
  lock: async (tx, accountId, invoiceId) => void (await lockInvoice(tx, accountId, invoiceId)),
});

export const area: Area = {
  name: 'billing',
  // BILLING_RETRY_SCHEDULE is checked as a process starts: a bad one stops it.
  checkConfig: (config) => void retrySchedules(config),
  routes: [
    ...products.routes,
    ...prices.routes,
    ...taxRates.routes,
    ...coupons.routes,
    ...promotionCodes.routes,
    ...subscriptions.routes,
    ...testClocks.routes,
    ...invoices.routes,
    ...invoiceItems.routes,
    ...invoicePayments.routes,
  ],
  objects: {
    [productSerializer.OBJECT]: { expandable: productSerializer.expandable, retrieve: retrieveProductObject },
    [priceSerializer.OBJECT]: { expandable: priceSerializer.expandable, retrieve: retrievePriceObject },
    [taxRateSerializer.OBJECT]: { expandable: taxRateSerializer.expandable },
    [couponSerializer.OBJECT]: { expandable: couponSerializer.expandable },
    ...expandableOnly(promotionCodeSerializer.expandable),
    [subscriptionSerializer.SUBSCRIPTION_OBJECT]: { expandable: subscriptionSerializer.subscriptionExpandable, retrieve: retrieveSubscriptionObject },
    [subscriptionSerializer.ITEM_OBJECT]: { expandable: subscriptionSerializer.itemExpandable },
    plan: { expandable: subscriptionSerializer.planExpandable },
    [testClockSerializer.OBJECT]: { expandable: testClockSerializer.expandable, retrieve: retrieveTestClockObject },
    // `payments` and `confirmation_secret` show only when expanded, as the public API includes them.
    [invoiceSerializer.INVOICE_OBJECT]: {
      expandable: { ...invoiceSerializer.invoiceExpandable, payments: invoicePaymentsField, confirmation_secret: confirmationSecretField },
      retrieve: retrieveInvoiceObject,
    },
    [invoicePaymentSerializer.INVOICE_PAYMENT_OBJECT]: { expandable: invoicePaymentSerializer.expandable, retrieve: retrieveInvoicePaymentObject },
    [invoicePaymentSerializer.PAYMENT_DETAILS_OBJECT]: { expandable: invoicePaymentSerializer.paymentExpandable },
    [invoicePaymentSerializer.INVOICE_PAYMENT_LIST_OBJECT]: { expandable: {} },
    invoice_confirmation_secret: { expandable: {} },
    [invoiceSerializer.LINE_OBJECT]: { expandable: invoiceSerializer.lineExpandable },
    ...expandableOnly(invoiceSerializer.pathExpandable),
    [invoiceItemSerializer.INVOICE_ITEM_OBJECT]: { expandable: invoiceItemSerializer.invoiceItemExpandable },
  },
  // A customer's subscriptions (payments serves customers).
  objectFields: { customer: { subscriptions: customerSubscriptionsField } },
  // The hosted invoice page and PDF (`hosted_invoice_url`, `invoice_pdf`).
  pages: invoicePages,
  workers: [billingWorker, invoicesWorker],
  reconcilers: [reconcileBilling, reconcileInvoices],
  versionChanges,
  requestChanges,
};

/** A customer's discount, redeemed and shown by billing (the registry gives it to payments). */
export { customerDiscounts } from './subscriptions/customerDiscounts';
