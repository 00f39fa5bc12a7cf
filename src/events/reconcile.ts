import type { PrismaClient } from '../lib/prisma';
import type { JobAdder } from '../lib/queue';
import { handOffEvents, queueDeliveries } from './jobs';

// Rebuilds every job Redis should have from database state: events not yet fanned out, and
// pending deliveries that are due and not held by a worker. Job ids make a second run, or a run
// racing the relay, add nothing.

const BATCH = 1000;

export interface ReconcileResult {
  events: number;
  deliveries: number;
}

export async function reconcile(prisma: PrismaClient, queues: JobAdder): Promise<ReconcileResult> {
  let events = 0;
  let afterSeq = -1n;
  for (;;) {
    const batch = await prisma.event.findMany({
      where: { fannedOutAt: null, seq: { gt: afterSeq } },
      orderBy: { seq: 'asc' },
      take: BATCH,
      select: { id: true, seq: true },
    });
    if (batch.length === 0) break;
    await handOffEvents(queues, batch.map((e) => e.id));
    events += batch.length;
    afterSeq = batch[batch.length - 1].seq;
    if (batch.length < BATCH) break;
  }

  let deliveries = 0;
  let afterId = '';
  for (;;) {
    const due = await prisma.$queryRaw<{ id: string; attempts: number }[]>`
      SELECT id, attempts FROM webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= CURRENT_TIMESTAMP
        AND (locked_until IS NULL OR locked_until < CURRENT_TIMESTAMP) AND id > ${afterId}
      ORDER BY id LIMIT ${BATCH}`;
    if (due.length === 0) break;
    await queueDeliveries(queues, due);
    deliveries += due.length;
    afterId = due[due.length - 1].id;
    if (due.length < BATCH) break;
  }
  return { events, deliveries };
}

/** Deletes events past the retention period (their deliveries and attempts go with them). */
export async function pruneEvents(prisma: PrismaClient, retentionDays: number, nowSeconds: number): Promise<number> {
  const { count } = await prisma.event.deleteMany({ where: { created: { lt: nowSeconds - retentionDays * 86400 } } });
  return count;
}
