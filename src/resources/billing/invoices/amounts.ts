import type { PriceRow, Tier } from '../prices/serializer';
import type { CouponRow } from '../coupons/serializer';
import type { TaxRateRow } from '../tax_rates/serializer';

// What invoices add up to, as pure functions over integers (BigInt where a product could pass
// 2^53). The rounding rule, everywhere: each amount is rounded on its own line (never a running
// total), to the nearest unit, halves away from zero, so a credit is the exact negative of the
// charge it undoes. Prorations: amount × (end − t) / (end − start), rounded so, per line.

/** n / d rounded to the nearest integer, halves away from zero (d > 0). */
export function divRound(n: bigint, d: bigint): bigint {
  const negative = n < 0n;
  const q = ((negative ? -n : n) * 2n + d) / (2n * d);
  return negative ? -q : q;
}

const DECIMAL_SCALE = 12;

/** A decimal string (`12.5`) as an integer scaled by 10^12. */
function scaled(decimal: string): bigint {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole + fraction.padEnd(DECIMAL_SCALE, '0').slice(0, DECIMAL_SCALE));
}

const SCALE = 10n ** BigInt(DECIMAL_SCALE);

/** unit (a decimal string) × quantity, rounded. */
function unitTimes(unit: string | null, quantity: number): bigint {
  return unit === null ? 0n : divRound(scaled(unit) * BigInt(quantity), SCALE);
}

function tierUnit(tier: Tier): string | null {
  return tier.unit_amount_decimal ?? (tier.unit_amount === null ? null : String(tier.unit_amount));
}

function tierFlat(tier: Tier): string | null {
  return tier.flat_amount_decimal ?? (tier.flat_amount === null ? null : String(tier.flat_amount));
}

/** The quantity a price charges for after `transform_quantity`. */
function chargedQuantity(price: PriceRow, quantity: number): number {
  const transform = price.transformQuantity as { divide_by: number; round: 'up' | 'down' } | null;
  if (!transform) return quantity;
  const q = quantity / transform.divide_by;
  return transform.round === 'up' ? Math.ceil(q) : Math.floor(q);
}

export const isMetered = (price: PriceRow): boolean => (price.recurring as { usage_type?: string } | null)?.usage_type === 'metered';

/**
 * What `quantity` of a price costs for one whole period. Metered prices bill usage, and nothing
 * reports usage here, so they cost 0.
 */
export function priceAmount(price: PriceRow, quantity: number): number {
  if (isMetered(price)) return 0;
  const q = chargedQuantity(price, quantity);
  if (price.billingScheme !== 'tiered') return Number(unitTimes(price.unitAmountDecimal, q));
  const tiers = (price.tiers as Tier[] | null) ?? [];
  if (price.tiersMode === 'volume') {
    const tier = tiers.find((t) => t.up_to === null || q <= t.up_to) ?? tiers[tiers.length - 1];
    return Number(unitTimes(tierUnit(tier), q) + unitTimes(tierFlat(tier), 1));
  }
  let total = 0n;
  let below = 0;
  for (const tier of tiers) {
    if (q <= below) break;
    const upTo = tier.up_to ?? Infinity;
    const inTier = Math.min(q, upTo) - below;
    total += unitTimes(tierUnit(tier), inTier) + unitTimes(tierFlat(tier), 1);
    below = upTo;
  }
  return Number(total);
}

/** The share of `amount` for the part of [start, end] from `from` on, rounded per the rule above. */
export function prorate(amount: number, from: number, start: number, end: number): number {
  if (end <= start) return 0;
  const remaining = Math.min(Math.max(end - from, 0), end - start);
  return Number(divRound(BigInt(amount) * BigInt(remaining), BigInt(end - start)));
}

export interface DiscountAmount {
  amount: number;
  discount: string;
}

export interface LineTax {
  amount: number;
  tax_behavior: 'exclusive' | 'inclusive';
  tax_rate_details: { tax_rate: string };
  taxability_reason: 'standard_rated';
  taxable_amount: number;
  type: 'tax_rate_details';
}

/** A discount an invoice applies: its id (`di_…`) and the coupon it redeems. */
export interface AppliedDiscount {
  readonly id: string;
  readonly coupon: CouponRow;
}

export interface LineInput {
  readonly amount: number;
  readonly currency: string;
  readonly productId: string;
  readonly discountable: boolean;
  readonly taxRates: readonly TaxRateRow[];
  /** Discounts the line carries already (a proration's share of the discount its period had). */
  readonly discountAmounts?: readonly DiscountAmount[];
  /** Discounts of the line alone (a subscription item's own). */
  readonly discounts?: readonly AppliedDiscount[];
}

export interface LineResult {
  discount_amounts: DiscountAmount[];
  taxes: LineTax[];
}

export interface InvoiceTotals {
  subtotal: number;
  subtotal_excluding_tax: number;
  total: number;
  total_excluding_tax: number;
  total_discount_amounts: DiscountAmount[];
  total_taxes: LineTax[];
}

/** Percentages as integers: 12.5 % → 125000 (four decimal places are kept). */
const PERCENT_SCALE = 10_000;
const percentOf = (p: number): bigint => BigInt(Math.round(p * PERCENT_SCALE));
const HUNDRED = 100n * BigInt(PERCENT_SCALE);

const applies = (coupon: CouponRow, line: LineInput) => coupon.appliesToProducts.length === 0 || coupon.appliesToProducts.includes(line.productId);

/** An amount-off coupon's amount in `currency`, or null when it has none in it. */
function amountOffIn(coupon: CouponRow, currency: string): number | null {
  if (coupon.amountOff === null) return null;
  if (coupon.currency === currency) return Number(coupon.amountOff);
  const option = (coupon.currencyOptions as Record<string, number>)[currency];
  return option === undefined ? null : option;
}

/** The percent-off share of `amount` a coupon gives, with the amount's sign. */
export function percentDiscount(coupon: CouponRow, amount: number): number {
  return Number(divRound(BigInt(amount) * percentOf(coupon.percentOff ?? 0), HUNDRED));
}

/**
 * Each line's discounts and taxes, and the invoice's totals. Discounts apply to discountable
 * lines one after another, each to what the ones before it left of a line, in the public order
 * ("Item discounts are applied before invoice discounts", the public API's `discounts` of
 * invoice items and lines): the line's own discounts first (a subscription item's, an invoice
 * item's), then the invoice's, each list in its order. A percentage per line; an amount off
 * split across the lines it applies to in proportion to what is left of them, the last taking
 * the remainder, never more than is left (a line's own amount off takes at most what is left of
 * it). A coupon's `applies_to` products limit it at either level; a line that is not
 * discountable takes none, its own included ("controls whether discounts apply to this invoice
 * item"); an invoice discount a line carries as its own (one reused) applies to it once. Taxes
 * apply to what is left of each line: exclusive rates add `base × rate`, inclusive rates take
 * `base × rate / (100 + all inclusive rates)` out of it.
 */
export function computeInvoice(lines: readonly LineInput[], discounts: readonly AppliedDiscount[]): { lines: LineResult[]; totals: InvoiceTotals } {
  const results: LineResult[] = lines.map((line) => ({ discount_amounts: [...(line.discountAmounts ?? [])], taxes: [] }));
  // What is left of each line after the discounts applied so far.
  const left = lines.map((line, i) => line.amount - results[i].discount_amounts.reduce((sum, d) => sum + d.amount, 0));
  const give = (i: number, discount: string, amount: number) => {
    if (amount === 0) return;
    results[i].discount_amounts.push({ amount, discount });
    left[i] -= amount;
  };
  lines.forEach((line, i) => {
    if (!line.discountable) return;
    for (const { id, coupon } of line.discounts ?? []) {
      if (!applies(coupon, line)) continue;
      give(i, id, coupon.percentOff !== null ? percentDiscount(coupon, left[i]) : Math.min(amountOffIn(coupon, line.currency) ?? 0, Math.max(0, left[i])));
    }
  });
  const ownOf = (line: LineInput, id: string) => (line.discounts ?? []).some((d) => d.id === id);
  for (const { id, coupon } of discounts) {
    const eligible = lines.map((line, i) => ({ line, i })).filter(({ line }) => line.discountable && applies(coupon, line) && !ownOf(line, id));
    if (coupon.percentOff !== null) {
      for (const { i } of eligible) give(i, id, percentDiscount(coupon, left[i]));
      continue;
    }
    const positive = eligible.filter(({ i }) => left[i] > 0);
    const base = positive.reduce((sum, { i }) => sum + left[i], 0);
    const off = amountOffIn(coupon, lines[0]?.currency ?? '');
    if (off === null || base === 0) continue;
    const total = Math.min(off, base);
    let remaining = total;
    positive.forEach(({ i }, k) => {
      const share = k === positive.length - 1 ? remaining : Number(divRound(BigInt(total) * BigInt(left[i]), BigInt(base)));
      const amount = Math.min(share, remaining);
      remaining -= amount;
      give(i, id, amount);
    });
  }
  lines.forEach((line, i) => {
    const base = line.amount - results[i].discount_amounts.reduce((sum, d) => sum + d.amount, 0);
    const inclusive = line.taxRates.filter((r) => r.inclusive);
    const inclusiveTotal = inclusive.reduce((sum, r) => sum + percentOf(r.percentage), 0n);
    const inclusiveTaxes = inclusive.map((r) => Number(divRound(BigInt(base) * percentOf(r.percentage), HUNDRED + inclusiveTotal)));
    const net = base - inclusiveTaxes.reduce((a, b) => a + b, 0);
    for (const [k, rate] of inclusive.entries()) results[i].taxes.push(taxOf(rate, inclusiveTaxes[k], net));
    for (const rate of line.taxRates.filter((r) => !r.inclusive)) {
      results[i].taxes.push(taxOf(rate, Number(divRound(BigInt(net) * percentOf(rate.percentage), HUNDRED)), net));
    }
  });
  return { lines: results, totals: totalsOf(lines, results) };
}

const taxOf = (rate: TaxRateRow, amount: number, taxable: number): LineTax => ({
  amount,
  tax_behavior: rate.inclusive ? 'inclusive' : 'exclusive',
  tax_rate_details: { tax_rate: rate.id },
  taxability_reason: 'standard_rated',
  taxable_amount: taxable,
  type: 'tax_rate_details',
});

function totalsOf(lines: readonly LineInput[], results: readonly LineResult[]): InvoiceTotals {
  const subtotal = lines.reduce((sum, l) => sum + l.amount, 0);
  const discounts = new Map<string, number>();
  const taxes = new Map<string, LineTax>();
  for (const r of results) {
    for (const d of r.discount_amounts) discounts.set(d.discount, (discounts.get(d.discount) ?? 0) + d.amount);
    for (const t of r.taxes) {
      const key = t.tax_rate_details.tax_rate;
      const sum = taxes.get(key);
      taxes.set(key, sum ? { ...sum, amount: sum.amount + t.amount, taxable_amount: sum.taxable_amount + t.taxable_amount } : { ...t });
    }
  }
  const discountTotal = [...discounts.values()].reduce((a, b) => a + b, 0);
  const taxList = [...taxes.values()];
  const inclusiveTax = taxList.filter((t) => t.tax_behavior === 'inclusive').reduce((a, t) => a + t.amount, 0);
  const exclusiveTax = taxList.filter((t) => t.tax_behavior === 'exclusive').reduce((a, t) => a + t.amount, 0);
  const total = subtotal - discountTotal + exclusiveTax;
  return {
    subtotal,
    subtotal_excluding_tax: subtotal - inclusiveTax,
    total,
    total_excluding_tax: total - inclusiveTax - exclusiveTax,
    total_discount_amounts: [...discounts].map(([discount, amount]) => ({ amount, discount })),
    total_taxes: taxList,
  };
}

const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const SYMBOLS: Record<string, string> = { usd: '$', eur: '€', gbp: '£', jpy: '¥' };

/** `$10.00`, `€9.50`, `¥500`, `CHF 12.00`: how invoice line descriptions show a price. */
export function formatMoney(amount: number, currency: string): string {
  const text = ZERO_DECIMAL.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  const symbol = SYMBOLS[currency];
  return symbol ? `${symbol}${text}` : `${currency.toUpperCase()} ${text}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `01 Sep 2026` (UTC), as proration descriptions write a date. */
export function formatDate(seconds: number): string {
  const d = new Date(seconds * 1000);
  return `${String(d.getUTCDate()).padStart(2, '0')} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/**
 * `t` plus `count` intervals, in UTC, the way the public API steps billing periods: a month from
 * 31 Jan is the last day of February, and later months keep the anchor's day when they have it.
 */
export function addInterval(anchor: number, interval: string, count: number, times = 1): number {
  const d = new Date(anchor * 1000);
  if (interval === 'day') return anchor + 86_400 * count * times;
  if (interval === 'week') return anchor + 7 * 86_400 * count * times;
  const months = (interval === 'year' ? 12 : 1) * count * times;
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Math.floor(Date.UTC(year, month, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()) / 1000);
}

/** The first period boundary of a cycle anchored at `anchor` that lies after `after`. */
export function nextPeriodEnd(anchor: number, interval: string, count: number, after: number): number {
  if (after < anchor) return anchor;
  const perPeriod = { day: 86_400, week: 604_800, month: 2_419_200, year: 31_536_000 }[interval] ?? 86_400;
  // Periods are at least this long, so the answer is no earlier than this many periods on.
  let n = Math.max(1, Math.floor((after - anchor) / (perPeriod * count * 1.1)));
  while (addInterval(anchor, interval, count, n) <= after) n++;
  while (n > 1 && addInterval(anchor, interval, count, n - 1) > after) n--;
  return addInterval(anchor, interval, count, n);
}
