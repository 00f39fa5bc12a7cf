import { createHmac } from 'node:crypto';
import { ApiError } from '../../src/kernel/errors';
import { MAX_CLAUSES, compileQuery, parseQuery, searchSql, type SearchResource } from '../../src/kernel/search';
import { raw, sql, type Sql, type SqlClient } from '../../src/lib/sql';

// The search query language: every construct the parser reads, every error it and the compiler
// answer (the public 400 on `query`), the SQL each clause compiles to (values always as
// parameters), and the page token (sealed, bound to its account and query).

const THINGS: SearchResource = {
  name: 'things',
  fields: {
    created: { type: 'numeric', sql: 'created' },
    email: { type: 'string', sql: 'email' },
    status: { type: 'token', sql: 'status' },
    metadata: { type: 'metadata', sql: 'metadata' },
    'card.last4': { type: 'string', sql: "(details->>'last4')" },
  },
};

const PARSE = 'We were unable to parse your search query.';

/** The 400 a query gets, as the public error's members. */
function errorOf(run: () => unknown): { status: number; type: string; param?: string; message: string } {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    return { status: e.status, type: e.type, param: e.param, message: e.message };
  }
  throw new Error('no error');
}

const compiled = (query: string): Sql => compileQuery(parseQuery(query), THINGS);

describe('parseQuery', () => {
  test('a clause: field, operator, value (quoted either way, or bare)', () => {
    expect(parseQuery('email:"amy@example.com"')).toEqual({
      combinator: 'AND',
      clauses: [{ negated: false, field: 'email', key: undefined, operator: ':', value: 'amy@example.com', quoted: true }],
    });
    expect(parseQuery("email:'amy@example.com'").clauses[0].value).toBe('amy@example.com');
    expect(parseQuery('created>1700000000').clauses[0]).toMatchObject({ field: 'created', operator: '>', value: '1700000000', quoted: false });
    expect(parseQuery('status:active').clauses[0]).toMatchObject({ value: 'active', quoted: false });
  });

  test('every operator, the two-character ones before the one-character ones', () => {
    for (const op of [':', '~', '>', '<', '>=', '<=']) expect(parseQuery(`created${op}5`).clauses[0].operator).toBe(op);
  });

  test('negation, metadata in either quotes, dotted fields, null', () => {
    expect(parseQuery('-email:"a@b.c"').clauses[0]).toMatchObject({ negated: true, field: 'email' });
    expect(parseQuery(`metadata['order']:'6735'`).clauses[0]).toMatchObject({ field: 'metadata', key: 'order', value: '6735' });
    expect(parseQuery('metadata["or der"]:"x"').clauses[0]).toMatchObject({ key: 'or der' });
    expect(parseQuery('card.last4:"4242"').clauses[0].field).toBe('card.last4');
    expect(parseQuery('email:null').clauses[0]).toMatchObject({ value: null, quoted: false });
    expect(parseQuery('email:NULL').clauses[0].value).toBeNull();
    // Quoted, it is the text.
    expect(parseQuery('email:"null"').clauses[0]).toMatchObject({ value: 'null', quoted: true });
  });

  test('backslash escapes the next character inside quotes; other quotes and spaces are text', () => {
    expect(parseQuery('email:"say \\"hi\\" \\\\ now"').clauses[0].value).toBe('say "hi" \\ now');
    expect(parseQuery(`email:"it's"`).clauses[0].value).toBe("it's");
    expect(parseQuery(`email:'a "b"'`).clauses[0].value).toBe('a "b"');
  });

  test('AND, OR (any case) or spaces between clauses; spaces alone AND them', () => {
    expect(parseQuery('email:"a" AND created>1').combinator).toBe('AND');
    expect(parseQuery('email:"a" and created>1 And status:x').clauses).toHaveLength(3);
    expect(parseQuery('email:"a" OR email:"b" or email:"c"')).toMatchObject({ combinator: 'OR' });
    expect(parseQuery('  email:"a"   created>1  ')).toMatchObject({ combinator: 'AND' });
    expect(parseQuery('email:"a"').combinator).toBe('AND');
    // A field may be named like a keyword's start.
    expect(parseQuery('email:"a" OR order:1').clauses[1].field).toBe('order');
  });

  test(`up to ${MAX_CLAUSES} clauses`, () => {
    const clauses = (n: number) => Array.from({ length: n }, (_, i) => `created>${i}`).join(' AND ');
    expect(parseQuery(clauses(MAX_CLAUSES)).clauses).toHaveLength(MAX_CLAUSES);
    expect(errorOf(() => parseQuery(clauses(MAX_CLAUSES + 1)))).toEqual({
      status: 400,
      type: 'invalid_request_error',
      param: 'query',
      message: `${PARSE} You can combine up to ${MAX_CLAUSES} query clauses in a search.`,
    });
  });

  test('AND and OR in one query (spaces count as AND) is the 400', () => {
    for (const q of ['email:"a" AND created>1 OR status:x', 'email:"a" OR created>1 AND status:x', 'email:"a" created>1 OR status:x']) {
      expect(errorOf(() => parseQuery(q))).toMatchObject({ status: 400, param: 'query', message: `${PARSE} You can't combine AND and OR in the same query.` });
    }
  });

  test.each([
    ['', 'empty'],
    ['   ', 'spaces'],
    ['asdf', 'a word'],
    ['email', 'no operator'],
    ['email:', 'no value'],
    ['email: "a"', 'a space before the value'],
    ['email :"a"', 'a space before the operator'],
    ['email="a"', 'an unknown operator'],
    ['email:"a', 'an unterminated quote'],
    ['email:"a\\', 'an escape at the end'],
    ['email:"a"b', 'text after a quoted value'],
    ['email:a"b"', 'a quote inside a bare value'],
    ['email:"a"created>1', 'no space between clauses'],
    ['email:"a" AND', 'a trailing AND'],
    ['AND email:"a"', 'a leading AND'],
    ['email:"a" AND AND created>1', 'AND twice'],
    ['-', 'a lone minus'],
    ['-:"a"', 'no field'],
    ['metadata:"a"', 'metadata without a key'],
    ['metadata[order]:"a"', 'an unquoted metadata key'],
    ['metadata["order":"a"', 'an unclosed metadata key'],
    ['email["a"]:"b"', 'a key on another field'],
    ['(email:"a")', 'parentheses'],
    ['.email:"a"', 'a leading dot'],
  ])('%j (%s) is the public parse error', (query) => {
    expect(errorOf(() => parseQuery(query))).toEqual({
      status: 400,
      type: 'invalid_request_error',
      param: 'query',
      message: `${PARSE} Try using the format \`metadata["key"]:"value"\` to query for metadata or key:"value" to query for other fields.`,
    });
  });
});

describe('compileQuery', () => {
  test('values are parameters, never text of the statement', () => {
    const q = compiled(`email:"x'; DROP TABLE things; --" AND metadata["a'b"]:"c"`);
    expect(q.text).not.toContain('DROP');
    expect(q.text).not.toContain("a'b");
    expect(q.values).toEqual(["x'; DROP TABLE things; --", "a'b", 'c']);
  });

  test('each field type compiles to its comparison (plain, so indexes serve it)', () => {
    expect(compiled('email:"A@B.C"')).toMatchObject({ text: '(email ILIKE $1::text)', values: ['A@B.C'] });
    expect(compiled('email:"a_b%"').values).toEqual(['a\\_b\\%']);
    expect(compiled('email~"amy"')).toMatchObject({ text: '(email ILIKE $1::text)', values: ['%amy%'] });
    expect(compiled('status:active')).toMatchObject({ text: '(status = $1::text)', values: ['active'] });
    expect(compiled('created>=17')).toMatchObject({ text: '(created >= $1::numeric)', values: ['17'] });
    expect(compiled('created:"17"').text).toBe('(created = $1::numeric)');
    expect(compiled('metadata["k"]:"v"')).toMatchObject({ text: '(metadata @> jsonb_build_object($1::text, $2::text))', values: ['k', 'v'] });
    expect(compiled('card.last4:"4242"').text).toBe("((details->>'last4') ILIKE $1::text)");
  });

  test('null, negation (NULL-safe: no value is no match, so its negation matches), OR', () => {
    expect(compiled('email:null').text).toBe('(email IS NULL)');
    expect(compiled('-email:null').text).toBe('((email IS NULL) IS NOT TRUE)');
    expect(compiled('metadata["k"]:null')).toMatchObject({ text: '((metadata ->> $1::text) IS NULL)', values: ['k'] });
    expect(compiled('-status:x OR created<5').text).toBe('((status = $1::text) IS NOT TRUE OR created < $2::numeric)');
  });

  test("`~` matches `%`, `_` and `\\` as themselves, and needs 3 characters (counted as characters)", () => {
    expect(compiled('email~"5%_\\\\x"').values).toEqual(['%5\\%\\_\\\\x%']);
    expect(compiled('email~"ééé"').values).toEqual(['%ééé%']);
    expect(errorOf(() => compiled('email~"am"'))).toEqual({
      status: 400,
      type: 'invalid_request_error',
      param: 'query',
      message: `${PARSE} Substring matching (\`~\`) on \`email\` needs a value of at least 3 characters.`,
    });
  });

  test('an unknown field is the public 400 naming the resource and its query fields', () => {
    for (const query of ['foo:"bar"', 'metadata["k"]:"v" AND description:"x"', 'created.x:1', '__proto__:1', 'constructor:1']) {
      const field = /(?:AND )?([\w.]+):/.exec(query.replace('metadata["k"]:"v" AND ', ''))![1];
      expect(errorOf(() => compiled(query))).toEqual({
        status: 400,
        type: 'invalid_request_error',
        param: 'query',
        message: `Field \`${field}\` is an unsupported search field for resource \`things\`. See http://stripe.com/docs/search#query-fields-for-things for a list of supported fields.`,
      });
    }
    // metadata is a field only where the resource declares it.
    const noMetadata: SearchResource = { name: 'payment_intents', fields: { created: THINGS.fields.created } };
    expect(errorOf(() => compileQuery(parseQuery('metadata["k"]:"v"'), noMetadata)).message).toBe(
      'Field `metadata` is an unsupported search field for resource `payment_intents`. See http://stripe.com/docs/search#query-fields-for-payment-intents for a list of supported fields.',
    );
  });

  test.each([
    ['email>"a"', 'email', '>'],
    ['email<="a"', 'email', '<='],
    ['status~"act"', 'status', '~'],
    ['status>1', 'status', '>'],
    ['created~"123"', 'created', '~'],
    ['metadata["k"]~"abc"', 'metadata', '~'],
    ['metadata["k"]>1', 'metadata', '>'],
    ['email>null', 'email', '>'],
  ])('%j: an operator the field does not support is the 400', (query, field, op) => {
    expect(errorOf(() => compiled(query))).toEqual({
      status: 400,
      type: 'invalid_request_error',
      param: 'query',
      message: `Field \`${field}\` does not support the \`${op}\` operator in a search for resource \`things\`.`,
    });
  });

  test.each(['created>abc', 'created:"1e5"', 'created<0x10', 'created>=1.', 'created>"  1"'])('%j: a numeric field takes numbers only', (query) => {
    expect(errorOf(() => compiled(query))).toMatchObject({ status: 400, param: 'query', message: expect.stringMatching(/^We were unable to parse your search query\. `created` is a numeric field: its value must be a number/) });
  });

  test('negative and decimal numbers are numbers', () => {
    expect(compiled('created>-5').values).toEqual(['-5']);
    expect(compiled('created<=1.5').values).toEqual(['1.5']);
  });
});

describe('searchSql', () => {
  /** A database of rows `seq` 1…n (newest: n), every one matching; records each statement. */
  function fakeDb(n: number) {
    const statements: Sql[] = [];
    const db: SqlClient = {
      inTransaction: false,
      transaction: (work) => work(db),
      transactionEndingWith: async (work) => (await work(db)).result,
      query: async <R,>(statement: Sql) => {
        statements.push(statement);
        if (statement.text.startsWith('SELECT count(*)')) return [{ n }] as R[];
        const lt = /seq < \$(\d+)/.exec(statement.text);
        const below = lt ? Number(statement.values[Number(lt[1]) - 1]) : n + 1;
        const limit = statement.values[statement.values.length - 1] as number;
        const rows = [];
        for (let s = below - 1; s >= 1 && rows.length < limit; s--) rows.push({ seq: BigInt(s), id: `thing_${s}` });
        return rows as R[];
      },
    };
    return { db, statements };
  }
  // A sealer as deps.encryption is one: what it didn't seal, or what was altered after, doesn't open.
  const mac = (text: string) => createHmac('sha256', 'test').update(text).digest('hex');
  const sealer = {
    seal: async (s: string) => `${Buffer.from(s).toString('hex')}.${mac(s)}`,
    open: async (s: string) => {
      const [hex, tag] = s.split('.');
      const text = Buffer.from(hex ?? '', 'hex').toString();
      if (tag !== mac(text)) throw new Error('not sealed here');
      return text;
    },
  };
  const rows = { select: raw('SELECT id, seq FROM things'), where: [sql`account_id = ${'acct_1'}`] };
  const search = (db: SqlClient, params: { query: string; limit?: number; page?: string; expand?: string[] }, scope = 'acct_1') =>
    searchSql<{ seq: bigint; id: string }>({ params, url: '/v1/things/search', resource: THINGS, rows, db, sealer, scope, serialize: (r) => r.id });

  test('pages newest first through next_page until has_more is false; the owner filter comes first', async () => {
    const { db, statements } = fakeDb(5);
    const first = await search(db, { query: 'created>0', limit: 2 });
    expect(first).toMatchObject({ object: 'search_result', data: ['thing_5', 'thing_4'], has_more: true, url: '/v1/things/search' });
    expect(first).not.toHaveProperty('total_count');
    expect(statements[0].text).toBe('SELECT id, seq FROM things WHERE account_id = $1 AND (created > $2::numeric) ORDER BY seq DESC LIMIT $3');
    // Sent unprepared: its text varies with the query.
    expect(statements[0].unnamed).toBe(true);
    const second = await search(db, { query: 'created>0', limit: 2, page: first.next_page! });
    expect(second).toMatchObject({ data: ['thing_3', 'thing_2'], has_more: true });
    const third = await search(db, { query: 'created>0', limit: 2, page: second.next_page! });
    expect(third).toMatchObject({ data: ['thing_1'], has_more: false, next_page: null });
  });

  test('the token is URL-safe and says nothing in the clear', async () => {
    const { db } = fakeDb(3);
    const { next_page } = await search(db, { query: 'created>0', limit: 1 });
    expect(next_page).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  test('expand[]=total_count counts the matches', async () => {
    const { db, statements } = fakeDb(7);
    const result = await search(db, { query: 'created>0', limit: 2, expand: ['total_count'] });
    expect(result.total_count).toBe(7);
    expect(statements[1].text).toBe(
      'SELECT count(*)::int AS n FROM (SELECT id, seq FROM things WHERE account_id = $1 AND (created > $2::numeric) LIMIT $3) matched',
    );
  });

  test('a tampered token, another query\'s, another account\'s or garbage is the 400 on page', async () => {
    const { db } = fakeDb(5);
    const { next_page } = await search(db, { query: 'created>0', limit: 1 });
    const [hex, tag] = Buffer.from(next_page!, 'base64url').toString().split('.');
    // The position moved, the seal kept: it no longer opens.
    const moved = JSON.stringify({ ...JSON.parse(Buffer.from(hex, 'hex').toString()), s: '99' });
    const forged = Buffer.from(`${Buffer.from(moved).toString('hex')}.${tag}`).toString('base64url');
    const open = Buffer.from(JSON.stringify({ s: '3' })).toString('base64url');
    const cases: [string, string, string][] = [
      ['created>0', next_page!.slice(0, 20), 'acct_1'],
      ['created>0', open, 'acct_1'],
      ['created>0', forged, 'acct_1'],
      ['created>1', next_page!, 'acct_1'],
      ['created>0', next_page!, 'acct_2'],
      ['created>0', '', 'acct_1'],
      ['created>0', '!!!', 'acct_1'],
    ];
    for (const [query, page, scope] of cases) {
      await expect(search(db, { query, page }, scope)).rejects.toMatchObject({
        status: 400,
        type: 'invalid_request_error',
        param: 'page',
        message: 'Invalid page: it must be the `next_page` of an earlier search with the same query.',
      });
    }
  });

  test('a bad query is refused before any statement', async () => {
    const { db, statements } = fakeDb(1);
    await expect(search(db, { query: 'nope:1' })).rejects.toMatchObject({ status: 400, param: 'query' });
    expect(statements).toEqual([]);
  });
});
