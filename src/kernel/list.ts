import { invalidRequest, parametersExclusive, resourceMissing } from './errors';
import { join, raw, sql, type Fragment, type SqlClient } from '../lib/sql';

// Cursor pagination over any table with a `seq` column (insertion order: newest first, and a
// stable tie-break for rows created in the same second). Cursors are object ids of this list.

export interface ListObject<T = unknown> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

export type CreatedFilter = number | { gt?: number; gte?: number; lt?: number; lte?: number };

/** `created=123` or `created[gte]=…` → a Prisma where fragment for an Int column. */
export function rangeWhere(filter: CreatedFilter | undefined): number | Record<string, number> | undefined {
  if (filter === undefined) return undefined;
  if (typeof filter === 'number') return filter;
  const out: Record<string, number> = {};
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) if (filter[op] !== undefined) out[op] = filter[op]!;
  return Object.keys(out).length > 0 ? out : undefined;
}

interface SeqModel<Row> {
  findUnique(args: { where: Record<string, unknown>; select: { seq: true } }): Promise<{ seq: bigint } | null>;
  findMany(args: { where: Record<string, unknown>; orderBy: { seq: 'asc' | 'desc' }; take: number }): Promise<Row[]>;
}

export interface PageOptions<Row> {
  params: { limit?: number; starting_after?: string; ending_before?: string };
  url: string;
  /** The filter that defines the list (owner account and the list's own filters). */
  where: Record<string, unknown>;
  model: SeqModel<Row>;
  /** Human name of the listed object, for the error when a cursor is not in this list. */
  objectName: string;
  serialize: (row: Row) => unknown;
}

type PageParams = PageOptions<unknown>['params'];

/** The cursor a page starts from, if any: one of starting_after and ending_before, never empty. */
function cursorOf(params: PageParams): { param: 'starting_after' | 'ending_before'; id: string } | undefined {
  if (params.starting_after !== undefined && params.ending_before !== undefined) {
    throw parametersExclusive('starting_after', 'ending_before');
  }
  const param = params.starting_after !== undefined ? 'starting_after' : params.ending_before !== undefined ? 'ending_before' : undefined;
  if (param === undefined) return undefined;
  const id = params[param]!;
  if (id === '') throw invalidRequest(`Invalid ${param}: it must be an object id.`, 'parameter_invalid_empty', param);
  return { param, id };
}

export async function paginate<Row extends { seq: bigint }>(opts: PageOptions<Row>): Promise<ListObject> {
  const { params, where, model } = opts;
  const limit = params.limit ?? 10;
  const start = cursorOf(params);
  let seqWhere: Record<string, bigint> | undefined;
  if (start) {
    // findUnique by id (with the list's filters) is far cheaper in Prisma than findFirst.
    const cursor = await model.findUnique({ where: { ...where, id: start.id }, select: { seq: true } });
    if (!cursor) throw resourceMissing(opts.objectName, start.id, start.param, 400);
    seqWhere = start.param === 'starting_after' ? { lt: cursor.seq } : { gt: cursor.seq };
  }
  const backwards = start?.param === 'ending_before';
  const rows = await model.findMany({
    where: seqWhere ? { ...where, seq: seqWhere } : where,
    orderBy: { seq: backwards ? 'asc' : 'desc' },
    take: limit + 1,
  });
  return pageOf(rows, limit, backwards, opts);
}

/** The page from `limit + 1` rows in the order read: whether there is more, newest first. */
function pageOf<Row>(rows: Row[], limit: number, backwards: boolean, opts: { url: string; serialize: (row: Row) => unknown }): ListObject {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  if (backwards) page.reverse();
  return { object: 'list', data: page.map(opts.serialize), has_more: hasMore, url: opts.url };
}

/** A list's rows as SQL (a resource's queries.ts), for lists whose statements go to the pool. */
export interface SqlRows {
  /** `SELECT <the row's columns, seq among them> FROM <one table>`, without WHERE; `id` and `seq` are that table's. */
  readonly select: Fragment;
  /** The list's filters (its owner first), ANDed. */
  readonly where: readonly Fragment[];
}

export interface SqlPageOptions<Row> extends Omit<PageOptions<Row>, 'where' | 'model'> {
  readonly rows: SqlRows;
  readonly db: SqlClient;
}

/**
 * `paginate` with named prepared statements on the pool instead of Prisma's model layer (which
 * costs more than the query itself on a hot list): the same cursors, order and errors.
 */
export async function paginateSql<Row extends { seq: bigint }>(opts: SqlPageOptions<Row>): Promise<ListObject> {
  const { params, rows, db } = opts;
  const limit = params.limit ?? 10;
  const start = cursorOf(params);
  const filters = join([...rows.where], ' AND ');
  let after = raw('');
  if (start) {
    const [cursor] = await db.query<{ seq: bigint }>(sql`${rows.select} WHERE ${filters} AND id = ${start.id}`);
    if (!cursor) throw resourceMissing(opts.objectName, start.id, start.param, 400);
    after = start.param === 'starting_after' ? sql` AND seq < ${cursor.seq}` : sql` AND seq > ${cursor.seq}`;
  }
  const backwards = start?.param === 'ending_before';
  const found = await db.query<Row>(sql`${rows.select} WHERE ${filters}${after} ORDER BY seq ${raw(backwards ? 'ASC' : 'DESC')} LIMIT ${limit + 1}`);
  return pageOf(found, limit, backwards, opts);
}

const OPERATORS: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** `created` filters (as rangeWhere reads them) as SQL conditions on `column`. */
export function rangeConditions(column: string, filter: CreatedFilter | undefined): Fragment[] {
  const range = rangeWhere(filter);
  if (range === undefined) return [];
  if (typeof range === 'number') return [sql`${raw(column)} = ${range}`];
  return Object.entries(range).map(([op, value]) => sql`${raw(column)} ${raw(OPERATORS[op])} ${value}`);
}

/**
 * `paginate` for objects whose public form needs more than the row (its items, its lines): the
 * page's rows are serialized together, so each page reads what they need in a few queries.
 */
export async function paginateRows<Row extends { seq: bigint }>(opts: Omit<PageOptions<Row>, 'serialize'> & { serializeAll: (rows: Row[]) => Promise<unknown[]> }): Promise<ListObject> {
  const page = await paginate<Row>({ ...opts, serialize: (row) => row });
  return { ...page, data: await opts.serializeAll(page.data as Row[]) };
}

export interface ItemPageOptions<T> {
  params: PageParams;
  url: string;
  /** Every item of the list, newest first. */
  items: readonly T[];
  objectName: string;
  serialize: (item: T) => unknown;
}

/**
 * The same pagination over a list held in memory: the sub-objects an account keeps (its
 * capabilities, external accounts and persons), which are few.
 */
export function paginateItems<T extends { id: string }>(opts: ItemPageOptions<T>): ListObject {
  const { params, items } = opts;
  const limit = params.limit ?? 10;
  const cursor = cursorOf(params);
  let page: readonly T[];
  let hasMore: boolean;
  if (cursor === undefined) {
    page = items.slice(0, limit);
    hasMore = items.length > limit;
  } else {
    const at = items.findIndex((item) => item.id === cursor.id);
    if (at === -1) throw resourceMissing(opts.objectName, cursor.id, cursor.param, 400);
    if (cursor.param === 'starting_after') {
      page = items.slice(at + 1, at + 1 + limit);
      hasMore = items.length > at + 1 + limit;
    } else {
      page = items.slice(Math.max(0, at - limit), at);
      hasMore = at - limit > 0;
    }
  }
  return { object: 'list', data: page.map(opts.serialize), has_more: hasMore, url: opts.url };
}
