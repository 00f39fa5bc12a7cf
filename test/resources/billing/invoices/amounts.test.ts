import { addInterval, computeInvoice, divRound, formatDate, formatMoney, nextPeriodEnd, priceAmount, prorate, type LineInput } from '../../../../src/resources/billing/invoices/amounts';
import type { CouponRow } from '../../../../src/resources/billing/coupons/serializer';
import type { PriceRow } from '../../../../src/resources/billing/prices/serializer';

// The arithmetic of invoices, by hand: rounding, prorations, tiers, billing periods.

const price = (fields: Partial<PriceRow>): PriceRow =>
  ({
    billingScheme: 'per_unit',
    unitAmountDecimal: '1000',
    tiers: null,
    tiersMode: null,
    transformQuantity: null,
    recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' },
    ...fields,
  }) as PriceRow;

test('rounding: to the nearest unit, halves away from zero', () => {
  expect([divRound(5n, 2n), divRound(-5n, 2n), divRound(7n, 3n), divRound(-7n, 3n), divRound(8n, 3n)]).toEqual([3n, -3n, 2n, -2n, 3n]);
});

test('prorate: the share of the period left after t, per line', () => {
  expect(prorate(1000, 50, 0, 100)).toBe(500);
  expect(prorate(999, 50, 0, 100)).toBe(500);
  expect(prorate(-999, 50, 0, 100)).toBe(-500);
  expect(prorate(1000, 0, 0, 100)).toBe(1000);
  expect(prorate(1000, 100, 0, 100)).toBe(0);
  expect(prorate(1000, -10, 0, 100)).toBe(1000);
});

test('prices: decimal units, transform_quantity, volume and graduated tiers, metered', () => {
  expect(priceAmount(price({ unitAmountDecimal: '12.5' }), 3)).toBe(38);
  expect(priceAmount(price({ transformQuantity: { divide_by: 5, round: 'up' } }), 6)).toBe(2000);
  const tiers = [
    { up_to: 5, unit_amount: 100, unit_amount_decimal: '100', flat_amount: null, flat_amount_decimal: null },
    { up_to: null, unit_amount: 50, unit_amount_decimal: '50', flat_amount: 200, flat_amount_decimal: '200' },
  ];
  expect(priceAmount(price({ billingScheme: 'tiered', tiersMode: 'volume', tiers }), 8)).toBe(8 * 50 + 200);
  expect(priceAmount(price({ billingScheme: 'tiered', tiersMode: 'graduated', tiers }), 8)).toBe(5 * 100 + 3 * 50 + 200);
  expect(priceAmount(price({ recurring: { interval: 'month', interval_count: 1, usage_type: 'metered' } }), 8)).toBe(0);
});

test('periods step from the anchor: 31 Jan, then the end of February, then 31 Mar', () => {
  const jan31 = Date.UTC(2027, 0, 31, 12) / 1000;
  expect(new Date(addInterval(jan31, 'month', 1) * 1000).toISOString()).toBe('2027-02-28T12:00:00.000Z');
  expect(new Date(addInterval(jan31, 'month', 1, 2) * 1000).toISOString()).toBe('2027-03-31T12:00:00.000Z');
  expect(new Date(nextPeriodEnd(jan31, 'month', 1, addInterval(jan31, 'month', 1)) * 1000).toISOString()).toBe('2027-03-31T12:00:00.000Z');
  expect(addInterval(jan31, 'week', 2)).toBe(jan31 + 14 * 86400);
  expect(new Date(addInterval(jan31, 'year', 1) * 1000).toISOString()).toBe('2028-01-31T12:00:00.000Z');
});

test('descriptions: money and dates', () => {
  expect(formatMoney(1500, 'usd')).toBe('$15.00');
  expect(formatMoney(500, 'jpy')).toBe('¥500');
  expect(formatMoney(1200, 'chf')).toBe('CHF 12.00');
  expect(formatDate(Date.UTC(2026, 8, 1) / 1000)).toBe('01 Sep 2026');
});

describe('computeInvoice: a line its own discounts first, then the invoice its own on what is left', () => {
  const coupon = (fields: Partial<CouponRow>): CouponRow => ({ percentOff: null, amountOff: null, currency: null, currencyOptions: {}, appliesToProducts: [], ...fields }) as CouponRow;
  const line = (amount: number, fields: Partial<LineInput> = {}): LineInput => ({ amount, currency: 'usd', productId: 'prod_a', discountable: true, taxRates: [], ...fields });
  const ten = { id: 'di_ten', coupon: coupon({ percentOff: 10 }) };
  const twenty = { id: 'di_twenty', coupon: coupon({ percentOff: 20 }) };

  test('1000 → 900 → 720; a line without its own 500 → 400', () => {
    const { lines, totals } = computeInvoice([line(1000, { discounts: [ten] }), line(500)], [twenty]);
    expect(lines.map((l) => l.discount_amounts)).toEqual([
      [
        { amount: 100, discount: 'di_ten' },
        { amount: 180, discount: 'di_twenty' },
      ],
      [{ amount: 100, discount: 'di_twenty' }],
    ]);
    expect(totals.total).toBe(1120);
  });

  test('not discountable: neither its own nor the invoice discount', () => {
    expect(computeInvoice([line(1000, { discountable: false, discounts: [ten] })], [twenty]).totals.total).toBe(1000);
  });

  test('its own coupon limited to other products gives nothing; an invoice discount it carries as its own applies once', () => {
    expect(computeInvoice([line(1000, { discounts: [{ id: 'di_x', coupon: coupon({ percentOff: 10, appliesToProducts: ['prod_b'] }) }] })], []).totals.total).toBe(1000);
    const { lines } = computeInvoice([line(1000, { discounts: [twenty] }), line(1000)], [twenty]);
    expect(lines.map((l) => l.discount_amounts)).toEqual([[{ amount: 200, discount: 'di_twenty' }], [{ amount: 200, discount: 'di_twenty' }]]);
  });
});
