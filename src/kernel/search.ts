import { createHash } from 'node:crypto';
import { ApiError, invalidRequest } from './errors';
import type { SqlRows } from './list';
import type { RequestContext } from './route';
import { join, raw, sql, unnamed, type Fragment, type SqlClient } from '../lib/sql';

// The public search query language (`GET /v1/<resource>/search?query=…`), parsed once here into
// clauses and compiled to a parameterized WHERE fragment against the fields a resource declares
// in its queries.ts. Grammar (what https://docs.stripe.com/search describes):
//
//   query   := clause ( (' ' | ' AND ' | ' OR ') clause )*      at most 10 clauses; AND and OR never both
//   clause  := ['-'] field operator value                       '-' negates
//   field   := 'metadata[' quoted ']' | name ('.' name)*
//   operator:= ':' | '~' | '>' | '<' | '>=' | '<='
//   value   := quoted | bare                                    bare `null` is the empty value
//   quoted  := '"' … '"' | "'" … "'"                            `\` escapes the next character
//
// AND and OR are case-insensitive; clauses separated by spaces alone are ANDed.

export const MAX_CLAUSES = 10;
/** The shortest value `~` accepts (the public rule). */
export const MIN_SUBSTRING = 3;
/** `total_count` counts this many matches at most, as the public API's is accurate up to it. */
export const MAX_TOTAL_COUNT = 10_000;

/**
 * How a field compares: `string` exactly (case-insensitive) and by substring (`~`); `token`
 * exactly (case-sensitive); `numeric` (numbers, timestamps) exactly and with `>`, `<`, `>=`, `<=`;
 * `metadata` by key (`metadata['key']:'value'`, a token).
 */
export type SearchFieldType = 'string' | 'token' | 'numeric' | 'metadata';

export interface SearchField {
  readonly type: SearchFieldType;
  /** The column or SQL expression it reads (a constant of the code, never a request's text); for metadata, the jsonb column. */
  readonly sql: string;
}

/** What a searchable resource declares (its queries.ts). */
export interface SearchResource {
  /** The resource as the public errors name it (`customers`). */
  readonly name: string;
  readonly fields: Readonly<Record<string, SearchField>>;
}

export type Operator = ':' | '~' | '>' | '<' | '>=' | '<=';

export interface Clause {
  readonly negated: boolean;
  /** The field as written (`email`, `metadata`, `payment_method_details.card.last4`). */
  readonly field: string;
  /** `metadata['key']`'s key. */
  readonly key?: string;
  readonly operator: Operator;
  /** null for a bare `null`. */
  readonly value: string | null;
  /** The value was quoted (a quoted `"null"` is the text null). */
  readonly quoted: boolean;
}

export interface Query {
  readonly clauses: readonly Clause[];
  readonly combinator: 'AND' | 'OR';
}

const PARAM = 'query';

// The first sentence is the public API's (its answer to `asdf`); the rest says what was wrong.
const UNPARSEABLE =
  'We were unable to parse your search query. Try using the format `metadata["key"]:"value"` to query for metadata or key:"value" to query for other fields.';

const queryError = (message: string): ApiError => invalidRequest(message, undefined, PARAM);
const unparseable = (why?: string): ApiError => queryError(why === undefined ? UNPARSEABLE : `We were unable to parse your search query. ${why}`);

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const NAME = /[A-Za-z0-9_]/;
const OPERATORS: readonly Operator[] = ['>=', '<=', ':', '~', '>', '<'];

/** A query's text as clauses and how they combine; the public 400 (param `query`) when it is not one. */
export function parseQuery(text: string): Query {
  let at = 0;
  const clauses: Clause[] = [];
  let combinator: 'AND' | 'OR' | undefined;

  const skipSpaces = (): number => {
    const start = at;
    while (isSpace(text[at])) at++;
    return at - start;
  };

  const quoted = (): string => {
    const quote = text[at++];
    let value = '';
    for (;;) {
      const c = text[at++];
      if (c === undefined) throw unparseable();
      if (c === quote) return value;
      if (c === '\\') {
        const next = text[at++];
        if (next === undefined) throw unparseable();
        value += next;
      } else value += c;
    }
  };

  const clause = (): Clause => {
    const negated = text[at] === '-';
    if (negated) at++;
    const start = at;
    while (at < text.length && (NAME.test(text[at]) || (text[at] === '.' && at > start && NAME.test(text[at + 1] ?? '')))) at++;
    const field = text.slice(start, at);
    if (field === '') throw unparseable();
    let key: string | undefined;
    if (text[at] === '[') {
      if (field !== 'metadata') throw unparseable();
      at++;
      if (text[at] !== '"' && text[at] !== "'") throw unparseable();
      key = quoted();
      if (text[at++] !== ']') throw unparseable();
    } else if (field === 'metadata') {
      throw unparseable();
    }
    const operator = OPERATORS.find((op) => text.startsWith(op, at));
    if (!operator) throw unparseable();
    at += operator.length;
    const c = text[at];
    if (c === undefined || isSpace(c)) throw unparseable();
    if (c === '"' || c === "'") {
      const value = quoted();
      // A clause ends at a space or the end: `email:"a"b` is no query.
      if (at < text.length && !isSpace(text[at])) throw unparseable();
      return { negated, field, key, operator, value, quoted: true };
    }
    const begin = at;
    while (at < text.length && !isSpace(text[at]) && text[at] !== '"' && text[at] !== "'") at++;
    if (at < text.length && !isSpace(text[at])) throw unparseable();
    const bare = text.slice(begin, at);
    return { negated, field, key, operator, value: bare.toLowerCase() === 'null' ? null : bare, quoted: false };
  };

  skipSpaces();
  if (at >= text.length) throw unparseable();
  clauses.push(clause());
  while (at < text.length) {
    if (skipSpaces() === 0) throw unparseable();
    if (at >= text.length) break;
    let joiner: 'AND' | 'OR' = 'AND';
    const word = /^(and|or)(?=[ \t\n\r])/i.exec(text.slice(at, at + 4));
    if (word) {
      joiner = word[1].toUpperCase() as 'AND' | 'OR';
      at += word[1].length;
      skipSpaces();
      if (at >= text.length) throw unparseable();
    }
    if (combinator !== undefined && combinator !== joiner) throw unparseable("You can't combine AND and OR in the same query.");
    combinator = joiner;
    clauses.push(clause());
    if (clauses.length > MAX_CLAUSES) throw unparseable(`You can combine up to ${MAX_CLAUSES} query clauses in a search.`);
  }
  return { clauses, combinator: combinator ?? 'AND' };
}

const NUMBER = /^-?\d+(\.\d+)?$/;

/** `%`, `_` and `\` as themselves in a LIKE pattern (backslash is PostgreSQL's default escape). */
const likeLiteral = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

const COMPARISONS: Partial<Record<Operator, string>> = { ':': '=', '>': '>', '<': '<', '>=': '>=', '<=': '<=' };

/**
 * One clause as a condition: true, false, or NULL where the field has no value (kept plain, so a
 * trigram or b-tree index can serve it; `compileQuery` makes a negation NULL-safe).
 */
function condition(clause: Clause, field: SearchField, resource: SearchResource): Fragment {
  const column = raw(field.sql);
  const name = clause.key === undefined ? clause.field : `metadata["${clause.key}"]`;
  const refuse = (): never => {
    throw queryError(`Field \`${clause.field}\` does not support the \`${clause.operator}\` operator in a search for resource \`${resource.name}\`.`);
  };
  if (field.type === 'metadata') {
    if (clause.key === undefined) throw unparseable();
    if (clause.operator !== ':') refuse();
    if (clause.value === null) return sql`(${column} ->> ${clause.key}::text) IS NULL`;
    // Containment, not `->> key =`: a GIN (jsonb_path_ops) index on the column serves it. Metadata
    // values are strings, so the two agree.
    return sql`${column} @> jsonb_build_object(${clause.key}::text, ${clause.value}::text)`;
  }
  if (clause.value === null) {
    if (clause.operator !== ':') refuse();
    return sql`${column} IS NULL`;
  }
  switch (field.type) {
    case 'string':
      if (clause.operator === '~') {
        if ([...clause.value].length < MIN_SUBSTRING) {
          throw unparseable(`Substring matching (\`~\`) on \`${name}\` needs a value of at least ${MIN_SUBSTRING} characters.`);
        }
        return sql`${column} ILIKE ${`%${likeLiteral(clause.value)}%`}::text`;
      }
      if (clause.operator !== ':') refuse();
      // Equality without regard to case, as ILIKE without wildcards: the same index serves both.
      return sql`${column} ILIKE ${likeLiteral(clause.value)}::text`;
    case 'token':
      if (clause.operator !== ':') refuse();
      return sql`${column} = ${clause.value}::text`;
    case 'numeric': {
      const op = COMPARISONS[clause.operator];
      if (op === undefined) refuse();
      if (!NUMBER.test(clause.value)) throw unparseable(`\`${name}\` is a numeric field: its value must be a number, not ${JSON.stringify(clause.value)}.`);
      // As numeric, so `created>1.5` compares as written whatever the column's type.
      return sql`${column} ${raw(op!)} ${clause.value}::numeric`;
    }
  }
}

/** A parsed query as one WHERE condition over `resource`'s declared fields; unknown fields are the public 400. */
export function compileQuery(query: Query, resource: SearchResource): Fragment {
  const parts = query.clauses.map((clause) => {
    const field = Object.prototype.hasOwnProperty.call(resource.fields, clause.field) ? resource.fields[clause.field] : undefined;
    if (!field || (field.type === 'metadata') !== (clause.key !== undefined)) {
      throw queryError(
        `Field \`${clause.field}\` is an unsupported search field for resource \`${resource.name}\`. See http://stripe.com/docs/search#query-fields-for-${resource.name.replace(/_/g, '-')} for a list of supported fields.`,
      );
    }
    const test = condition(clause, field, resource);
    // NULL (no value) is no match; negated, it is one: `-email:"a"` keeps customers without an email.
    return clause.negated ? sql`(${test}) IS NOT TRUE` : test;
  });
  return sql`(${join(parts, ` ${query.combinator} `)})`;
}

/** What a search result is: the public `search_result`. */
export interface SearchResult<T = unknown> {
  object: 'search_result';
  data: T[];
  has_more: boolean;
  next_page: string | null;
  url: string;
  total_count?: number;
}

/** Seals page tokens (`deps.encryption`), so a token can't be forged or altered. */
export interface Sealer {
  seal(plaintext: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

export interface SearchOptions<Row> {
  readonly params: { query: string; limit?: number; page?: string; expand?: readonly string[] };
  /** `/v1/customers/search`. */
  readonly url: string;
  readonly resource: SearchResource;
  /** The searchable rows (the owner's, without deleted ones); `seq` orders them. */
  readonly rows: SqlRows;
  readonly db: SqlClient;
  readonly sealer: Sealer;
  /** Whose search it is (the account): a page token is good only for the same scope and query. */
  readonly scope: string;
  readonly serialize: (row: Row) => unknown;
}

const PAGE_PARAM = 'page';
const badPage = (): ApiError => invalidRequest('Invalid page: it must be the `next_page` of an earlier search with the same query.', undefined, PAGE_PARAM);

/** Binds a token to its search: the same account and the same query text. */
const digestOf = (scope: string, query: string): string => createHash('sha256').update(`${scope}\n${query}`).digest('base64url').slice(0, 22);

async function pageToken(sealer: Sealer, scope: string, query: string, seq: bigint): Promise<string> {
  return Buffer.from(await sealer.seal(JSON.stringify({ d: digestOf(scope, query), s: seq.toString() }))).toString('base64url');
}

/** The `seq` a page token continues after; the 400 on `page` for anything else. */
async function positionOf(sealer: Sealer, scope: string, query: string, token: string): Promise<bigint> {
  let payload: unknown;
  try {
    payload = JSON.parse(await sealer.open(Buffer.from(token, 'base64url').toString('utf8')));
  } catch {
    throw badPage();
  }
  const { d, s } = (payload ?? {}) as { d?: unknown; s?: unknown };
  if (d !== digestOf(scope, query) || typeof s !== 'string' || !/^\d+$/.test(s)) throw badPage();
  return BigInt(s);
}

/**
 * A search over a resource's rows, newest first, a page at a time: the query compiled against its
 * fields, the page token sealed. Its statements vary with the query, so they go unprepared.
 */
export async function searchSql<Row extends { seq: bigint }>(opts: SearchOptions<Row>): Promise<SearchResult> {
  const { params, rows, db } = opts;
  const limit = params.limit ?? 10;
  const matches = compileQuery(parseQuery(params.query), opts.resource);
  const filters = join([...rows.where, matches], ' AND ');
  let after = raw('');
  if (params.page !== undefined) after = sql` AND seq < ${await positionOf(opts.sealer, opts.scope, params.query, params.page)}`;
  const found = await db.query<Row>(unnamed(sql`${rows.select} WHERE ${filters}${after} ORDER BY seq DESC LIMIT ${limit + 1}`));
  const hasMore = found.length > limit;
  const page = hasMore ? found.slice(0, limit) : found;
  const result: SearchResult = {
    object: 'search_result',
    data: page.map(opts.serialize),
    has_more: hasMore,
    next_page: hasMore ? await pageToken(opts.sealer, opts.scope, params.query, page[page.length - 1].seq) : null,
    url: opts.url,
  };
  if (params.expand?.includes('total_count')) {
    const [counted] = await db.query<{ n: number }>(unnamed(sql`SELECT count(*)::int AS n FROM (${rows.select} WHERE ${filters} LIMIT ${MAX_TOTAL_COUNT}) matched`));
    result.total_count = counted.n;
  }
  return result;
}

/**
 * `GET /v1/<resource>/search` for the caller: its parameters, the pool, the secrets key, and the
 * account as the page tokens' scope. `rows` are the account's searchable rows.
 */
export const searchRequest = <Row extends { seq: bigint }>(
  ctx: RequestContext,
  resource: SearchResource,
  rows: SqlRows,
  serialize: (row: Row) => unknown,
): Promise<SearchResult> =>
  searchSql<Row>({
    params: { query: ctx.params.query, limit: ctx.params.limit, page: ctx.params.page, expand: ctx.params.expand },
    url: `/v1/${resource.name}/search`,
    resource,
    rows,
    db: ctx.deps.sql,
    sealer: ctx.deps.encryption,
    scope: ctx.caller.accountId,
    serialize,
  });
