import { HeldWrites, isNotApplied, oneStatement, readsItsWrites, writeThrough, type Write } from '../../src/kernel/writes';
import { invalidRequest } from '../../src/kernel/errors';
import { raw, sql, type SqlClient } from '../../src/lib/sql';

const plain = (table: string, value: string): Write => ({ sql: sql`INSERT INTO ${raw(table)} VALUES (${value}) RETURNING 1` });
const required = (value: string): Write => ({ sql: sql`UPDATE slots SET n = n + 1 WHERE id = ${value} RETURNING 1`, orElse: () => invalidRequest('full') });

describe('oneStatement', () => {
  test('plain writes in their order, then the claim, then the writes that must change a row (their row locks are taken last)', () => {
    const statement = oneStatement([required('s'), plain('a', '1'), plain('b', '2')], sql`INSERT INTO claims VALUES (${'k'}) RETURNING 1`)!;
    const at = (text: string) => statement.text.indexOf(text);
    expect(at('INSERT INTO a')).toBeLessThan(at('INSERT INTO b'));
    expect(at('INSERT INTO b')).toBeLessThan(at('INSERT INTO claims'));
    expect(at('INSERT INTO claims')).toBeLessThan(at('UPDATE slots'));
    // Values numbered in the order the text uses them.
    expect(statement.values).toEqual(['1', '2', 'k', 's']);
    expect(statement.text).toContain('$1) RETURNING 1), w1 AS (INSERT INTO b VALUES ($2)');
    // Every CTE is read, in that order, and the check requires the claim and the required write.
    expect(statement.text).toMatch(
      /SELECT sandbank_assert\(\(SELECT count\(\*\) FROM w0\) >= 0 AND \(SELECT count\(\*\) FROM w1\) >= 0 AND EXISTS \(SELECT 1 FROM claim\) AND EXISTS \(SELECT 1 FROM w2\)\)$/,
    );
  });

  test('a claim alone, writes alone, or nothing at all', () => {
    expect(oneStatement([], sql`INSERT INTO claims VALUES (${'k'}) RETURNING 1`)!.text).toBe(
      'WITH claim AS (INSERT INTO claims VALUES ($1) RETURNING 1) SELECT sandbank_assert(EXISTS (SELECT 1 FROM claim))',
    );
    expect(oneStatement([plain('a', '1')])!.text).toBe('WITH w0 AS (INSERT INTO a VALUES ($1) RETURNING 1) SELECT sandbank_assert((SELECT count(*) FROM w0) >= 0)');
    expect(oneStatement([])).toBeUndefined();
  });
});

describe('readsItsWrites', () => {
  test('sends a request that reads back its writes the ordinary way when they are held', () => {
    const held = new HeldWrites();
    let thrown: unknown;
    try {
      readsItsWrites({ write: held.run });
    } catch (err) {
      thrown = err;
    }
    expect(isNotApplied(thrown)).toBe(true);
  });

  test('does nothing where writes are sent at once', () => {
    const db = { query: async () => [], inTransaction: true, transaction: async () => undefined } as unknown as SqlClient;
    expect(() => readsItsWrites({ write: writeThrough(db) })).not.toThrow();
  });
});
