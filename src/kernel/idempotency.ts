import { createHash, randomUUID } from 'node:crypto';
import type { PrismaClient } from '../lib/prisma';
import { Encryption } from '../lib/encryption';
import { ApiError, invalidRequest } from './errors';

// Idempotent POSTs. The SDKs send a key on every POST, so the common path (a new key) is one
// INSERT to claim the key and one UPDATE to store the result. Records live in PostgreSQL, scoped
// to the acting account, and expire after the configured TTL (24 hours or more).

export const MAX_KEY_LENGTH = 255;
/**
 * A running request refreshes its claim's heartbeat; a claim silent this long belongs to a request
 * that died with its process, and the key may be claimed again.
 */
const ABANDONED_AFTER_SECONDS = 60;
const HEARTBEAT_MS = 20_000;

export type Claim = { kind: 'claimed'; claimId: string } | { kind: 'replay'; status: number; body: string };

export function fingerprintOf(method: string, path: string, params: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${JSON.stringify(params)}`).digest('hex');
}

export function checkKey(key: string): void {
  if (key.length > MAX_KEY_LENGTH) {
    throw invalidRequest(`Idempotency keys can be at most ${MAX_KEY_LENGTH} characters long.`, 'idempotency_key_too_long', 'Idempotency-Key');
  }
}

export class IdempotencyStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly ttlHours: number,
    private readonly encryption: Encryption,
    /** How often a running request refreshes its claim (shorter in tests). */
    readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  /** Claims the key for this request, or returns the stored result to replay, or throws 409/400. */
  async claim(accountId: string, key: string, fingerprint: string): Promise<Claim> {
    const ttl = `${this.ttlHours} hours`;
    const abandoned = `${ABANDONED_AFTER_SECONDS} seconds`;
    const claimId = randomUUID();
    const claimed = await this.prisma.$queryRaw<{ key: string }[]>`
      INSERT INTO idempotency_records (account_id, key, fingerprint, claim_id, heartbeat_at)
      VALUES (${accountId}, ${key}, ${fingerprint}, ${claimId}, CURRENT_TIMESTAMP)
      ON CONFLICT (account_id, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, status = NULL, response_body = NULL,
            created_at = CURRENT_TIMESTAMP, completed_at = NULL,
            claim_id = EXCLUDED.claim_id, heartbeat_at = CURRENT_TIMESTAMP
        WHERE idempotency_records.created_at < CURRENT_TIMESTAMP - ${ttl}::interval
           OR (idempotency_records.completed_at IS NULL
               AND COALESCE(idempotency_records.heartbeat_at, idempotency_records.created_at) < CURRENT_TIMESTAMP - ${abandoned}::interval)
      RETURNING key`;
    if (claimed.length > 0) return { kind: 'claimed', claimId };

    const existing = await this.prisma.idempotencyRecord.findUnique({
      where: { accountId_key: { accountId, key } },
      select: { fingerprint: true, status: true, responseBody: true },
    });
    if (!existing) return this.claim(accountId, key, fingerprint); // pruned in between
    if (existing.fingerprint !== fingerprint) {
      throw new ApiError({
        status: 400,
        type: 'idempotency_error',
        message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
      });
    }
    if (existing.status === null || existing.responseBody === null) {
      throw new ApiError({
        status: 409,
        code: 'idempotency_key_in_use',
        message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
        headers: { 'Stripe-Should-Retry': 'true' },
      });
    }
    const body = Encryption.isSealed(existing.responseBody) ? await this.encryption.open(existing.responseBody) : existing.responseBody;
    return { kind: 'replay', status: existing.status, body };
  }

  /** Keeps a running request's claim from looking abandoned. */
  async heartbeat(accountId: string, key: string, claimId: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE idempotency_records SET heartbeat_at = CURRENT_TIMESTAMP
      WHERE account_id = ${accountId} AND key = ${key} AND claim_id = ${claimId} AND completed_at IS NULL`;
  }

  /**
   * Stores the claim's result; false when the claim was taken over meanwhile (its request looked
   * abandoned), in which case the other request's result stands. `seal`: the body carries a
   * secret, so the stored copy is encrypted.
   */
  async complete(accountId: string, key: string, claimId: string, status: number, response: string, seal = false): Promise<boolean> {
    const body = seal ? await this.encryption.seal(response) : response;
    const updated = await this.prisma.$executeRaw`
      UPDATE idempotency_records SET status = ${status}, response_body = ${body}, completed_at = CURRENT_TIMESTAMP
      WHERE account_id = ${accountId} AND key = ${key} AND claim_id = ${claimId}`;
    return updated > 0;
  }

  /** Deletes records past the TTL; returns how many. */
  async prune(): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM idempotency_records WHERE created_at < CURRENT_TIMESTAMP - ${`${this.ttlHours} hours`}::interval`;
  }
}
