import type { PrismaClient } from '../lib/prisma';

// Hosted links and session secrets are single-use and short-lived, but a row is written for each
// one issued (a verification session's retrieve issues a fresh url each time, and clients poll).
// Expired rows are kept a week, so an old link still says "expired" (or goes to refresh_url),
// then deleted.

export const EXPIRED_LINK_RETENTION_SECONDS = 7 * 86400;

export interface PrunedLinks {
  accountLinks: number;
  accountSessions: number;
  identityLinks: number;
  loginLinks: number;
}

/** Deletes account links, account sessions, verification links and login links expired over a week ago. */
export async function pruneExpiredLinks(prisma: PrismaClient, now: number): Promise<PrunedLinks> {
  const before = now - EXPIRED_LINK_RETENTION_SECONDS;
  const [accountLinks, accountSessions, identityLinks, loginLinks] = await Promise.all([
    prisma.accountLink.deleteMany({ where: { expiresAt: { lt: before } } }),
    prisma.accountSession.deleteMany({ where: { expiresAt: { lt: before } } }),
    prisma.identityVerificationLink.deleteMany({ where: { expiresAt: { lt: before } } }),
    prisma.loginLink.deleteMany({ where: { expiresAt: { lt: before } } }),
  ]);
  return { accountLinks: accountLinks.count, accountSessions: accountSessions.count, identityLinks: identityLinks.count, loginLinks: loginLinks.count };
}
