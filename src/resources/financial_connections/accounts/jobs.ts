import { defineQueue } from '../../../lib/queue';

// The delayed steps of linked accounts. A job only says "look at this row now": the refresh or
// account row says whether anything is left to do, so a lost, repeated or early job is harmless
// and the reconciler (reconcileFinancialConnectionsJobs) re-adds whatever the database says is due.

export type FinancialConnectionsJob =
  /** Finish a pending refresh (`id`: the refresh). */
  | { step: 'refresh'; id: string }
  /** Start a subscribed account's scheduled transaction refresh (`id`: the linked account). */
  | { step: 'subscription'; id: string }
  /** Make an Inactive Accounts account inactive (`id`: the linked account). */
  | { step: 'deactivate'; id: string };

export const financialConnectionsQueue = defineQueue<FinancialConnectionsJob>('financial-connections', { concurrency: 8 });

/** Job ids name the row and the moment it is due for, so adding one twice is harmless. */
export const refreshJobId = (refreshId: string): string => `refresh-${refreshId}`;
export const subscriptionJobId = (accountId: string, dueAt: Date): string => `subscription-${accountId}-${dueAt.getTime()}`;
export const deactivationJobId = (accountId: string, links: number): string => `deactivate-${accountId}-${links}`;
