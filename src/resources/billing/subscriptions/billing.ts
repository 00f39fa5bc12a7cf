import { Prisma } from '../../../generated/prisma/client';
import { newId } from '../../../lib/ids';
import type { Tx } from '../../../events/emit';
import type { PriceRow } from '../prices/serializer';
import type { TaxRateRow } from '../tax_rates/serializer';
import type { CouponRow } from '../coupons/serializer';
import { formatDate, formatMoney, percentDiscount, priceAmount, prorate, type AppliedDiscount, type DiscountAmount } from '../invoices/amounts';
import { collectInvoice, createInvoice, itemLines, openInvoicePayment, paymentMethodFor, emitIn, pricesById, taxRatesById, type Charge, type DraftLine, type MadeInvoice, type OwnedDiscount, type Scope } from '../invoices/billing';
import { discountObjects } from '../coupons/serializer';
import type { Embedded } from '../../../kernel/versions';
import { serializeInvoiceItem, type InvoiceItemRow } from '../invoice_items/serializer';
import {
  type ItemRow,
  type ItemView,
  type PauseCollection,
  type StoredDiscount,
  type SqlColumns,
  type SubscriptionSettings,
  type StoredPaymentSettings,
  type SubscriptionRow,
  type SubscriptionView,
} from './serializer';

// What subscriptions bill: their periods' lines, the prorations a change makes, and the
// invoices of both; used by requests and by the renewal worker alike.

/** A stored subscription as the generated client reads it (without the columns `settingsOf` reads). */
export type StoredRow = Omit<SubscriptionRow, keyof SubscriptionSettings> & { seq?: bigint; accountId?: string } & Partial<Record<SqlColumns, unknown>>;

/** A subscription with its items, prices and tax rates, for serializing and billing. */
export async function loadView(tx: Tx, row: StoredRow, accountId: string): Promise<SubscriptionView> {
  return (await loadViews(tx, [row], accountId))[0];
}

/**
 * The views of `rows` (a page of a list), in their order: one read each for all their items, SQL
 * columns, prices, tax rates and coupons, not one set per row.
 */
export async function loadViews(tx: Tx, rows: readonly StoredRow[], accountId: string): Promise<SubscriptionView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const items = await tx.subscriptionItem.findMany({ where: { subscriptionId: { in: ids } }, orderBy: { seq: 'asc' } });
  // Rows the generated client read whole carry those columns already.
  const whole = rows.every((r) => r.trialMissingPaymentMethod !== undefined && r.pauseCollection !== undefined && r.paymentSettings !== undefined);
  const columns = whole ? new Map<string, SqlColumnRow>() : await sqlColumnsOf(tx, ids);
  const itemsOf = new Map<string, ItemRow[]>(ids.map((id) => [id, []]));
  for (const { seq: _s, accountId: _a, ...item } of items) itemsOf.get(item.subscriptionId)?.push(item);
  const entries = rows.map((row) => {
    const found = columns.get(row.id);
    // The row's own values when it was read with them (by SQL), else the column's.
    const settings =
      row.trialMissingPaymentMethod === undefined || row.pauseCollection === undefined
        ? { trialMissingPaymentMethod: found?.trial_missing_payment_method ?? 'create_invoice', pauseCollection: found?.pause_collection ?? null }
        : { trialMissingPaymentMethod: row.trialMissingPaymentMethod as string, pauseCollection: row.pauseCollection as PauseCollection | null };
    const paymentSettings = (row.paymentSettings === undefined ? found?.payment_settings : (row.paymentSettings as StoredPaymentSettings | null)) ?? null;
    return { row: { ...stripRow(row), ...settings }, items: itemsOf.get(row.id)!, paymentSettings };
  });
  return viewsOf(tx, entries, accountId);
}

const stripRow = (row: StoredRow) => {
  const { seq: _s, accountId: _a, trialMissingPaymentMethod: _t, pauseCollection: _p, paymentSettings: _ps, ...rest } = row;
  return rest;
};

interface SqlColumnRow {
  id: string;
  trial_missing_payment_method: string;
  pause_collection: PauseCollection | null;
  payment_settings: StoredPaymentSettings | null;
}

/** The subscriptions' columns newer than the generated client, by SQL, by id. */
async function sqlColumnsOf(tx: Tx, ids: readonly string[]): Promise<Map<string, SqlColumnRow>> {
  const found = await tx.$queryRaw<SqlColumnRow[]>`
    SELECT id, trial_missing_payment_method, pause_collection, payment_settings FROM subscriptions WHERE id IN (${Prisma.join([...new Set(ids)])})`;
  return new Map(found.map((r) => [r.id, r]));
}

/** Writes those columns when they differ from `before` (all of them when there is no `before`). */
export async function saveSettings(tx: Tx, after: SubscriptionRow, before?: SubscriptionSettings): Promise<void> {
  if (before && before.trialMissingPaymentMethod === after.trialMissingPaymentMethod && JSON.stringify(before.pauseCollection) === JSON.stringify(after.pauseCollection)) return;
  const pause = after.pauseCollection === null ? null : JSON.stringify(after.pauseCollection);
  await tx.$executeRaw`UPDATE subscriptions SET trial_missing_payment_method = ${after.trialMissingPaymentMethod}, pause_collection = ${pause}::jsonb WHERE id = ${after.id}`;
}

/** A row without those columns, for the generated client's writes. */
export function clientColumns<T extends SubscriptionSettings>(row: T): Omit<T, SqlColumns> {
  const { trialMissingPaymentMethod: _t, pauseCollection: _p, paymentSettings: _ps, ...rest } = row as T & { paymentSettings?: unknown };
  return rest;
}

/** The view of a subscription whose item rows are known. */
export async function viewOf(tx: Tx, row: SubscriptionRow, items: readonly ItemRow[], accountId: string): Promise<SubscriptionView> {
  // `payment_settings` by SQL: the column is newer than the generated client.
  const paymentSettings = (await sqlColumnsOf(tx, [row.id])).get(row.id)?.payment_settings ?? null;
  return (await viewsOf(tx, [{ row, items, paymentSettings }], accountId))[0];
}

/** The views of subscriptions whose item rows and `payment_settings` are known: one read each for their prices, tax rates and coupons. */
async function viewsOf(
  tx: Tx,
  entries: readonly { row: SubscriptionRow; items: readonly ItemRow[]; paymentSettings: StoredPaymentSettings | null }[],
  accountId: string,
): Promise<SubscriptionView[]> {
  const prices = await pricesById(tx, accountId, entries.flatMap((e) => e.items.map((i) => i.priceId)));
  const rates = await taxRatesById(tx, accountId, entries.flatMap(({ row, items }) => [...row.defaultTaxRates, ...items.flatMap((i) => i.taxRates)]));
  const pick = (ids: readonly string[]) => ids.flatMap((id) => (rates.has(id) ? [rates.get(id)!] : []));
  const owned = entries.map(({ row, items }) => [
    ...(row.discounts as unknown as StoredDiscount[]).map((record) => ({ record, customer: row.customerId, subscription: row.id, subscriptionItem: null })),
    ...items.flatMap((i) => (i.discounts as unknown as StoredDiscount[]).map((record) => ({ record, customer: row.customerId, subscription: row.id, subscriptionItem: i.id }))),
  ]);
  // Coupons' `valid` as of reading them: the request's clock is not at hand here.
  const discounts = await discountRefsOf(tx, owned, Math.floor(Date.now() / 1000));
  return entries.map(({ row, items, paymentSettings }, n) => ({
    row,
    items: items.map((i) => ({ row: i, price: prices.get(i.priceId)!, taxRates: i.taxRatesSet ? pick(i.taxRates) : null })),
    defaultTaxRates: pick(row.defaultTaxRates),
    paymentSettings,
    discounts: discounts[n],
  }));
}

/** Each group of stored discounts as `discount` objects with their coupons (as `discountRefs`), the coupons of all in one read. */
async function discountRefsOf(tx: Tx, groups: readonly OwnedDiscount[][], now: number): Promise<Embedded[]> {
  const seqs = [...new Set(groups.flatMap((g) => g.map((o) => o.record.coupon_seq)))];
  if (seqs.length === 0) return groups.map(() => ({}));
  const coupons = await tx.coupon.findMany({ where: { seq: { in: seqs.map(BigInt) } } });
  const bySeq = new Map(coupons.map(({ seq, accountId: _a, ...c }) => [String(seq), c]));
  return groups.map((owned) =>
    Object.assign(
      {},
      ...owned.flatMap((o) => {
        const coupon = bySeq.get(o.record.coupon_seq);
        return coupon ? [discountObjects(o.record, coupon, o, now)] : [];
      }),
    ),
  );
}

/** The tax rates that apply to an item: its own when set, else the subscription's defaults. */
export const ratesOf = (item: Pick<ItemView, 'taxRates'>, view: Pick<SubscriptionView, 'defaultTaxRates'>): readonly TaxRateRow[] => item.taxRates ?? view.defaultTaxRates;

/** The coupons behind stored discounts, as invoices apply them. */
export async function appliedDiscounts(tx: Tx, stored: readonly StoredDiscount[], periodStart: number): Promise<AppliedDiscount[]> {
  const live = stored.filter((d) => d.end === null || periodStart < d.end);
  if (live.length === 0) return [];
  const coupons = await tx.coupon.findMany({ where: { seq: { in: live.map((d) => BigInt(d.coupon_seq)) } } });
  const bySeq = new Map(coupons.map(({ seq, accountId: _a, ...c }) => [String(seq), { ...c, id: c.id } as CouponRow]));
  return live.flatMap((d) => (bySeq.has(d.coupon_seq) ? [{ id: d.id, coupon: bySeq.get(d.coupon_seq)! }] : []));
}

/**
 * The discounts a subscription's invoices apply: its own, else its customer's (the public rule: a
 * customer's discount applies to the subscriptions that have none of their own).
 */
export async function discountsBilled(tx: Tx, row: Pick<SubscriptionRow, 'discounts' | 'customerId'>): Promise<StoredDiscount[]> {
  const own = row.discounts as unknown as StoredDiscount[];
  if (own.length > 0) return own;
  // By SQL: the column is newer than some generated clients.
  const [customer] = await tx.$queryRaw<{ discounts: StoredDiscount[] }[]>`SELECT discounts FROM customers WHERE id = ${row.customerId}`;
  return customer?.discounts ?? [];
}

/** A customer's once-only discount ends with the first invoice that applied it (`used`: the discounts it applied). */
export async function endCustomerOnce(tx: Tx, row: Pick<SubscriptionRow, 'discounts' | 'customerId'>, used: readonly AppliedDiscount[]): Promise<void> {
  if ((row.discounts as unknown as StoredDiscount[]).length > 0) return;
  for (const d of used.filter((a) => a.coupon.duration === 'once')) {
    await tx.$executeRaw`UPDATE customers SET discounts = '[]'::jsonb WHERE id = ${row.customerId} AND discounts -> 0 ->> 'id' = ${d.id}`;
  }
}

const times = (quantity: number | null) => (quantity !== null && quantity > 1 ? `${quantity} × ` : '');

async function productNames(tx: Tx, prices: readonly PriceRow[]): Promise<Map<string, string>> {
  const products = await tx.product.findMany({ where: { id: { in: [...new Set(prices.map((p) => p.productId))] } }, select: { id: true, name: true } });
  return new Map(products.map((p) => [p.id, p.name]));
}

/** `1 × Gold (at $10.00 / month)`, as a period's line describes an item. */
function periodDescription(price: PriceRow, name: string, quantity: number | null): string {
  const recurring = price.recurring as { interval: string; interval_count: number };
  const every = recurring.interval_count === 1 ? recurring.interval : `every ${recurring.interval_count} ${recurring.interval}s`;
  const unit = price.unitAmountDecimal === null ? '' : ` (at ${formatMoney(Number(price.unitAmountDecimal), price.currency)} / ${every})`;
  return `${quantity ?? 1} × ${name}${unit}`;
}

/**
 * The lines of one period of a subscription ([start, end]); `fraction` prorates them (a first
 * period that ends at a billing cycle anchor), and a trial bills nothing.
 */
export async function periodLines(tx: Tx, view: SubscriptionView, start: number, end: number, options: { trial?: boolean; fromStart?: number } = {}): Promise<DraftLine[]> {
  const names = await productNames(tx, view.items.map((i) => i.price));
  const appliedByItem = await Promise.all(view.items.map((i) => appliedDiscounts(tx, i.row.discounts as unknown as StoredDiscount[], start)));
  return view.items.map((item, i) => {
    const name = names.get(item.price.productId) ?? item.price.productId;
    const whole = priceAmount(item.price, item.row.quantity ?? 0);
    const amount = options.trial ? 0 : options.fromStart === undefined ? whole : prorate(whole, options.fromStart, start, end);
    return {
      invoiceItemId: null,
      subscriptionItemId: item.row.id,
      price: item.price,
      quantity: item.row.quantity,
      amount,
      description: options.trial ? `Trial period for ${name}` : periodDescription(item.price, name, item.row.quantity),
      proration: false,
      discountable: true,
      periodStart: options.fromStart ?? start,
      periodEnd: end,
      taxRates: ratesOf(item, view),
      discounts: appliedByItem[i],
    };
  });
}

/** One proration: what the change at `t` credits or charges for the rest of the period. */
export interface Proration {
  readonly itemId: string;
  readonly price: PriceRow;
  readonly quantity: number;
  readonly amount: number;
  readonly description: string;
  readonly taxRates: readonly TaxRateRow[];
  readonly discountAmounts: DiscountAmount[];
}

/** An item before and after a change (either may be absent: an item added or deleted). */
export interface ItemChange {
  readonly itemId: string;
  readonly before: { price: PriceRow; quantity: number | null } | null;
  readonly after: { price: PriceRow; quantity: number | null } | null;
  readonly taxRates: readonly TaxRateRow[];
}

/**
 * The prorations of item changes at `t` in the period [start, end]: the credit of what was last
 * billed (flexible billing) and the charge of what replaces it, each `amount × (end − t) /
 * (end − start)` rounded on its own line, and each carrying its share of the subscription's
 * percentage discounts (`proration_details.discount_amounts`); amount-off coupons are left to
 * the invoice.
 */
export async function prorationsOf(tx: Tx, changes: readonly ItemChange[], discounts: readonly AppliedDiscount[], t: number, start: number, end: number): Promise<Proration[]> {
  const prices = changes.flatMap((c) => [c.before?.price, c.after?.price].filter((p): p is PriceRow => p !== undefined));
  const names = await productNames(tx, prices);
  const when = formatDate(t);
  const out: Proration[] = [];
  // Stacked as invoices stack them: each percentage of what the ones before it left.
  const share = (price: PriceRow, amount: number): DiscountAmount[] => {
    let left = amount;
    return discounts
      .filter(({ coupon }) => coupon.percentOff !== null && (coupon.appliesToProducts.length === 0 || coupon.appliesToProducts.includes(price.productId)))
      .map(({ id, coupon }) => {
        const off = percentDiscount(coupon, left);
        left -= off;
        return { amount: off, discount: id };
      })
      .filter((d) => d.amount !== 0);
  };
  for (const change of changes) {
    for (const [side, sign, words] of [
      [change.before, -1, 'Unused time on'],
      [change.after, 1, 'Remaining time on'],
    ] as const) {
      if (!side) continue;
      const quantity = side.quantity ?? 0;
      const amount = sign * prorate(priceAmount(side.price, quantity), t, start, end);
      out.push({
        itemId: change.itemId,
        price: side.price,
        quantity,
        amount,
        description: `${words} ${times(side.quantity)}${names.get(side.price.productId) ?? side.price.productId} after ${when}`,
        taxRates: change.taxRates,
        discountAmounts: share(side.price, amount),
      });
    }
  }
  return out;
}

/** Writes prorations as pending invoice items of the subscription (`invoiceitem.created` each). */
export async function insertProrations(scope: Scope, sub: SubscriptionRow, prorations: readonly Proration[], t: number): Promise<InvoiceItemRow[]> {
  const rows: InvoiceItemRow[] = [];
  for (const p of prorations) {
    const row: InvoiceItemRow = {
      id: newId('ii'),
      customerId: sub.customerId,
      subscriptionId: sub.id,
      subscriptionItemId: p.itemId,
      invoiceId: null,
      testClockId: sub.testClockId,
      date: scope.now,
      priceId: p.price.id,
      productId: p.price.productId,
      quantity: p.quantity,
      unitAmountDecimal: p.price.unitAmountDecimal,
      amount: BigInt(p.amount),
      currency: p.price.currency,
      description: p.description,
      proration: true,
      discountable: false,
      periodStart: t,
      periodEnd: sub.periodEnd,
      taxRates: p.taxRates.map((r) => r.id),
      discounts: [],
      discountAmounts: p.discountAmounts as unknown as Prisma.JsonValue,
      metadata: {},
    };
    await scope.tx.invoiceItem.create({ data: { ...row, accountId: scope.accountId, discountAmounts: row.discountAmounts as Prisma.InputJsonValue, metadata: {} }, select: { id: true } });
    await emitIn(scope, 'invoiceitem.created', serializeInvoiceItem(row, p.taxRates, p.price));
    rows.push(row);
  }
  return rows;
}

/**
 * What a subscription's next invoice takes of the pending invoice items, as invoice lines: its
 * own, and its customer's that name no subscription in its currency (the public API: an item
 * without `subscription` "is added to the next upcoming scheduled invoice").
 */
export async function pendingItemLines(tx: Tx, accountId: string, sub: Pick<SubscriptionRow, 'id' | 'customerId' | 'currency'>): Promise<DraftLine[]> {
  const items = await tx.invoiceItem.findMany({
    where: { accountId, invoiceId: null, OR: [{ subscriptionId: sub.id }, { subscriptionId: null, customerId: sub.customerId, currency: sub.currency }] },
    orderBy: { seq: 'asc' },
  });
  return itemLines(tx, accountId, items);
}

/**
 * Invoices `lines` for a subscription and, when it collects automatically, charges it.
 * `periodStart`/`periodEnd` are the invoice's own (what it looks back on); the discounts are those
 * live at `discountsAt` (the start of the period billed; `periodStart` unless given).
 */
export async function billSubscription(
  scope: Scope,
  view: SubscriptionView,
  reason: string,
  lines: readonly DraftLine[],
  options: {
    periodStart: number;
    periodEnd: number;
    discountsAt?: number;
    /** The discounts live at `discountsAt`, when the caller has them already. */
    discounts?: readonly AppliedDiscount[];
    prorationDate?: number;
    collect?: boolean;
    paused?: boolean;
    id?: string;
    draft?: boolean;
  },
): Promise<{ invoice: MadeInvoice; charge: Charge | null }> {
  const { row } = view;
  const made = await createInvoice(scope, {
    customerId: row.customerId,
    subscription: row,
    currency: row.currency,
    billingReason: reason,
    periodStart: options.periodStart,
    periodEnd: options.periodEnd,
    lines,
    discounts: options.discounts ?? (await appliedDiscounts(scope.tx, await discountsBilled(scope.tx, row), options.discountsAt ?? options.periodStart)),
    prorationDate: options.prorationDate,
    id: options.id,
    draft: options.draft,
  });
  // A paused collection (pause_collection) makes its invoice and leaves it to the renewal.
  if (row.collectionMethod !== 'charge_automatically' || options.paused || options.draft) return { invoice: made, charge: null };
  if (options.collect === false) {
    // `default_incomplete`: the invoice's PaymentIntent waits for its customer to confirm it. As the
    // public API's, it is set up for off-session use: the card that pays it is attached to the
    // customer, for the renewals (and `save_default_payment_method=on_subscription` also makes it
    // the subscription's default, renewals.ts).
    await openInvoicePayment(scope, made, await paymentMethodFor(scope.tx, made.row), 'off_session');
    // Its intent is new since it was made: what was known of it is not.
    return { invoice: { row: made.row, lines: made.lines }, charge: null };
  }
  // A declined first invoice or renewal is retried on the platform's schedule (dunning.ts).
  const { invoice, charge } = await collectInvoice(scope, made, undefined, { retries: reason === 'subscription_create' || reason === 'subscription_cycle' ? 'start' : undefined });
  return { invoice, charge };
}

export const jsonOf = (value: unknown): Prisma.InputJsonValue => value as Prisma.InputJsonValue;
export const nullableJson = (value: unknown) => (value === null ? Prisma.DbNull : (value as Prisma.InputJsonValue));

/** An invoice's own period as the public API shows it when a period starts at `at`: the one ending (its start to `at`). */
export const lookBack = (row: Pick<SubscriptionRow, 'periodStart'>, at: number) => ({ periodStart: Math.min(row.periodStart, at), periodEnd: at });

/** A period [start, end] and what its invoice bills: its lines, what is pending, the discounts then. */
export async function periodOf(scope: Scope, view: SubscriptionView, start: number, end: number, anchor = view.row.billingCycleAnchor) {
  const { row } = view;
  const next: SubscriptionView = { ...view, row: { ...row, periodStart: start, periodEnd: end, billingCycleAnchor: anchor } };
  const lines = [...(await periodLines(scope.tx, next, start, end)), ...(await pendingItemLines(scope.tx, scope.accountId, row))];
  const discounts = await appliedDiscounts(scope.tx, await discountsBilled(scope.tx, row), start);
  return { next, lines, discounts };
}

/**
 * Starts the period [start, end] (a renewal, or an update resetting the cycle at `start`): its
 * invoice made, finalized and charged (unless `collect` is false); answers the subscription
 * after it, not yet saved, and the charge. As in the public API, the invoice's own period looks
 * back (from the period that ends to `start`), while its subscription lines bill [start, end] in
 * advance and prorations keep their own periods.
 */
export async function startPeriod(
  scope: Scope,
  view: SubscriptionView,
  period: { start: number; end: number; anchor?: number; reason: string; collect?: boolean; paused?: boolean; draft?: boolean },
): Promise<{ after: SubscriptionView; invoice: MadeInvoice; charge: Charge | null }> {
  const { row } = view;
  const { start, end } = period;
  const { next, lines, discounts } = await periodOf(scope, view, start, end, period.anchor);
  const { invoice, charge } = await billSubscription(scope, next, period.reason, lines, { ...lookBack(row, start), discountsAt: start, discounts, collect: period.collect, paused: period.paused, draft: period.draft });
  // Once-only discounts end with the invoice that applied them; repeating ones when their months are up.
  const used = new Set(invoice.row.discounts);
  const kept = (row.discounts as unknown as StoredDiscount[]).filter(
    (d) => !(used.has(d.id) && discounts.find((a) => a.id === d.id)?.coupon.duration === 'once') && (d.end === null || d.end > start),
  );
  await endCustomerOnce(scope.tx, row, discounts.filter((d) => used.has(d.id)));
  // An unpaid subscription stays unpaid until its latest invoice is paid (invoicePaid).
  const status = row.status === 'unpaid' && period.draft ? 'unpaid' : charge === null || charge.kind === 'paid' ? 'active' : 'past_due';
  // Everything is billed at its present price and quantity from now on (what later credits undo).
  await scope.tx.$executeRaw`UPDATE subscription_items SET billed_price_id = price_id, billed_quantity = quantity WHERE subscription_id = ${row.id}`;
  const items = view.items.map((i) => ({ ...i, row: { ...i.row, billedPriceId: i.row.priceId, billedQuantity: i.row.quantity } }));
  const after: SubscriptionView = {
    ...next,
    items,
    row: { ...next.row, status, latestInvoice: invoice.row.id, discounts: kept as unknown as typeof row.discounts, trialWillEndSent: row.trialWillEndSent || row.status === 'trialing' },
  };
  return { after, invoice, charge };
}
