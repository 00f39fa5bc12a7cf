import { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { searchRequest } from '../../../kernel/search';
import { emit, emitIn, previousAttributes, requestEventOptions, type Tx } from '../../../events/emit';
import { prismaOf } from '../../../kernel/transaction';
import { handOffEvents } from '../../../events/jobs';
import { TxSql, type SqlClient } from '../../../lib/sql';
import { SEARCH, listedRows, searchedRows, selectOwned, selectOwnedForUpdate, updateProductRow } from './queries';
import { isProductId, serializeDeletedProduct, serializeProduct, type ProductRow } from './serializer';

const NAME = 'product';

/** `''` unsets an optional field on update; absent leaves it. */
const unset = (value: any, empty: unknown = null): any => (value === '' ? empty : value);

/**
 * One of the caller's products (on the pool, or in a transaction's `TxSql`): 404 on the path's id,
 * or (with `param`) 400 on that body parameter.
 */
export async function findProduct(ctx: RequestContext, id: string, param?: string, db: SqlClient = ctx.deps.sql): Promise<ProductRow> {
  const missing = () => (param === undefined ? resourceMissing(NAME, id) : resourceMissing(NAME, id, param, 400));
  if (!isProductId(id)) throw missing();
  const [row] = await db.query<ProductRow>(selectOwned(id, ctx.caller.accountId));
  if (!row) throw missing();
  return row;
}

/** One of the caller's products as its public object, or null (a `ref` to a product expands through it). */
export async function retrieveProductObject(ctx: RequestContext, id: string) {
  const row = await ctx.deps.prisma.product.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  return row ? serializeProduct(row) : null;
}

/** The columns of a new product from create parameters (also `price.product_data`'s). */
export function newProductData(ctx: RequestContext, params: Record<string, any>, now: number): Prisma.ProductUncheckedCreateInput {
  return {
    // A product's create may name its id (price.product_data never does).
    id: params.id ?? newId('prod'),
    accountId: ctx.caller.accountId,
    created: now,
    updated: now,
    active: params.active ?? true,
    type: params.type ?? 'service',
    name: params.name,
    description: params.description ?? null,
    images: params.images ?? [],
    marketingFeatures: params.marketing_features ?? [],
    metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
    packageDimensions: params.package_dimensions ?? undefined,
    shippable: params.shippable ?? null,
    statementDescriptor: params.statement_descriptor ?? null,
    taxCode: params.tax_code ?? null,
    unitLabel: params.unit_label ?? null,
    url: params.url ?? null,
  };
}

/** Inserts a product and its `product.created` event in `tx`; returns the row and the event id. */
export async function insertProduct(ctx: RequestContext, tx: Tx, data: Prisma.ProductUncheckedCreateInput): Promise<{ row: ProductRow; eventId: string }> {
  const row = await tx.product.create({ data });
  const eventId = await emit(tx, 'product.created', serializeProduct(row), requestEventOptions(ctx, row.created));
  return { row, eventId };
}

/**
 * How a product's `default_price_data` becomes its first price. Prices implement it and the route
 * passes it in: prices call products (a price makes or finds its product), never the other way.
 */
export interface DefaultPrices {
  /** The price's row from `default_price_data`, checked before the transaction opens. */
  data(ctx: RequestContext, params: Record<string, any>, now: number): Omit<Prisma.PriceUncheckedCreateInput, 'productId'>;
  /** Inserts it in `tx` with its `price.created`; answers the event's id. */
  insert(ctx: RequestContext, tx: Tx, data: Prisma.PriceUncheckedCreateInput): Promise<string>;
}

export async function createProduct(ctx: RequestContext, defaultPrices: DefaultPrices) {
  const { deps, params } = ctx;
  const now = unixSeconds(deps.clock);
  const product = newProductData(ctx, params, now);
  // `default_price_data`: the product's first price, made with it (product.created names it).
  const price = params.default_price_data === undefined ? undefined : defaultPrices.data(ctx, params.default_price_data, now);
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const made = await insertProduct(ctx, tx, { ...product, defaultPrice: price?.id ?? null }).catch((err: unknown) => {
      if (params.id !== undefined && err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw invalidRequest('Product already exists.', 'resource_already_exists', 'id');
      }
      throw err;
    });
    const eventIds = [made.eventId];
    if (price) eventIds.push(await defaultPrices.insert(ctx, tx, { ...price, productId: made.row.id }));
    return { row: made.row, eventIds };
  });
  await handOffEvents(deps.queues, eventIds);
  return serializeProduct(row);
}

export async function retrieveProduct(ctx: RequestContext) {
  return serializeProduct(await findProduct(ctx, ctx.pathParams.product));
}

export async function updateProduct(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.product;
  if (!isProductId(id)) throw resourceMissing(NAME, id);
  const now = unixSeconds(deps.clock);
  if (params.default_price === undefined) return updateAlone(ctx, id, now);
  // A default price is checked through Prisma: the ordinary path.
  prismaOf(deps);
  const result = await deps.prisma.$transaction(async (tx) => {
    // Lock the row so concurrent edits (metadata merges above all) don't overwrite each other.
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM products WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE`;
    if (locked.length === 0) throw resourceMissing(NAME, id);
    const current = await findProduct(ctx, id, undefined, new TxSql(tx));
    if (params.default_price !== undefined) await checkDefaultPrice(ctx, tx, id, params.default_price);
    const fields = fieldsSent(params, current);
    const before = serializeProduct(current);
    const changed = previousAttributes(before, serializeProduct({ ...current, ...fields }));
    // Nothing changed: no write, no event, and `updated` stays.
    if (Object.keys(changed).length === 0) return { product: before, eventId: undefined };
    const row = await tx.product.update({
      where: { id },
      data: { ...fields, packageDimensions: fields.packageDimensions === null ? Prisma.DbNull : (fields.packageDimensions as Prisma.InputJsonValue), updated: now } as Prisma.ProductUpdateInput,
    });
    const product = serializeProduct(row);
    const eventId = await emit(tx, 'product.updated', product, { ...requestEventOptions(ctx, now), previousAttributes: { ...changed, updated: current.updated } });
    return { product, eventId };
  });
  if (result.eventId) await handOffEvents(deps.queues, [result.eventId]);
  return result.product;
}

/** The columns an update's parameters set (what they leave out stays as `current` has it). */
function fieldsSent(params: Record<string, any>, current: ProductRow): Partial<ProductRow> {
  const given: Partial<ProductRow> = {
    active: params.active,
    defaultPrice: params.default_price,
    description: unset(params.description),
    images: unset(params.images, []),
    marketingFeatures: unset(params.marketing_features, []),
    metadata: params.metadata === undefined ? undefined : applyMetadata(current.metadata as Metadata, params.metadata),
    name: params.name,
    packageDimensions: unset(params.package_dimensions),
    shippable: params.shippable,
    statementDescriptor: unset(params.statement_descriptor),
    taxCode: unset(params.tax_code),
    unitLabel: unset(params.unit_label),
    url: unset(params.url),
  };
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<ProductRow>;
}

/** An update that names no default price: the route's one-statement path (sqlOnly), 4 round trips and 1 commit. */
export const updatesAlone = (params: Record<string, any>): boolean => params.default_price === undefined;

/** The locked read, then the change and product.updated as held writes (`deps.write`). */
async function updateAlone(ctx: RequestContext, id: string, now: number) {
  const { params, deps } = ctx;
  const [locked] = await deps.sql.query<ProductRow & { seq: bigint }>(selectOwnedForUpdate(id, ctx.caller.accountId));
  if (!locked) throw resourceMissing(NAME, id);
  const { seq: _seq, ...current } = locked;
  const fields = fieldsSent(params, current);
  const before = serializeProduct(current);
  const changed = previousAttributes(before, serializeProduct({ ...current, ...fields }));
  // Nothing changed: no write, no event, and `updated` stays.
  if (Object.keys(changed).length === 0) return before;
  const row: ProductRow = { ...current, ...fields, updated: now };
  await deps.write(updateProductRow(row));
  const product = serializeProduct(row);
  const eventId = await emitIn(deps, 'product.updated', product, { ...requestEventOptions(ctx, now), previousAttributes: { ...changed, updated: current.updated } });
  await handOffEvents(deps.queues, [eventId]);
  return product;
}

/** A product's default price is one of its own active prices. */
async function checkDefaultPrice(ctx: RequestContext, tx: Tx, productId: string, priceId: string): Promise<void> {
  const price = hasIdShape('price', priceId)
    ? await tx.price.findUnique({ where: { id: priceId, accountId: ctx.caller.accountId }, select: { productId: true, active: true } })
    : null;
  if (!price) throw resourceMissing('price', priceId, 'default_price', 400);
  if (price.productId !== productId) {
    throw invalidRequest(`The price \`${priceId}\` does not belong to the product \`${productId}\`.`, undefined, 'default_price');
  }
  if (!price.active) throw invalidRequest(`The price \`${priceId}\` is not active and can't be the default price.`, undefined, 'default_price');
}

export async function deleteProduct(ctx: RequestContext) {
  const { deps } = ctx;
  const id = ctx.pathParams.product;
  if (!isProductId(id)) throw resourceMissing(NAME, id);
  const now = unixSeconds(deps.clock);
  const eventId = await deps.prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM products WHERE id = ${id} AND account_id = ${ctx.caller.accountId} FOR UPDATE`;
    if (locked.length === 0) throw resourceMissing(NAME, id);
    // The public API's words; prices can only be archived, so such a product stays.
    if ((await tx.price.count({ where: { productId: id } })) > 0) {
      throw invalidRequest('This product cannot be deleted because it has one or more user-created prices.');
    }
    const row = await tx.product.delete({ where: { id } });
    return emit(tx, 'product.deleted', serializeProduct(row), requestEventOptions(ctx, now));
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeDeletedProduct(id);
}

export async function listProducts(ctx: RequestContext) {
  const { params } = ctx;
  return paginateSql<ProductRow & { seq: bigint }>({
    params,
    url: '/v1/products',
    rows: listedRows(ctx.caller.accountId, {
      active: params.active,
      created: rangeConditions('created', params.created),
      shippable: params.shippable,
      url: params.url,
      ids: params.ids,
    }),
    db: ctx.deps.sql,
    objectName: NAME,
    serialize: serializeProduct,
  });
}

/** `GET /v1/products/search`: rendered as the list renders them. */
export function searchProducts(ctx: RequestContext) {
  return searchRequest<ProductRow & { seq: bigint }>(ctx, SEARCH, searchedRows(ctx.caller.accountId), serializeProduct);
}
