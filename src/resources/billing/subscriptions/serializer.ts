import type { CustomerDiscount } from '../../payments';
import type { Subscription, SubscriptionItem } from '../../../generated/prisma/client';
import { ref, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import { embed, type Embedded } from '../../../kernel/versions';
import { serializePrice, type PriceRow } from '../prices/serializer';
import { serializeTaxRate, type TaxRateRow } from '../tax_rates/serializer';
import { defaultSourceField, discountsField } from '../invoices/serializer';

export const SUBSCRIPTION_OBJECT = 'subscription';
export const ITEM_OBJECT = 'subscription_item';

/** `pause_collection` as stored and shown. */
export interface PauseCollection {
  behavior: 'keep_as_draft' | 'mark_uncollectible' | 'void';
  resumes_at: number | null;
}

/**
 * Columns newer than the generated client (read and written by SQL, see subscriptions/billing.ts):
 * `trial_settings[end_behavior][missing_payment_method]` and `pause_collection`.
 */
export interface SubscriptionSettings {
  trialMissingPaymentMethod: string;
  pauseCollection: PauseCollection | null;
}

/** The columns read and written by SQL (subscriptions/billing.ts), never through the generated client's model. */
export type SqlColumns = keyof SubscriptionSettings | 'paymentSettings';

export type SubscriptionRow = Omit<Subscription, 'seq' | 'accountId' | SqlColumns> & SubscriptionSettings;
export type ItemRow = Omit<SubscriptionItem, 'seq' | 'accountId'>;

/** A discount a subscription (or an item) carries, as stored: the shape customers store theirs in. */
export type StoredDiscount = CustomerDiscount;

/** What `pending_update` keeps: the change that waits for `invoice` to be paid. */
export interface StoredPendingUpdate {
  expires_at: number;
  invoice: string;
  /** The items as they will be, serialized when the change was parked. */
  subscription_items: Record<string, unknown>[];
  /** The item changes to apply (see subscriptions/service.ts). */
  changes: Record<string, unknown>[];
}

export interface ItemView {
  readonly row: ItemRow;
  readonly price: PriceRow;
  /** The item's own tax rates, or null when the subscription's defaults apply. */
  readonly taxRates: readonly TaxRateRow[] | null;
}

export interface SubscriptionView {
  readonly row: SubscriptionRow;
  readonly items: readonly ItemView[];
  readonly defaultTaxRates: readonly TaxRateRow[];
  /** Its and its items' discounts as `discount` objects, with their coupons, by id: older versions show them whole (`embed`). */
  readonly discounts?: Embedded;
  /** `payment_settings` as given at creation (a column newer than the generated client: read by `viewOf`). */
  readonly paymentSettings?: StoredPaymentSettings | null;
}

/** A subscription's `payment_settings`, in the public shape. */
export interface StoredPaymentSettings {
  readonly payment_method_options: Record<string, unknown> | null;
  readonly payment_method_types: string[] | null;
  readonly save_default_payment_method: 'off' | 'on_subscription';
}

/** The legacy `plan` every item still carries, made from its price. */
export function serializePlan(price: PriceRow) {
  const recurring = price.recurring as { interval: string; interval_count: number; usage_type: string };
  return {
    id: price.id,
    object: 'plan' as const,
    active: price.active,
    amount: price.unitAmount === null ? null : Number(price.unitAmount),
    amount_decimal: price.unitAmountDecimal,
    billing_scheme: price.billingScheme,
    created: price.created,
    currency: price.currency,
    interval: recurring.interval,
    interval_count: recurring.interval_count,
    livemode: false,
    metadata: price.metadata as Metadata,
    meter: null,
    nickname: price.nickname,
    product: price.productId as string | Record<string, unknown>,
    tiers_mode: price.tiersMode,
    transform_usage: price.transformQuantity as Record<string, unknown> | null,
    trial_period_days: null,
    usage_type: recurring.usage_type,
  };
}

export const discountIds = (stored: unknown): string[] => (stored as StoredDiscount[]).map((d) => d.id);

export function serializeItem(item: ItemView, sub: Pick<SubscriptionRow, 'id' | 'periodStart' | 'periodEnd'>) {
  const { row } = item;
  const out: Record<string, unknown> = {
    id: row.id,
    object: ITEM_OBJECT,
    billing_thresholds: row.billingThresholds as { usage_gte: number | null } | null,
    created: row.created,
    current_period_end: sub.periodEnd,
    current_period_start: sub.periodStart,
    current_trial: null,
    discounts: discountIds(row.discounts),
    metadata: row.metadata as Metadata,
    plan: serializePlan(item.price),
    price: serializePrice(item.price),
    subscription: sub.id,
    tax_rates: item.taxRates === null ? [] : item.taxRates.map(serializeTaxRate),
  };
  // Metered items have no quantity, as in the public API.
  if (row.quantity !== null) out.quantity = row.quantity;
  return out;
}

export const serializeDeletedItem = (id: string) => ({ id, object: ITEM_OBJECT, deleted: true as const });

export function serializeSubscription(view: SubscriptionView) {
  const { row } = view;
  const pending = row.pendingUpdate as StoredPendingUpdate | null;
  const subscription = {
    id: row.id,
    object: SUBSCRIPTION_OBJECT,
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: row.billingCycleAnchor,
    billing_cycle_anchor_config: null,
    billing_mode: { flexible: { proration_discounts: 'included' }, type: 'flexible', updated_at: row.created },
    billing_schedules: [],
    billing_thresholds: null,
    cancel_at: row.cancelAt ?? (row.cancelAtPeriodEnd ? row.periodEnd : null),
    cancel_at_period_end: row.cancelAtPeriodEnd,
    canceled_at: row.canceledAt,
    cancellation_details: { comment: null, feedback: null, feedback_option: null, reason: null, ...((row.cancellationDetails as Record<string, unknown> | null) ?? {}) },
    collection_method: row.collectionMethod,
    created: row.created,
    currency: row.currency,
    customer: row.customerId as string | Record<string, unknown>,
    customer_account: null,
    days_until_due: row.daysUntilDue,
    default_payment_method: row.defaultPaymentMethod as string | Record<string, unknown> | null,
    default_source: null,
    default_tax_rates: view.defaultTaxRates.map(serializeTaxRate),
    description: row.description,
    discounts: discountIds(row.discounts),
    ended_at: row.endedAt,
    invoice_settings: { account_tax_ids: null, custom_fields: null, description: null, footer: null, issuer: { type: 'self' } },
    items: {
      object: 'list' as const,
      data: view.items.map((item) => serializeItem(item, row)),
      has_more: false,
      total_count: view.items.length,
      url: `/v1/subscription_items?subscription=${row.id}`,
    },
    latest_invoice: row.latestInvoice as string | Record<string, unknown> | null,
    livemode: false,
    managed_payments: null,
    metadata: row.metadata as Metadata,
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: row.pauseCollection === null ? null : { behavior: row.pauseCollection.behavior, resumes_at: row.pauseCollection.resumes_at },
    payment_settings: view.paymentSettings ?? { payment_method_options: null, payment_method_types: null, save_default_payment_method: 'off' },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update:
      pending === null
        ? null
        : {
            billing_cycle_anchor: null,
            cancel_at_period_end: null,
            discount: null,
            discounts: null,
            expires_at: pending.expires_at,
            metadata: null,
            subscription_items: pending.subscription_items,
            trial_end: null,
            trial_from_plan: null,
          },
    schedule: null,
    start_date: row.startDate,
    status: row.status,
    test_clock: row.testClockId as string | Record<string, unknown> | null,
    transfer_data: null,
    trial_end: row.trialEnd,
    trial_settings: { end_behavior: { billing_cycle_anchor: null, missing_payment_method: row.trialMissingPaymentMethod } },
    trial_start: row.trialStart,
  };
  return embed(subscription, view.discounts ?? {});
}

export const subscriptionExpandable: ExpandableFields = {
  customer: ref('customer'),
  default_payment_method: ref('payment_method'),
  latest_invoice: ref('invoice'),
  test_clock: ref('test_helpers.test_clock'),
  pending_setup_intent: ref('setup_intent'),
  discounts: discountsField,
  default_source: defaultSourceField,
  on_behalf_of: ref('account'),
};

export const itemExpandable: ExpandableFields = {
  // Already an object: expansion goes through it (`price.product`).
  price: { type: 'price', expand: async (value) => value },
  plan: { type: 'plan', expand: async (value) => value },
};

export const planExpandable: ExpandableFields = { product: ref('product') };
