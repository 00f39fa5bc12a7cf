import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { types } from 'pg';
import type { Tx } from './prisma';

// SQL for the hot paths, sent on the `pg` pool that Prisma's adapter already owns: Prisma's model
// layer costs 110–390 µs of CPU per query more than the same statement sent here. Each distinct
// text becomes a named prepared statement, so PostgreSQL parses and plans it once per connection.

/** A statement and its values, numbered `$1…` in order; built with the `sql` tag. */
export interface Sql {
  readonly text: string;
  readonly values: readonly unknown[];
  /** Sent unprepared: a statement whose text varies with the request (a search), so names never pile up. */
  readonly unnamed?: boolean;
}

/**
 * A statement kept as its literal parts around its values (`parts.length === values.length + 1`):
 * nesting concatenates parts, and the `$n` text is written once, when first read, rather than
 * renumbered by a regex at every level (the one-statement writes nest a dozen fragments).
 */
export class Fragment implements Sql {
  private written: string | undefined;

  constructor(
    readonly parts: readonly string[],
    readonly values: readonly unknown[],
    /** What its text is made of (see Shape); undefined when unknown, and then named by its text. */
    readonly shape?: Shape,
  ) {}

  get text(): string {
    if (this.written === undefined) {
      let text = this.parts[0];
      for (let i = 1; i < this.parts.length; i++) text += `$${i}${this.parts[i]}`;
      this.written = text;
    }
    return this.written;
  }
}

const isFragment = (value: unknown): value is Fragment => value instanceof Fragment;

/**
 * What a statement's text is made of: its template (the tag's strings, the same object at every
 * call of one call site), and in order whether each value is a parameter or which fragment's shape
 * it splices; `raw` text and `join` separators by their text. One shape is one text, so a prepared
 * statement's name is kept on it and found by a few identity lookups, not by hashing the whole
 * text of a one-statement write on every request.
 */
export class Shape {
  private readonly next = new Map<unknown, Shape>();
  /** Its prepared statement's name, once named. */
  name: string | undefined;

  step(key: unknown): Shape {
    let shape = this.next.get(key);
    if (shape === undefined) this.next.set(key, (shape = new Shape()));
    return shape;
  }
}

const TEMPLATES = new Shape();
const RAWS = new Shape();
const JOINS = new Shape();
/** A value that is a parameter, not a fragment. */
const PARAMETER = Symbol('parameter');

/** Appends `fragment` to the statement being built (`parts` ends with the text so far). */
function append(parts: string[], values: unknown[], fragment: Fragment): void {
  parts[parts.length - 1] += fragment.parts[0];
  for (let i = 1; i < fragment.parts.length; i++) {
    values.push(fragment.values[i - 1]);
    parts.push(fragment.parts[i]);
  }
}

/**
 * `sql\`… ${value} …\``: every value becomes a parameter; a nested `sql` fragment (or `raw`) is
 * spliced in, its parameters numbered after the ones before it.
 */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): Fragment {
  const parts = [strings[0]];
  const params: unknown[] = [];
  let shape: Shape | undefined = TEMPLATES.step(strings);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (isFragment(value)) {
      append(parts, params, value);
      shape = value.shape && shape?.step(value.shape);
    } else {
      params.push(value);
      parts.push('');
      shape = shape?.step(PARAMETER);
    }
    parts[parts.length - 1] += strings[i + 1];
  }
  return new Fragment(parts, params, shape);
}

/** Text spliced in as it is: only ever a constant of the code, never a value from a request. */
export const raw = (text: string): Fragment => new Fragment([text], [], RAWS.step(text));

/** `statement` sent unprepared (see `Sql.unnamed`). */
export const unnamed = (statement: Sql): Sql => ({ text: statement.text, values: statement.values, unnamed: true });

/** Fragments joined by `separator`. */
export function join(fragments: readonly Fragment[], separator: string): Fragment {
  const parts = [''];
  const values: unknown[] = [];
  let shape: Shape | undefined = JOINS.step(separator);
  fragments.forEach((f, i) => {
    if (i > 0) parts[parts.length - 1] += separator;
    append(parts, values, f);
    shape = f.shape && shape?.step(f.shape);
  });
  return new Fragment(parts, values, shape);
}

/** Runs statements; rows come back with columns as the statement names them. */
export interface SqlClient {
  query<R extends QueryResultRow>(statement: Sql): Promise<R[]>;
  /** Inside a transaction a read may lock rows for it; on the pool a lock would end at once. */
  readonly inTransaction: boolean;
  /** Runs `work` in a transaction (inside one already, in that one). */
  transaction<T>(work: (sql: SqlClient) => Promise<T>): Promise<T>;
  /**
   * Runs `work`, then the statement it ends with (`last`), as one transaction that its first
   * statement opens: when `work` sent none, `last` is sent alone (a statement is a transaction of
   * its own), one round trip where BEGIN and COMMIT would make three. Inside a transaction already,
   * all of it runs in that one.
   */
  transactionEndingWith<T>(work: (sql: SqlClient) => Promise<{ result: T; last?: Sql }>): Promise<T>;
}

/** `transactionEndingWith` on a client already in a transaction: `work`, then `last`, in it. */
async function endingWithin<T>(sql: SqlClient, work: (sql: SqlClient) => Promise<{ result: T; last?: Sql }>): Promise<T> {
  const { result, last } = await work(sql);
  if (last) await sql.query(last);
  return result;
}

// int8 as bigint, as Prisma's raw queries answer it, so a row reads the same through either client.
const parseInt8 = (value: string): bigint => BigInt(value);
const TYPES = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? parseInt8 : types.getTypeParser(oid, format)) };

/** Names each distinct text once: the name of its prepared statement on every connection. */
class StatementNames {
  private readonly names = new Map<string, string>();

  /** By its shape when it has one (see Shape); else by its text. */
  of(statement: Sql): string {
    const shape = statement instanceof Fragment ? statement.shape : undefined;
    if (shape) return (shape.name ??= this.ofText(statement.text));
    return this.ofText(statement.text);
  }

  private ofText(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `sb_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      this.names.set(text, name);
    }
    return name;
  }
}

async function runNamed<R extends QueryResultRow>(on: Pool | PoolClient, names: StatementNames, statement: Sql): Promise<R[]> {
  const name = statement.unnamed ? undefined : names.of(statement);
  const result = await on.query<R>({ name, text: statement.text, values: statement.values as unknown[], types: TYPES });
  return result.rows;
}

/** Statements on the pool, each distinct text a named prepared statement. */
export class PoolSql implements SqlClient {
  private readonly names = new StatementNames();
  readonly inTransaction = false;

  constructor(readonly pool: Pool) {}

  query<R extends QueryResultRow>(statement: Sql): Promise<R[]> {
    return runNamed<R>(this.pool, this.names, statement);
  }

  /**
   * Runs `work` in a transaction on one pooled connection, without Prisma: for operations whose
   * statements are all SQL. Commits when `work` resolves, rolls back when it throws.
   */
  async transaction<T>(work: (sql: SqlClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const sql: SqlClient = {
      inTransaction: true,
      query: (statement) => runNamed(client, this.names, statement),
      transaction: (inner) => inner(sql),
      transactionEndingWith: (inner) => endingWithin(sql, inner),
    };
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(sql);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      // A connection that couldn't roll back is dropped, never handed to the next request.
      client.release(broken);
    }
  }

  async transactionEndingWith<T>(work: (sql: SqlClient) => Promise<{ result: T; last?: Sql }>): Promise<T> {
    // The connection and BEGIN wait for the first statement `work` sends.
    let opened: Promise<PoolClient> | undefined;
    const open = (): Promise<PoolClient> =>
      (opened ??= this.pool.connect().then(async (client) => {
        try {
          await client.query('BEGIN');
          return client;
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
      }));
    const sql: SqlClient = {
      inTransaction: true,
      query: async (statement) => runNamed(await open(), this.names, statement),
      transaction: (inner) => inner(sql),
      transactionEndingWith: (inner) => endingWithin(sql, inner),
    };
    let broken: Error | undefined;
    let client: PoolClient | undefined;
    try {
      const { result, last } = await work(sql);
      if (opened === undefined) {
        if (last) await this.query(last);
        return result;
      }
      client = await opened;
      if (last) await runNamed(client, this.names, last);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      client ??= opened && (await opened.catch(() => undefined));
      if (client) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      // A connection that couldn't roll back is dropped, never handed to the next request.
      client?.release(broken);
    }
  }
}

/** Statements in a Prisma transaction (an operation's): the same SQL, on the transaction's connection. */
export class TxSql implements SqlClient {
  readonly inTransaction = true;

  constructor(private readonly tx: Pick<Tx, '$queryRawUnsafe'>) {}

  query<R extends QueryResultRow>(statement: Sql): Promise<R[]> {
    return this.tx.$queryRawUnsafe<R[]>(statement.text, ...statement.values);
  }

  transaction<T>(work: (sql: SqlClient) => Promise<T>): Promise<T> {
    return work(this);
  }

  transactionEndingWith<T>(work: (sql: SqlClient) => Promise<{ result: T; last?: Sql }>): Promise<T> {
    return endingWithin(this, work);
  }
}
