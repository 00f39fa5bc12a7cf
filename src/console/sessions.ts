import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../kernel/route';
import { Encryption } from '../lib/encryption';

// Console sessions. The browser holds a random token in an HttpOnly, SameSite=Strict cookie scoped
// to /console; the database holds only its SHA-256, the key sealed (so the console can call the
// API as it: src/console/api.ts), the CSRF token of the session's forms and the connected account
// it views as. A session ends after CONSOLE_SESSION_IDLE_SECONDS without a request, after
// CONSOLE_SESSION_MAX_SECONDS in any case, or at sign-out.

export const COOKIE = 'sandbank_console';
export const CONSOLE_PATH = '/console';

/** A session's last request is written at most this often (a page view is a read, not a write). */
const TOUCH_EVERY_MS = 60_000;

export interface Session {
  readonly tokenHash: string;
  /** The platform account of the key. */
  readonly accountId: string;
  /** The key, opened for this request only; never rendered, logged or put in a URL. */
  readonly key: string;
  readonly keyHint: string;
  readonly csrfToken: string;
  /** The connected account the console views as (its Stripe-Account), or null for the key's own. */
  readonly stripeAccount: string | null;
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');

/** The value of one cookie of a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Secure when the console is reached over https (PUBLIC_URL), so the cookie never travels in clear there. */
function cookieAttributes(deps: Deps): string {
  return `Path=${CONSOLE_PATH}; HttpOnly; SameSite=Strict${deps.config.publicUrl.startsWith('https:') ? '; Secure' : ''}`;
}

export const sessionCookie = (deps: Deps, token: string): string => `${COOKIE}=${token}; ${cookieAttributes(deps)}; Max-Age=${deps.config.consoleSessionMaxSeconds}`;
export const clearedCookie = (deps: Deps): string => `${COOKIE}=; ${cookieAttributes(deps)}; Max-Age=0`;

/** Whether a posted token is the expected one, compared in constant time. */
export function tokenMatches(posted: unknown, expected: string | undefined): boolean {
  if (typeof posted !== 'string' || expected === undefined) return false;
  const a = Buffer.from(posted);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A posted CSRF token against the session's. */
export const csrfMatches = (session: Session, posted: unknown): boolean => tokenMatches(posted, session.csrfToken);

/** Deletes the sessions that ended (past their end, or idle too long) whoever's they were; answers how many. */
export async function pruneConsoleSessions(prisma: Deps['prisma'], config: Pick<Deps['config'], 'consoleSessionIdleSeconds'>, nowMs: number): Promise<number> {
  const { count } = await prisma.consoleSession.deleteMany({
    where: { OR: [{ expiresAt: { lte: new Date(nowMs) } }, { lastSeenAt: { lte: new Date(nowMs - config.consoleSessionIdleSeconds * 1000) } }] },
  });
  return count;
}

export class SessionStore {
  constructor(private readonly deps: Deps) {}

  /** A new session for a key the API's authenticator accepted; answers the cookie's token. */
  async create(key: string, accountId: string, keyHint: string): Promise<string> {
    const { prisma, encryption, clock, config } = this.deps;
    const token = newToken();
    const sealedKey = await encryption.seal(key);
    const now = new Date(clock.nowMs());
    // The account's ended sessions go as a new one starts (an index on expires_at finds them).
    await prisma.consoleSession.deleteMany({ where: { accountId, expiresAt: { lte: now } } });
    await prisma.consoleSession.create({
      data: {
        tokenHash: hashToken(token),
        accountId,
        sealedKey,
        keyId: Encryption.keyIdOf(sealedKey),
        keyHint,
        csrfToken: newToken(),
        createdAt: now,
        lastSeenAt: now,
        expiresAt: new Date(now.getTime() + config.consoleSessionMaxSeconds * 1000),
      },
    });
    return token;
  }

  /** The live session of a `Cookie` header, or null (none, unknown, idle too long, or past its end: then deleted). */
  async find(cookie: string | undefined): Promise<Session | null> {
    const token = cookieValue(cookie, COOKIE);
    if (!token) return null;
    const { prisma, encryption, clock, config } = this.deps;
    const tokenHash = hashToken(token);
    const row = await prisma.consoleSession.findUnique({ where: { tokenHash } });
    if (!row) return null;
    const now = clock.nowMs();
    if (row.expiresAt.getTime() <= now || row.lastSeenAt.getTime() + config.consoleSessionIdleSeconds * 1000 <= now) {
      await prisma.consoleSession.deleteMany({ where: { tokenHash } });
      return null;
    }
    if (now - row.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
      await prisma.consoleSession.updateMany({ where: { tokenHash }, data: { lastSeenAt: new Date(now) } });
    }
    return {
      tokenHash,
      accountId: row.accountId,
      key: await encryption.open(row.sealedKey),
      keyHint: row.keyHint,
      csrfToken: row.csrfToken,
      stripeAccount: row.stripeAccount,
    };
  }

  async viewAs(session: Session, stripeAccount: string | null): Promise<void> {
    await this.deps.prisma.consoleSession.updateMany({ where: { tokenHash: session.tokenHash }, data: { stripeAccount } });
  }

  async delete(session: Session): Promise<void> {
    await this.deps.prisma.consoleSession.deleteMany({ where: { tokenHash: session.tokenHash } });
  }
}
