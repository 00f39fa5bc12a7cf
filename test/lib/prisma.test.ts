import { isDatabaseUnavailable } from '../../src/lib/prisma';

// What counts as PostgreSQL being away (an outage to wait out) rather than a wrong query.

test('a raw query refused while PostgreSQL starts up is an outage: its SQLSTATE rides in meta.code (P2010)', () => {
  const starting = { code: 'P2010', meta: { code: '57P03' }, message: 'Raw query failed. Code: `57P03`. Message: `the database system is not yet accepting connections`' };
  expect(isDatabaseUnavailable(starting)).toBe(true);
  expect(isDatabaseUnavailable({ message: 'the database system is not yet accepting connections' })).toBe(true);
  expect(isDatabaseUnavailable({ code: 'P2010', meta: { code: '08006' }, message: 'Raw query failed' })).toBe(true);
  expect(isDatabaseUnavailable(new Error('x', { cause: { code: '57P01' } }))).toBe(true);
});

test('a wrong query is not an outage', () => {
  expect(isDatabaseUnavailable({ code: 'P2010', meta: { code: '42P01' }, message: 'Raw query failed. Code: `42P01`. Message: `relation "nope" does not exist`' })).toBe(false);
  expect(isDatabaseUnavailable({ code: 'P2002', message: 'Unique constraint failed' })).toBe(false);
  expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
});
