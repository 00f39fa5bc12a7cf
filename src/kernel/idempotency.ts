import { createHash, randomUUID } from 'node:crypto';
import type { PrismaClient, Tx } from '../lib/prisma';
import { Encryption, SEALED_PREFIX } from '../lib/encryption';
import { raw, sql, type Sql, type SqlClient } from '../lib/sql';
import { ApiError, invalidRequest } from './errors';
import { answerJson } from './json';

// Idempotent POSTs. The SDKs send a key on every POST, so the common path (a new key) is one
// INSERT to claim the key and one UPDATE, in the operation's own transaction, to store the result:
// once the operation's changes are committed, so is its result, and a retry replays it whatever
// happened to the process after the commit. Records live in PostgreSQL, scoped to the acting
// account, and expire after the configured TTL (24 hours or more).

export const MAX_KEY_LENGTH = 255;
/**
 * A running request refreshes its claim's heartbeat; a claim silent this long belongs to a request
 * that died with its process, and the key may be claimed again. Taking over a live request's claim
 * can't run it twice either: its result is stored in its transaction only while the claim is still
 * its own, so it rolls back instead of committing.
 */
const ABANDONED_AFTER_SECONDS = 8;
const HEARTBEAT_MS = 2_000;

/** The claim was taken over while the request ran; its transaction must not commit. */
export class ClaimLost extends Error {}

export type Claim = { kind: 'claimed'; claimId: string } | { kind: 'replay'; status: number; body: string };

/** A key this request holds. */
export interface HeldClaim {
  readonly accountId: string;
  readonly key: string;
  readonly claimId: string;
}

export function fingerprintOf(method: string, path: string, params: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${JSON.stringify(params)}`).digest('hex');
}

export function checkKey(key: string): void {
  if (key.length > MAX_KEY_LENGTH) {
    throw invalidRequest(`Idempotency keys can be at most ${MAX_KEY_LENGTH} characters long.`, 'idempotency_key_too_long', 'Idempotency-Key');
  }
}

export const idempotencyKeyInUse = (key: string): ApiError =>
  new ApiError({
    status: 409,
    code: 'idempotency_key_in_use',
    message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
    headers: { 'Stripe-Should-Retry': 'true' },
  });

export class IdempotencyStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlClient,
    private readonly ttlHours: number,
    private readonly encryption: Encryption,
    /** How often a running request refreshes its claim (shorter in tests). */
    readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  /**
   * The claim's INSERT: a new key, or one whose record expired or whose request looks abandoned, is
   * taken; any other (in progress, or completed) is left alone and the INSERT returns no row.
   * `completed` stores the answer with the claim, for an operation sent as one statement.
   */
  private claimInsert(accountId: string, key: string, fingerprint: string, claimId: string, completed?: { status: number; body: string; objectId: string | null }): Sql {
    const [status, body, completedAt] = completed ? [completed.status, completed.body, raw('CURRENT_TIMESTAMP')] : [null, null, raw('NULL::timestamptz')];
    const objectId = completed?.objectId ?? null;
    return sql`
      INSERT INTO idempotency_records (account_id, key, fingerprint, claim_id, heartbeat_at, status, response_body, completed_at, object_id)
      VALUES (${accountId}, ${key}, ${fingerprint}, ${claimId}, CURRENT_TIMESTAMP, ${status}::int, ${body}::text, ${completedAt}, ${objectId}::text)
      ON CONFLICT (account_id, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, response_body = EXCLUDED.response_body, object_id = EXCLUDED.object_id,
            created_at = CURRENT_TIMESTAMP, completed_at = EXCLUDED.completed_at,
            claim_id = EXCLUDED.claim_id, heartbeat_at = CURRENT_TIMESTAMP
        WHERE idempotency_records.created_at < CURRENT_TIMESTAMP - ${`${this.ttlHours} hours`}::interval
           OR (idempotency_records.completed_at IS NULL
               AND COALESCE(idempotency_records.heartbeat_at, idempotency_records.created_at) < CURRENT_TIMESTAMP - ${`${ABANDONED_AFTER_SECONDS} seconds`}::interval)
      RETURNING 1`;
  }

  /**
   * The claim of a request sent as one statement (src/kernel/writes.ts), stored completed with its
   * answer (sealed when `seal`); it commits only if the statement's writes applied.
   */
  async completedClaim(accountId: string, key: string, fingerprint: string, body: string, seal: boolean): Promise<Sql> {
    const stored = seal ? await this.encryption.seal(body) : body;
    return this.claimInsert(accountId, key, fingerprint, randomUUID(), { status: 200, body: stored, objectId: answeredObjectId(body) });
  }

  /** Claims the key for this request, or returns the stored result to replay, or throws 409/400. */
  async claim(accountId: string, key: string, fingerprint: string): Promise<Claim> {
    const claimId = randomUUID();
    const claimed = await this.sql.query(this.claimInsert(accountId, key, fingerprint, claimId));
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
    if (existing.status === null || existing.responseBody === null) throw idempotencyKeyInUse(key);
    const body = Encryption.isSealed(existing.responseBody) ? await this.encryption.open(existing.responseBody) : existing.responseBody;
    return { kind: 'replay', status: existing.status, body };
  }

  /** Keeps a running request's claim from looking abandoned. */
  async heartbeat(claim: HeldClaim): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE idempotency_records SET heartbeat_at = CURRENT_TIMESTAMP
      WHERE account_id = ${claim.accountId} AND key = ${claim.key} AND claim_id = ${claim.claimId} AND completed_at IS NULL`;
  }

  /**
   * Stores the claim's result (in `db`: the operation's transaction, or the client for a failure
   * whose transaction rolled back); false when the claim was taken over meanwhile (its request
   * looked abandoned), in which case the other request's result stands. `seal`: the body carries
   * a secret, so the stored copy is encrypted.
   */
  async complete(claim: HeldClaim, status: number, response: string, seal = false, db: SqlClient = this.sql): Promise<boolean> {
    const body = seal ? await this.encryption.seal(response) : response;
    const updated = await db.query(sql`
      UPDATE idempotency_records SET status = ${status}, response_body = ${body}, completed_at = CURRENT_TIMESTAMP,
        object_id = ${status === 200 ? answeredObjectId(response) : null}::text
      WHERE account_id = ${claim.accountId} AND key = ${claim.key} AND claim_id = ${claim.claimId} AND completed_at IS NULL
      RETURNING 1`);
    return updated.length > 0;
  }

  /**
   * Frees the key of a request that changed nothing (its transaction rolled back on an unexpected
   * failure, a database outage say), so a retry runs it afresh instead of replaying a 500. A commit
   * that did happen left the record completed, which this never touches.
   */
  async release(claim: HeldClaim): Promise<void> {
    await this.prisma.$executeRaw`
      DELETE FROM idempotency_records
      WHERE account_id = ${claim.accountId} AND key = ${claim.key} AND claim_id = ${claim.claimId} AND completed_at IS NULL`;
  }

  /**
   * Deletes records past the TTL, `batchSize` per statement (oldest first, by the created_at
   * index), so a day of a load test's keys never makes one long transaction; returns how many.
   */
  async prune(batchSize = 5_000): Promise<number> {
    const ttl = `${this.ttlHours} hours`;
    let total = 0;
    for (;;) {
      const deleted = await this.prisma.$executeRaw`
        DELETE FROM idempotency_records WHERE ctid = ANY (ARRAY(
          SELECT ctid FROM idempotency_records WHERE created_at < CURRENT_TIMESTAMP - ${ttl}::interval
          ORDER BY created_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED))`;
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}

/** An answer's object id: serializers write `id` first, so reading the start is enough (a list has none); answers are indented. */
const ANSWER_ID = /^\{\s*"id":\s*"([^"\\]{1,255})"/;

export function answeredObjectId(body: string): string | null {
  return ANSWER_ID.exec(body)?.[1] ?? null;
}

/**
 * Rewrites every stored answer of `accountId` that is the object `objectId` (a redaction or a
 * deletion that promises its data is gone): `rewrite` gets the parsed answer and returns the one
 * a replay gives from now on. Sealed answers stay sealed. Runs in the caller's transaction.
 */
export async function rewriteStoredAnswers(
  tx: Tx,
  encryption: Encryption,
  accountId: string,
  objectId: string,
  rewrite: (answer: Record<string, unknown>) => Record<string, unknown>,
): Promise<number> {
  const rows = await tx.$queryRaw<{ key: string; response_body: string }[]>`
    SELECT key, response_body FROM idempotency_records
    WHERE account_id = ${accountId} AND object_id = ${objectId} AND response_body IS NOT NULL FOR UPDATE`;
  for (const row of rows) {
    const sealed = Encryption.isSealed(row.response_body);
    const answer = JSON.parse(sealed ? await encryption.open(row.response_body) : row.response_body) as Record<string, unknown>;
    const text = answerJson(rewrite(answer));
    const body = sealed ? await encryption.seal(text) : text;
    await tx.$executeRaw`UPDATE idempotency_records SET response_body = ${body} WHERE account_id = ${accountId} AND key = ${row.key}`;
  }
  return rows.length;
}

/**
 * Seals the stored responses that contain `text` and are still plain (versions before a route
 * sealed its responses kept them so); returns how many. Concurrent runs skip each other's rows.
 */
export async function sealStoredResponses(prisma: PrismaClient, encryption: Encryption, text: string, batchSize = 500): Promise<number> {
  const containing = `%${text.replace(/[\\%_]/g, '\\$&')}%`;
  let total = 0;
  for (;;) {
    const sealed = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ account_id: string; key: string; response_body: string }[]>`
        SELECT account_id, key, response_body FROM idempotency_records
        WHERE response_body LIKE ${containing} AND response_body NOT LIKE ${`${SEALED_PREFIX}%`}
        LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
      const bodies = await Promise.all(rows.map((r) => encryption.seal(r.response_body)));
      await tx.$executeRaw`
        UPDATE idempotency_records r SET response_body = s.body
        FROM unnest(${rows.map((r) => r.account_id)}::text[], ${rows.map((r) => r.key)}::text[], ${bodies}::text[]) AS s(account_id, key, body)
        WHERE r.account_id = s.account_id AND r.key = s.key`;
      return rows.length;
    });
    total += sealed;
    if (sealed < batchSize) return total;
  }
}
