import type { Area } from '../area';
import * as customers from './customers/routes';
import * as customerSerializer from './customers/serializer';
import { retrieveCustomerObject } from './customers/service';
import * as paymentMethods from './payment_methods/routes';
import * as paymentMethodSerializer from './payment_methods/serializer';
import { retrievePaymentMethodObject } from './payment_methods/service';
import { cvcPurge } from './payment_methods/jobs';
import * as setupIntents from './setup_intents/routes';
import * as setupIntentSerializer from './setup_intents/serializer';
import { retrieveSetupIntentObject, setupIntentTarget } from './setup_intents/service';
import * as authentications from './authentications/routes';
import * as authenticationSerializer from './authentications/serializer';
import { authenticationExpiryWorker, reconcileAuthenticationExpiries } from './authentications/pipeline';
import { useAuthenticationTarget } from './authentications/service';
import * as refunds from './refunds/routes';
import * as refundSerializer from './refunds/serializer';
import { chargeRefundsField, retrieveRefundObject } from './refunds/service';
import { customerTaxIdsField } from './tax_ids/service';
import { reconcileRefundJobs, refundsWorker } from './refunds/pipeline';
import { requestChanges } from './requestVersions';
import { versionChanges } from './versions';
import * as paymentIntents from './payment_intents/routes';
import * as paymentIntentSerializer from './payment_intents/serializer';
import { paymentIntentAuthentication, retrievePaymentIntentObject } from './payment_intents/service';
import { paymentIntentsWorker, reconcilePaymentIntentJobs } from './payment_intents/pipeline';
import * as charges from './charges/routes';
import * as taxIds from './tax_ids/routes';
import * as taxIdSerializer from './tax_ids/serializer';
import * as balanceTransactions from './customer_balance_transactions/routes';
import * as balanceTransactionSerializer from './customer_balance_transactions/serializer';
import * as chargeSerializer from './charges/serializer';
import { retrieveChargeObject } from './charges/service';

// Payments: customers and their payment methods (cards and the public test cards); next,
// payment and setup intents, charges and refunds.
//
// Inside: customers → payment methods (a customer attaches its first card and checks its default
// one). A card's detach clears its customer's default through `DetachedFromCustomer`, which the
// payment methods service declares and its route fills with the customers service's function.
// No other area is imported; billing and forwarding use what is exported below.

// A SetupIntent's 3-D Secure challenge comes back to it through its target.
useAuthenticationTarget('setup_intent', setupIntentTarget);

export const area: Area = {
  name: 'payments',
  routes: [...customers.routes, ...taxIds.routes, ...balanceTransactions.routes, ...paymentMethods.routes, ...paymentIntents.routes, ...charges.routes, ...refunds.routes, ...setupIntents.routes, ...authentications.routes],
  objects: {
    [customerSerializer.OBJECT]: { expandable: { ...customerSerializer.expandable, tax_ids: customerTaxIdsField }, retrieve: retrieveCustomerObject },
    [customerSerializer.INVOICE_SETTINGS_OBJECT]: { expandable: customerSerializer.invoiceSettingsExpandable },
    [paymentMethodSerializer.PAYMENT_METHOD_OBJECT]: { expandable: paymentMethodSerializer.expandable, retrieve: retrievePaymentMethodObject },
    [setupIntentSerializer.SETUP_INTENT_OBJECT]: { expandable: setupIntentSerializer.expandable, retrieve: retrieveSetupIntentObject },
    [paymentIntentSerializer.PAYMENT_INTENT_OBJECT]: { expandable: paymentIntentSerializer.expandable, retrieve: retrievePaymentIntentObject },
    // A charge's `refunds` list shows only when expanded; refunds/ serves it.
    [chargeSerializer.CHARGE_OBJECT]: { expandable: { ...chargeSerializer.expandable, refunds: chargeRefundsField }, retrieve: retrieveChargeObject },
    [chargeSerializer.TRANSFER_DATA_OBJECT]: { expandable: chargeSerializer.transferDataExpandable },
    [refundSerializer.REFUND_OBJECT]: { expandable: refundSerializer.expandable, retrieve: retrieveRefundObject },
    [refundSerializer.REFUND_LIST_OBJECT]: { expandable: {} },
    [authenticationSerializer.OBJECT]: { expandable: authenticationSerializer.expandable },
    [taxIdSerializer.TAX_ID_OBJECT]: { expandable: taxIdSerializer.expandable },
    [balanceTransactionSerializer.BALANCE_TRANSACTION_OBJECT]: { expandable: balanceTransactionSerializer.expandable },
  },
  pages: authentications.pages,
  schedules: [cvcPurge],
  workers: [paymentIntentsWorker, refundsWorker, authenticationExpiryWorker],
  reconcilers: [reconcilePaymentIntentJobs, reconcileRefundJobs, reconcileAuthenticationExpiries],
  requestChanges,
  versionChanges,
};

// A PaymentIntent's 3-D Secure challenge moves it on through this target when answered or expired.
useAuthenticationTarget('payment_intent', paymentIntentAuthentication);

/** For other areas: a payment method by id (a public test id makes one), a card's CVC, a test card's charge outcome. */
export { createCardPaymentMethod, lockCustomer, resolvePaymentMethod, takeCvc } from './payment_methods/service';
export { paymentResult, type CardOutcome } from './payment_methods/testCards';

/** The `next_action` of an intent waiting on its 3-D Secure challenge (the hosted invoice page sends its customer there). */
export { pendingNextAction } from './authentications/service';

/** A customer's tax ids as its `tax_ids` list shows them (for `expand[]=tax_ids` on the customer). */
export { customerTaxIdList } from './tax_ids/service';

/** A customer's balance applied to an invoice being finalized (billing calls it). */
export { applyCustomerBalance, type AppliedBalance } from './customer_balance_transactions/service';

/** Customers' discounts, which billing gives (coupons live there): the registry hands them over. */
export { noActiveDiscount, useCustomerDiscounts, type CustomerDiscounts } from './customers/service';
export { serializeDeletedDiscount, type CustomerDiscount } from './customers/serializer';

/** Invoices are paid through PaymentIntents; billing registers what an invoice's intent settling does. */
export {
  payInvoiceAmount,
  cancelInvoiceIntent,
  invoiceAttemptResult,
  intentClientSecret,
  useInvoicePayments,
  type InvoiceIntent,
  type InvoicePayment,
  type InvoicePaymentTarget,
} from './payment_intents/service';
