import { Client } from 'pg';

// A request's PostgreSQL work as bench/pgcount.js counts it in the benchmark: round trips (every
// `pg` Client#query, Prisma's adapter's included) and commits of transactions that wrote.

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { kindOf } = require('../../bench/pgkinds.js') as { kindOf(text: string): 'begin' | 'commit' | 'rollback' | 'write' | 'read' };

export interface PostgresCounts {
  roundTrips: number;
  commits: number;
  rollbacks: number;
}

/** Counts what `run` (and anything else in this process meanwhile) asks of PostgreSQL. */
export async function countPostgres<T>(run: () => Promise<T>): Promise<{ result: T } & PostgresCounts> {
  const counts: PostgresCounts = { roundTrips: 0, commits: 0, rollbacks: 0 };
  const open = new WeakMap<object, { wrote: boolean }>();
  const query = Client.prototype.query;
  Client.prototype.query = function counted(this: object, config: unknown, ...rest: unknown[]) {
    counts.roundTrips++;
    const text = typeof config === 'string' ? config : typeof (config as { text?: unknown })?.text === 'string' ? (config as { text: string }).text : '';
    const kind = kindOf(text);
    const tx = open.get(this);
    if (kind === 'begin') open.set(this, { wrote: false });
    else if (kind === 'commit' || kind === 'rollback') {
      if (kind === 'commit' && tx?.wrote) counts.commits++;
      if (kind === 'rollback') counts.rollbacks++;
      open.delete(this);
    } else if (kind === 'write') {
      if (tx) tx.wrote = true;
      else counts.commits++;
    }
    return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof query;
  try {
    const result = await run();
    return { result, ...counts };
  } finally {
    Client.prototype.query = query;
  }
}
