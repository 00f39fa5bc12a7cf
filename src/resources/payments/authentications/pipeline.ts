import type { JobWorker, ProcessDeps, Reconcile } from '../../../kernel/route';
import { answerChallenge } from './service';
import { authenticationQueue, expiryJob, type AuthenticationJob } from './jobs';

// A challenge left unanswered past its `expires_at` fails its intent (the intent's target, as
// the page's "Fail authentication" does, with `expired`). Due times live in the database, so the
// reconciler re-adds what Redis lost.

const BATCH = 500;

/** Expires one challenge if it is still pending and due; answers the events written. */
export async function expireChallenge(deps: ProcessDeps, id: string): Promise<string[]> {
  return (await answerChallenge(deps, { id }, 'expired'))?.eventIds ?? [];
}

export const authenticationExpiryWorker: JobWorker<AuthenticationJob> = {
  queue: authenticationQueue,
  run: (deps, job) => expireChallenge(deps, job.id),
  failure: '3-D Secure challenge expiry failed',
  describe: (job) => ({ id: job.id }),
};

/** Re-adds the expiry of every pending challenge that is due (keyset pages, so a backlog is read in parts). */
export const reconcileAuthenticationExpiries: Reconcile = async ({ prisma, queues }, nowMs) => {
  const now = Math.floor(nowMs / 1000);
  let count = 0;
  let afterId = '';
  for (;;) {
    const rows = await prisma.paymentAuthentication.findMany({
      where: { status: 'pending', expiresAt: { lte: now }, id: { gt: afterId } },
      orderBy: { id: 'asc' },
      take: BATCH,
      select: { id: true, expiresAt: true },
    });
    if (rows.length === 0) break;
    await queues.add(authenticationQueue, rows.map((r) => expiryJob(r.id, r.expiresAt, nowMs)));
    count += rows.length;
    afterId = rows[rows.length - 1].id;
    if (rows.length < BATCH) break;
  }
  return { authenticationExpiries: count };
};
