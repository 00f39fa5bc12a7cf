import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { PrismaClient } from '../generated/prisma/client';
import type { Logger } from './logger';
import { causeOf, healingLog } from './healingLog';

export type { PrismaClient };
export type Tx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

/** How long a query may wait for a pooled connection before it fails (and the request gets a 503). */
const CONNECT_TIMEOUT_MS = 15_000;

/**
 * The pool is ours, not the adapter's, so every client gets an `error` listener: a PostgreSQL
 * restart ends idle connections with an error event, which unhandled would crash the process.
 * The pool drops such clients and opens new ones once the server is back.
 */
export function createDatabase(databaseUrl: string, poolSize: number, logger?: Logger): { prisma: PrismaClient; pool: Pool } {
  const pool = new Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  const report = (err: Error) => logger && healingLog(logger).warn(`postgresql connection error: ${causeOf(err)}`, { err: err.message }, 'postgresql connection error');
  pool.on('error', report);
  pool.on('connect', (client) => client.on('error', report));
  // Prisma ends the pool on $disconnect; the hot paths (src/lib/sql.ts) share it meanwhile.
  return { prisma: new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) }), pool };
}

export const createPrisma = (databaseUrl: string, poolSize: number, logger?: Logger): PrismaClient => createDatabase(databaseUrl, poolSize, logger).prisma;

// PostgreSQL's "operator intervention" (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot
// connect now) and "connection exception" (08…) classes, and Prisma's unreachable/closed/pool codes.
const UNAVAILABLE_SQLSTATE = /^(57P0[123]|08...)$/;
const UNAVAILABLE_PRISMA = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
const UNAVAILABLE_MESSAGE =
  /Can't reach database server|Server has closed the connection|Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|ECONNREFUSED|ECONNRESET|database system is (shutting down|starting up|in recovery mode|not yet accepting connections)|terminating connection due to administrator command/;

/**
 * Whether `err` says PostgreSQL is away (restarting, stopped, unreachable) rather than that the
 * query was wrong: such a failure is an outage to wait out, not a defect to report.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (typeof e.code === 'string' && (UNAVAILABLE_PRISMA.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code))) return true;
    // A raw query's failure (P2010) carries PostgreSQL's SQLSTATE in `meta.code`.
    if (typeof e.meta?.code === 'string' && UNAVAILABLE_SQLSTATE.test(e.meta.code)) return true;
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/**
 * Holds a lock on `name` until the transaction ends: for a uniqueness no index can state, such
 * as one among live rows only (an account's coupon ids, its active promotion codes).
 */
export async function lockName(tx: Pick<Tx, '$executeRaw'>, name: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`;
}
