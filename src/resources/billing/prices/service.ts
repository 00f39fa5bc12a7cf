import { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { currencyOf } from '../../../lib/currencies';
import { hasIdShape, newId } from '../../../lib/ids';
import { invalidRequest, parameterMissing, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { searchRequest } from '../../../kernel/search';
import { emit, emitIn, previousAttributes, requestEventOptions, type Tx } from '../../../events/emit';
import { prismaOf } from '../../../kernel/transaction';
import { handOffEvents } from '../../../events/jobs';
import { findProduct, insertProduct, newProductData, type DefaultPrices } from '../products/service';
import { TxSql, type SqlClient } from '../../../lib/sql';
import { SEARCH, listedRows, searchedRows, selectOwned, selectOwnedForUpdate, updatePriceRow } from './queries';
import { serializePrice, type PriceRow, type Tier } from './serializer';

const NAME = 'price';

/** The public API's longest billing period: three years, whatever the interval. */
const MAX_INTERVAL_COUNT: Record<string, number> = { day: 1095, week: 156, month: 36, year: 3 };

const DECIMAL_PLACES = 12;

/**
 * A decimal amount as the public API answers it (no trailing zeros), or a 400 naming `param` when
 * it has more than 12 decimal places. The schema has already checked its digits.
 */
function decimalOf(value: string, param: string): string {
  const [whole, fraction = ''] = value.split('.');
  if (fraction.length > DECIMAL_PLACES) {
    throw invalidRequest(`Invalid decimal: ${value}; must contain at maximum ${DECIMAL_PLACES} decimal places.`, 'parameter_invalid', param);
  }
  const trimmed = fraction.replace(/0+$/, '');
  const integer = whole.replace(/^0+(?=\d)/, '');
  return trimmed ? `${integer}.${trimmed}` : integer;
}

/** `amount` xor `amount_decimal` as the pair the public object shows (the integer only when whole). */
function amountPair(amount: number | undefined, decimal: string | undefined, names: [string, string]): { amount: number | null; decimal: string | null } | undefined {
  if (amount !== undefined && decimal !== undefined) throw parametersExclusive(names[0], names[1]);
  if (amount !== undefined) return { amount, decimal: String(amount) };
  if (decimal === undefined) return undefined;
  const normal = decimalOf(decimal, names[1]);
  return { amount: normal.includes('.') ? null : Number(normal), decimal: normal };
}

function tiersOf(params: Record<string, any>): Tier[] {
  const tiers: Record<string, any>[] = params.tiers;
  return tiers.map((tier, i) => {
    const at = (name: string) => `tiers[${i}][${name}]`;
    const unit = amountPair(tier.unit_amount, tier.unit_amount_decimal, [at('unit_amount'), at('unit_amount_decimal')]);
    const flat = amountPair(tier.flat_amount, tier.flat_amount_decimal, [at('flat_amount'), at('flat_amount_decimal')]);
    if (!unit && !flat) {
      throw invalidRequest(`Each tier needs an amount: set ${at('unit_amount')} or ${at('flat_amount')} (or their _decimal forms).`, 'parameter_missing', at('unit_amount'));
    }
    const upTo = tier.up_to === 'inf' ? null : (tier.up_to as number);
    const last = i === tiers.length - 1;
    if (last !== (upTo === null)) {
      throw invalidRequest(`Only the last tier may have \`up_to=inf\`, and it must.`, 'parameter_invalid', at('up_to'));
    }
    if (upTo !== null && i > 0 && tiers[i - 1].up_to !== 'inf' && upTo <= tiers[i - 1].up_to) {
      throw invalidRequest('Tiers must be in ascending order of `up_to`.', 'parameter_invalid', at('up_to'));
    }
    return {
      flat_amount: flat?.amount ?? null,
      flat_amount_decimal: flat?.decimal ?? null,
      unit_amount: unit?.amount ?? null,
      unit_amount_decimal: unit?.decimal ?? null,
      up_to: upTo,
    };
  });
}

/** A parameter's name, inside `default_price_data[…]` when the price comes from a product's create. */
type Named = (name: string) => string;
const topLevel: Named = (name) => name;
export const within =
  (parent: string): Named =>
  (name) =>
    name.replace(/^([^[]+)/, `${parent}[$1]`);

function recurringOf(recurring: Record<string, any> | undefined, p: Named) {
  if (recurring === undefined) return null;
  const count: number = recurring.interval_count ?? 1;
  if (count > MAX_INTERVAL_COUNT[recurring.interval]) {
    throw invalidRequest(
      `Invalid ${p('recurring[interval_count]')}: the longest billing period allowed is three years (3 years, 36 months, 156 weeks or 1095 days).`,
      'parameter_invalid',
      p('recurring[interval_count]'),
    );
  }
  return { interval: recurring.interval, interval_count: count, meter: null, trial_period_days: null, usage_type: recurring.usage_type ?? 'licensed' };
}

/** A one-time price whose customer chooses the amount, within `minimum`..`maximum`, starting at `preset`. */
function customAmountOf(params: Record<string, any>, p: Named) {
  const custom: { enabled: boolean; maximum?: number; minimum?: number; preset?: number } = params.custom_unit_amount;
  for (const name of ['unit_amount', 'unit_amount_decimal']) if (params[name] !== undefined) throw parametersExclusive(p('custom_unit_amount'), p(name));
  if (custom.enabled !== true) throw invalidRequest('`custom_unit_amount[enabled]` must be `true` when `custom_unit_amount` is set.', 'parameter_invalid', p('custom_unit_amount[enabled]'));
  if (params.recurring !== undefined) throw invalidRequest('`custom_unit_amount` is only supported for one-time prices.', 'parameter_invalid', p('custom_unit_amount'));
  const { maximum = null, minimum = null, preset = null } = custom;
  if (minimum !== null && maximum !== null && minimum > maximum) {
    throw invalidRequest('`custom_unit_amount[minimum]` must be less than or equal to `custom_unit_amount[maximum]`.', 'parameter_invalid', p('custom_unit_amount[minimum]'));
  }
  if (preset !== null && ((minimum !== null && preset < minimum) || (maximum !== null && preset > maximum))) {
    throw invalidRequest('`custom_unit_amount[preset]` must be between `custom_unit_amount[minimum]` and `custom_unit_amount[maximum]`.', 'parameter_invalid', p('custom_unit_amount[preset]'));
  }
  return { unitAmount: null, unitAmountDecimal: null, tiersMode: null, tiers: null, customUnitAmount: { maximum, minimum, preset } };
}

/** The amount columns of a new price; they never change afterwards. */
function amountsOf(params: Record<string, any>, p: Named) {
  const scheme: string = params.billing_scheme ?? 'per_unit';
  if (scheme === 'per_unit') {
    for (const name of ['tiers', 'tiers_mode']) {
      if (params[name] !== undefined) throw invalidRequest(`\`${name}\` can only be set when \`billing_scheme\` is \`tiered\`.`, 'parameter_invalid', name);
    }
    if (params.custom_unit_amount !== undefined) return { billingScheme: scheme, ...customAmountOf(params, p) };
    const unit = amountPair(params.unit_amount, params.unit_amount_decimal, [p('unit_amount'), p('unit_amount_decimal')]);
    if (!unit) throw parameterMissing(p('unit_amount'));
    return { billingScheme: scheme, unitAmount: unit.amount, unitAmountDecimal: unit.decimal, tiersMode: null, tiers: null, customUnitAmount: null };
  }
  for (const name of ['unit_amount', 'unit_amount_decimal', 'transform_quantity']) {
    if (params[name] !== undefined) throw invalidRequest(`\`${name}\` can't be set when \`billing_scheme\` is \`tiered\`.`, 'parameter_invalid', name);
  }
  if (params.tiers_mode === undefined) throw parameterMissing('tiers_mode');
  if (params.tiers === undefined) throw parameterMissing('tiers');
  if (params.custom_unit_amount !== undefined) throw invalidRequest('`custom_unit_amount` can only be set when `billing_scheme` is `per_unit`.', 'parameter_invalid', 'custom_unit_amount');
  return { billingScheme: scheme, unitAmount: null, unitAmountDecimal: null, tiersMode: params.tiers_mode as string, tiers: tiersOf(params), customUnitAmount: null };
}

/**
 * Takes `lookupKey` for `priceId`: another price of the account holding it is a 400 unless
 * `transfer` says to move it (that price then loses it, with its own `price.updated`).
 */
async function claimLookupKey(ctx: RequestContext, tx: Tx, lookupKey: string, priceId: string, transfer: boolean, now: number): Promise<string[]> {
  const holders = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM prices WHERE account_id = ${ctx.caller.accountId} AND lookup_key = ${lookupKey} AND id <> ${priceId} FOR UPDATE`;
  if (holders.length === 0) return [];
  if (!transfer) {
    throw invalidRequest(
      `A price (\`${holders[0].id}\`) already uses that lookup key. Set \`transfer_lookup_key=true\` to move it to this price.`,
      'lookup_key_in_use',
      'lookup_key',
    );
  }
  const before = serializePrice(await tx.price.findUniqueOrThrow({ where: { id: holders[0].id } }));
  const after = serializePrice(await tx.price.update({ where: { id: holders[0].id }, data: { lookupKey: null } }));
  return [await emit(tx, 'price.updated', after, { ...requestEventOptions(ctx, now), previousAttributes: previousAttributes(before, after) })];
}

/** Two requests racing for one lookup key: the loser gets the same answer as if it came second. */
async function withLookupKeyGuard<T>(lookupKey: string | null | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (lookupKey && err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      throw invalidRequest('A price already uses that lookup key. Set `transfer_lookup_key=true` to move it to this price.', 'lookup_key_in_use', 'lookup_key');
    }
    throw err;
  }
}

/** One of the caller's prices, on the pool or in a transaction's `TxSql`. */
export async function findPrice(ctx: RequestContext, id: string, db: SqlClient = ctx.deps.sql): Promise<PriceRow> {
  if (!hasIdShape('price', id)) throw resourceMissing(NAME, id);
  const [row] = await db.query<PriceRow>(selectOwned(id, ctx.caller.accountId));
  if (!row) throw resourceMissing(NAME, id);
  return row;
}

/** One of the caller's prices as its public object, or null (a `ref` to a price expands through it). */
export async function retrievePriceObject(ctx: RequestContext, id: string) {
  if (!hasIdShape('price', id)) return null;
  const row = await ctx.deps.prisma.price.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  return row ? serializePrice(row) : null;
}

/**
 * The row of a new price from create parameters (or a product's `default_price_data`, whose
 * parameters `p` names), checked before any transaction opens.
 */
export function newPriceData(ctx: RequestContext, params: Record<string, any>, now: number, p: Named = topLevel): Omit<Prisma.PriceUncheckedCreateInput, 'productId'> {
  const amounts = amountsOf(params, p);
  const recurring = recurringOf(params.recurring, p);
  return {
    id: newId('price'),
    accountId: ctx.caller.accountId,
    created: now,
    active: params.active ?? true,
    type: recurring ? 'recurring' : 'one_time',
    currency: currencyOf(params.currency, p('currency')),
    ...amounts,
    unitAmount: amounts.unitAmount === null ? null : BigInt(amounts.unitAmount),
    tiers: amounts.tiers === null ? Prisma.DbNull : (amounts.tiers as unknown as Prisma.InputJsonValue),
    customUnitAmount: amounts.customUnitAmount ?? Prisma.DbNull,
    recurring: recurring ?? Prisma.DbNull,
    transformQuantity: params.transform_quantity ?? Prisma.DbNull,
    taxBehavior: params.tax_behavior ?? null,
    lookupKey: params.lookup_key ?? null,
    nickname: params.nickname ?? null,
    metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
  };
}

/** Inserts a price and its `price.created` event in `tx`; returns the row and the event id. */
export async function insertPrice(ctx: RequestContext, tx: Tx, data: Prisma.PriceUncheckedCreateInput): Promise<{ row: PriceRow; eventId: string }> {
  const row = await tx.price.create({ data });
  return { row, eventId: await emit(tx, 'price.created', serializePrice(row), requestEventOptions(ctx, row.created)) };
}

/** A product's `default_price_data`, made into its first price (see `DefaultPrices`). */
export const defaultPrices: DefaultPrices = {
  data: (ctx, params, now) => newPriceData(ctx, params, now, within('default_price_data')),
  insert: async (ctx, tx, data) => (await insertPrice(ctx, tx, data)).eventId,
};

export async function createPrice(ctx: RequestContext) {
  const { params, deps } = ctx;
  if (params.product !== undefined && params.product_data !== undefined) throw parametersExclusive('product', 'product_data');
  if (params.product === undefined && params.product_data === undefined) throw parameterMissing('product');
  const now = unixSeconds(deps.clock);
  const data = newPriceData(ctx, params, now);
  const lookupKey = data.lookupKey ?? null;
  const { row, eventIds } = await withLookupKeyGuard(lookupKey, () =>
    deps.prisma.$transaction(async (tx) => {
      const eventIds: string[] = [];
      let productId: string;
      if (params.product_data !== undefined) {
        const made = await insertProduct(ctx, tx, newProductData(ctx, params.product_data, now));
        productId = made.row.id;
        eventIds.push(made.eventId);
      } else {
        productId = (await findProduct(ctx, params.product, 'product', new TxSql(tx))).id;
      }
      if (lookupKey !== null) eventIds.push(...(await claimLookupKey(ctx, tx, lookupKey, data.id!, params.transfer_lookup_key === true, now)));
      const made = await insertPrice(ctx, tx, { ...data, productId });
      eventIds.push(made.eventId);
      return { row: made.row, eventIds };
    }),
  );
  await handOffEvents(deps.queues, eventIds);
  return serializePrice(row);
}

export async function retrievePrice(ctx: RequestContext) {
  return serializePrice(await findPrice(ctx, ctx.pathParams.price));
}

/** An update that names no lookup key: the route's one-statement path (sqlOnly), 4 round trips and 1 commit. */
export const updatesAlone = (params: Record<string, any>): boolean => params.lookup_key === undefined;

export async function updatePrice(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.price;
  if (!hasIdShape('price', id)) throw resourceMissing(NAME, id);
  const now = unixSeconds(deps.clock);
  const lookupKey: string | null | undefined = params.lookup_key === '' ? null : params.lookup_key;
  if (lookupKey === undefined) return updateWithoutLookupKey(ctx, id, now);
  // A lookup key is claimed (and its unique index guarded) through Prisma: the ordinary path.
  prismaOf(deps);
  const result = await withLookupKeyGuard(lookupKey, () =>
    deps.prisma.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM prices WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE`;
      if (locked.length === 0) throw resourceMissing(NAME, id);
      const current = await findPrice(ctx, id, new TxSql(tx));
      // Once inclusive or exclusive, a price's tax behavior is fixed.
      if (params.tax_behavior !== undefined && current.taxBehavior !== null && current.taxBehavior !== 'unspecified' && params.tax_behavior !== current.taxBehavior) {
        throw invalidRequest(
          `The tax_behavior of a price can't be changed once it is \`${current.taxBehavior}\`.`,
          undefined,
          'tax_behavior',
        );
      }
      const eventIds: string[] = [];
      if (lookupKey) eventIds.push(...(await claimLookupKey(ctx, tx, lookupKey, id, params.transfer_lookup_key === true, now)));
      const given: Partial<PriceRow> = {
        active: params.active,
        lookupKey,
        metadata: params.metadata === undefined ? undefined : applyMetadata(current.metadata as Metadata, params.metadata),
        nickname: params.nickname === '' ? null : params.nickname,
        taxBehavior: params.tax_behavior,
      };
      const fields = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<PriceRow>;
      const before = serializePrice(current);
      const changed = previousAttributes(before, serializePrice({ ...current, ...fields }));
      if (Object.keys(changed).length === 0) return { price: before, eventIds };
      const price = serializePrice(await tx.price.update({ where: { id }, data: fields as Prisma.PriceUpdateInput }));
      eventIds.push(await emit(tx, 'price.updated', price, { ...requestEventOptions(ctx, now), previousAttributes: changed }));
      return { price, eventIds };
    }),
  );
  if (result.eventIds.length > 0) await handOffEvents(deps.queues, result.eventIds);
  return result.price;
}

/** The locked read, then the change and its event as held writes (`deps.write`). */
async function updateWithoutLookupKey(ctx: RequestContext, id: string, now: number) {
  const { params, deps } = ctx;
  const [current] = await deps.sql.query<PriceRow>(selectOwnedForUpdate(id, ctx.caller.accountId));
  if (!current) throw resourceMissing(NAME, id);
  // Once inclusive or exclusive, a price's tax behavior is fixed.
  if (params.tax_behavior !== undefined && current.taxBehavior !== null && current.taxBehavior !== 'unspecified' && params.tax_behavior !== current.taxBehavior) {
    throw invalidRequest(`The tax_behavior of a price can't be changed once it is \`${current.taxBehavior}\`.`, undefined, 'tax_behavior');
  }
  const next: PriceRow = {
    ...current,
    active: params.active ?? current.active,
    metadata: params.metadata === undefined ? current.metadata : (applyMetadata(current.metadata as Metadata, params.metadata) as PriceRow['metadata']),
    nickname: params.nickname === undefined ? current.nickname : params.nickname === '' ? null : params.nickname,
    taxBehavior: params.tax_behavior ?? current.taxBehavior,
  };
  const before = serializePrice(current);
  const price = serializePrice(next);
  const changed = previousAttributes(before, price);
  if (Object.keys(changed).length === 0) return before;
  await deps.write(updatePriceRow(next));
  const eventId = await emitIn(deps, 'price.updated', price, { ...requestEventOptions(ctx, now), previousAttributes: changed });
  await handOffEvents(deps.queues, [eventId]);
  return price;
}

export async function listPrices(ctx: RequestContext) {
  const { params } = ctx;
  return paginateSql<PriceRow & { seq: bigint }>({
    params,
    url: '/v1/prices',
    rows: listedRows(ctx.caller.accountId, {
      active: params.active,
      currency: params.currency === undefined ? undefined : params.currency.toLowerCase(),
      product: params.product,
      type: params.type,
      created: rangeConditions('created', params.created),
      lookupKeys: params.lookup_keys,
      recurring: params.recurring,
    }),
    db: ctx.deps.sql,
    objectName: NAME,
    serialize: serializePrice,
  });
}

/** `GET /v1/prices/search`: rendered as the list renders them. */
export function searchPrices(ctx: RequestContext) {
  return searchRequest<PriceRow & { seq: bigint }>(ctx, SEARCH, searchedRows(ctx.caller.accountId), serializePrice);
}
