import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { PrismaClient } from '../lib/prisma';
import type { Clock } from '../lib/clock';
import { unixSeconds } from '../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../lib/ids';
import type { AuthMode } from '../config';
import type { Notifications } from '../lib/pgNotify';
import { ApiError, ECHO_LIMIT } from './errors';
import { isApiVersion } from './versions';

/** Who is calling: the platform that owns the key, and the account it acts as (itself, or a connected account). */
export interface Caller {
  readonly platformAccountId: string;
  readonly accountId: string;
  readonly keyHint: string;
  /** The platform's default version: the one its first request pinned, else DEFAULT_API_VERSION. */
  readonly defaultApiVersion: string;
  /**
   * A publishable key (`pk_test_…`): it reaches only the operations that declare `publishable`
   * (what Stripe.js calls), and a `publishable: 'client_secret'` one only with the object's
   * client secret (see `requireClientSecret`).
   */
  readonly publishable: boolean;
}

/** Whose key it is, before `Stripe-Account` is looked at. */
export type KeyIdentity = Omit<Caller, 'accountId'>;

interface KeyOwner {
  accountId: string;
  /** The version the platform's first request pinned; null until one sends Stripe-Version. */
  pinnedApiVersion: string | null;
  /** The masked key, made once per cached key. */
  hint?: string;
}

const KEY_PATTERN = /^(sk|rk|pk)_(test|live)_[A-Za-z0-9_]{1,240}$/;
const PUBLISHABLE_PREFIX = 'pk_test_';
const CACHE_LIMIT = 10_000;

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** `sk_test_****…abcd`: the prefix kept, the middle masked, the last four shown (a publishable key too: logs show no key whole). */
export function maskKey(key: string): string {
  const prefix = /^(sk|rk|pk)_(test|live)_/.exec(key)?.[0] ?? '';
  const rest = key.slice(prefix.length);
  if (rest.length <= 4) return prefix + '*'.repeat(rest.length);
  return prefix + '*'.repeat(rest.length - 4) + rest.slice(-4);
}

/** A new secret key, or a restricted one (`rk_test_…`; its permissions are not modelled: it can do what a secret key can). */
export function generateKey(restricted = false): string {
  return `${restricted ? 'rk' : 'sk'}_test_${randomBase62(99)}`;
}

/** A new publishable key: random on its own, so publishing it tells nothing of the secret key it goes with. */
export function generatePublishableKey(): string {
  return `${PUBLISHABLE_PREFIX}${randomBase62(99)}`;
}

/** Whether a (well-formed) key is a publishable one. */
export const isPublishableKey = (key: string): boolean => key.startsWith('pk_');

const unauthorized = (message: string): ApiError => new ApiError({ status: 401, message, headers: { 'WWW-Authenticate': 'Bearer realm="Sandbank"' } });

const noKey = (): ApiError =>
  unauthorized(
    "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
  );

/** The public answer to a publishable key on an operation Stripe.js doesn't call. */
export const secretKeyRequired = (): ApiError =>
  new ApiError({
    status: 401,
    code: 'secret_key_required',
    message:
      'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.',
    headers: { 'WWW-Authenticate': 'Bearer realm="Sandbank"' },
  });

/** A malformed key may be as long as a header: shown masked, and cut in the middle past ECHO_LIMIT (its end stays). */
const invalidKey = (key: string): ApiError =>
  unauthorized(`Invalid API Key provided: ${maskKey(key.length > ECHO_LIMIT ? `${key.slice(0, ECHO_LIMIT - 4)}${key.slice(-4)}` : key)}`);

/** Reads the key from `Bearer <key>` or HTTP Basic with the key as user name. */
export function extractKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const space = header.indexOf(' ');
  const scheme = (space === -1 ? header : header.slice(0, space)).toLowerCase();
  const value = space === -1 ? '' : header.slice(space + 1).trim();
  if (scheme === 'bearer') return value;
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon === -1 ? decoded : decoded.slice(0, colon);
  }
  return value || header;
}

/** Bounded map whose entries expire; when full it forgets the oldest entry first. */
class ExpiringCache<V> {
  private readonly map = new Map<string, { value: V; expiresAtMs: number }>();
  constructor(
    private readonly limit: number,
    private readonly ttlMs: number,
    private readonly clock: Clock,
  ) {}
  get(key: string): V | undefined {
    const entry = this.map.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= this.clock.nowMs()) {
      this.map.delete(key);
      return undefined;
    }
    return entry.value;
  }
  /** Bumped by every delete and clear, so a value read before one is not stored after it. */
  generation = 0;
  set(key: string, value: V, readAt = this.generation): void {
    if (this.ttlMs <= 0 || readAt !== this.generation) return;
    if (this.map.size >= this.limit) this.map.delete(this.map.keys().next().value as string);
    this.map.set(key, { value, expiresAtMs: this.clock.nowMs() + this.ttlMs });
  }
  delete(key: string): void {
    this.generation++;
    this.map.delete(key);
  }
  clear(): void {
    this.generation++;
    this.map.clear();
  }
}

/**
 * Marks a request made in-process by a viewer of the API (the console, through its loopback
 * server) rather than by an integration: its Stripe-Version renders the answer but never pins the
 * platform's default version, as a dashboard's version picker pins nothing. A symbol on the request
 * object, so no client can set it.
 */
export const VIEWER_REQUEST = Symbol('sandbank.viewerRequest');

/** The channel a deleted connected account is announced on (see the accounts_revoked trigger). */
export const ACCOUNT_REVOKED_CHANNEL = 'account_revoked';
/** How long a platform's access to a connected account is trusted without asking again. */
const CONNECTED_TTL_MS = 60_000;

export class Authenticator {
  /** Known keys; an entry lives API_KEY_CACHE_SECONDS, so a revoked key stops working within that. */
  private readonly keys: ExpiringCache<KeyOwner>;
  /**
   * Connected accounts each platform may act as, by account id: kept only while the deletion
   * notifications are heard (`notifications.live`), so a deleted account is refused at once.
   */
  private readonly connected: ExpiringCache<string>;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly mode: AuthMode,
    private readonly clock: Clock,
    cacheSeconds: number,
    /** DEFAULT_API_VERSION: the version of platforms that haven't pinned one. */
    private readonly defaultApiVersion: string,
    private readonly notifications?: Notifications,
  ) {
    this.keys = new ExpiringCache(CACHE_LIMIT, cacheSeconds * 1000, clock);
    this.connected = new ExpiringCache(CACHE_LIMIT, notifications ? CONNECTED_TTL_MS : 0, clock);
    notifications?.listen(ACCOUNT_REVOKED_CHANNEL, (accountId) => this.connected.delete(accountId));
    notifications?.onReset(() => this.connected.clear());
  }

  /**
   * The key's owner (a cached lookup for a known key): enough to count the request before any
   * other work. `pin`: whether the request's Stripe-Version may pin an unpinned platform's default.
   */
  async identify(headers: IncomingHttpHeaders, pin = true): Promise<KeyIdentity> {
    const key = extractKey(headers.authorization);
    if (key === undefined || key === '') throw noKey();
    if (!KEY_PATTERN.test(key)) throw invalidKey(key);
    if (key.startsWith('sk_live_') || key.startsWith('rk_live_') || key.startsWith('pk_live_')) {
      throw unauthorized(
        `Live mode is disabled: Sandbank only runs in test mode, so live keys such as ${maskKey(key)} are refused. Use a test key (${key.slice(0, 3)}test_…).`,
      );
    }
    const owner = await this.ownerOf(key);
    if (owner.pinnedApiVersion === null && pin) await this.pinApiVersion(owner, headers['stripe-version']);
    return {
      platformAccountId: owner.accountId,
      defaultApiVersion: owner.pinnedApiVersion ?? this.defaultApiVersion,
      keyHint: (owner.hint ??= maskKey(key)),
      publishable: isPublishableKey(key),
    };
  }

  /** The account the identified key acts as: its own, or the connected account `Stripe-Account` names. */
  async actingAs(identity: KeyIdentity, headers: IncomingHttpHeaders, read = false): Promise<Caller> {
    const { platformAccountId, keyHint, defaultApiVersion, publishable } = identity;
    const requested = headers['stripe-account'];
    const target = Array.isArray(requested) ? requested[0] : requested;
    // A publishable key names a connected account as a secret key does (Stripe.js's `stripeAccount`).
    if (!target || target === platformAccountId) return { platformAccountId, accountId: platformAccountId, keyHint, defaultApiVersion, publishable };
    await this.checkConnectedAccount(platformAccountId, target, keyHint, read);
    return { platformAccountId, accountId: target, keyHint, defaultApiVersion, publishable };
  }

  /**
   * The first request that names a known version pins the platform's default to it, as the
   * public API does with an account's first request. Only unpinned owners get here, so once
   * pinned (and cached) a key costs nothing more; a concurrent pin by another request or
   * process wins, and this one takes its value.
   */
  private async pinApiVersion(owner: KeyOwner, header: string | string[] | undefined): Promise<void> {
    const requested = (Array.isArray(header) ? header[0] : header)?.split(';')[0].trim();
    if (requested === undefined || !isApiVersion(requested)) return;
    const pinned = await this.prisma.account.updateMany({
      where: { id: owner.accountId, defaultApiVersion: null },
      data: { defaultApiVersion: requested },
    });
    owner.pinnedApiVersion =
      pinned.count === 1
        ? requested
        : ((await this.prisma.account.findUnique({ where: { id: owner.accountId }, select: { defaultApiVersion: true } }))?.defaultApiVersion ?? null);
  }

  /** Cached by the key itself, so a known key costs no hashing; only misses are hashed and looked up. */
  private async ownerOf(key: string): Promise<KeyOwner> {
    const cached = this.keys.get(key);
    if (cached) return cached;
    const hash = hashKey(key);
    const row = await this.prisma.apiKey.findUnique({
      where: { keyHash: hash },
      select: { accountId: true, account: { select: { defaultApiVersion: true } } },
    });
    let owner: KeyOwner | undefined = row ? { accountId: row.accountId, pinnedApiVersion: row.account.defaultApiVersion } : undefined;
    if (!owner) {
      // Open mode: a test key, secret or restricted, is its own account (live keys never get here);
      // `pk_test_X` is the publishable key of `sk_test_X`'s platform (its own cache entry: its own hint).
      if (this.mode !== 'open') throw invalidKey(key);
      if (isPublishableKey(key)) {
        const secret = await this.ownerOf(`sk_test_${key.slice(PUBLISHABLE_PREFIX.length)}`);
        owner = { accountId: secret.accountId, pinnedApiVersion: secret.pinnedApiVersion };
      } else {
        owner = await this.registerOpenKey(key, hash);
      }
    }
    this.keys.set(key, owner);
    return owner;
  }

  /** Open mode: a key's first use gives it a platform account of its own, kept across restarts. */
  private async registerOpenKey(key: string, hash: string): Promise<KeyOwner> {
    const account = await createPlatformAccount(this.prisma, this.clock, { keyHash: hash, hint: maskKey(key), origin: 'open' }).catch(
      async (err: unknown) => {
        // Two first requests with one key race; the loser reads the winner's account.
        const row = await this.prisma.apiKey.findUnique({ where: { keyHash: hash }, select: { accountId: true } });
        if (!row) throw err;
        return { id: row.accountId };
      },
    );
    return { accountId: account.id, pinnedApiVersion: null };
  }

  /**
   * One primary-key lookup. Reads may take it from the cache, kept while deletions are heard (a
   * deleted account is forgotten as its notification arrives, a millisecond or so after the
   * commit); writes always ask, so none can write under an account deleted a moment ago.
   */
  private async checkConnectedAccount(platformAccountId: string, accountId: string, keyHint: string, read: boolean): Promise<void> {
    if (read && this.connected.get(accountId) === platformAccountId) return;
    // Read before asking, so a deletion heard while the lookup runs can't be overwritten by it.
    const trusted = this.notifications?.live === true;
    const resets = this.connected.generation;
    const row = hasIdShape('acct', accountId)
      ? await this.prisma.account.findUnique({ where: { id: accountId, parentAccountId: platformAccountId }, select: { id: true } })
      : null;
    if (row && trusted) this.connected.set(accountId, platformAccountId, resets);
    if (!row) {
      throw new ApiError({
        status: 403,
        message: `The provided key '${keyHint}' does not have access to account '${accountId.slice(0, 100)}' (or that account does not exist). Application access may have been revoked.`,
        code: 'account_invalid',
      });
    }
  }
}

export interface PlatformKey {
  keyHash: string;
  hint: string;
  origin: 'open' | 'registered';
}

export async function createPlatformAccount(
  prisma: PrismaClient,
  clock: Clock,
  /** The account's keys (a secret key and its publishable key, say): made with it, in one commit. */
  key: PlatformKey | readonly PlatformKey[],
): Promise<{ id: string }> {
  const id = newId('acct', 16);
  // No version yet: the first request that sends Stripe-Version pins it.
  return prisma.account.create({ data: { id, created: unixSeconds(clock), apiKeys: { create: Array.isArray(key) ? [...key] : (key as PlatformKey) } }, select: { id: true } });
}
