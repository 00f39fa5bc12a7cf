import { PoolSql, sql, type SqlClient } from '../../src/lib/sql';
import { startTestApp, type TestApp } from '../helpers/app';

// `transactionEndingWith`: the one-statement path's transaction, opened only by a read.

let t: TestApp;
let db: PoolSql;
const run = Date.now().toString(36);
beforeAll(async () => {
  t = await startTestApp();
  db = t.runtime.sql as PoolSql;
  await db.query(sql`CREATE TABLE IF NOT EXISTS sql_test_ending_with (name TEXT PRIMARY KEY, xact TEXT NOT NULL)`);
});
afterAll(() => t.close());

const insert = (name: string) => sql`INSERT INTO sql_test_ending_with (name, xact) VALUES (${name}, txid_current()::text) RETURNING name`;
const rows = async (name: string) => db.query<{ name: string; xact: string }>(sql`SELECT name, xact FROM sql_test_ending_with WHERE name LIKE ${`${name}%`} ORDER BY name`);

test('work that reads and writes, and its last statement, run in one transaction', async () => {
  const name = `${run}-one`;
  const result = await db.transactionEndingWith(async (tx: SqlClient) => {
    await tx.query(insert(`${name}-a`));
    return { result: 'done', last: insert(`${name}-b`) };
  });
  expect(result).toBe('done');
  const written = await rows(name);
  expect(written.map((r) => r.name)).toEqual([`${name}-a`, `${name}-b`]);
  expect(written[0].xact).toBe(written[1].xact);
});

test('work that sent nothing: its last statement runs alone and commits', async () => {
  const name = `${run}-alone`;
  expect(await db.transactionEndingWith(async () => ({ result: 1, last: insert(name) }))).toBe(1);
  expect((await rows(name)).map((r) => r.name)).toEqual([name]);
  // And nothing at all to send is fine.
  expect(await db.transactionEndingWith(async () => ({ result: 2 }))).toBe(2);
});

test('a last statement that fails rolls back what the work wrote', async () => {
  const name = `${run}-fails`;
  const failing = db.transactionEndingWith(async (tx) => {
    await tx.query(insert(`${name}-a`));
    // The primary key is taken: the statement fails.
    return { result: 0, last: sql`INSERT INTO sql_test_ending_with (name, xact) VALUES (${`${name}-a`}, 'x') RETURNING name` };
  });
  await expect(failing).rejects.toThrow(/duplicate key/);
  expect(await rows(name)).toEqual([]);
});

test('work that throws after a write leaves nothing, and its connection goes back to the pool', async () => {
  const name = `${run}-throws`;
  const pool = db.pool;
  const idleBefore = pool.totalCount - pool.idleCount;
  await expect(
    db.transactionEndingWith(async (tx) => {
      await tx.query(insert(name));
      throw new Error('refused');
    }),
  ).rejects.toThrow('refused');
  expect(await rows(name)).toEqual([]);
  expect(pool.totalCount - pool.idleCount).toBe(idleBefore);
});
