import { Prisma } from '../../../generated/prisma/client';
import type { PrismaClient } from '../../../lib/prisma';
import type { Clock } from '../../../lib/clock';
import type { Config } from '../../../config';
import { unixSeconds } from '../../../lib/clock';
import { newId, randomBase62 } from '../../../lib/ids';
import { accountApiVersion, automaticCause, emit, type EventCause, type Tx } from '../../../events/emit';
import type { JobAdder } from '../../../lib/queue';
import { identityQueue, processingJobId, redactionJobId, scheduleIdentitySteps, type IdentityJob } from './jobs';
import type { JobWorker, Reconcile } from '../../../kernel/route';
import { rewriteStoredAnswers } from '../../../kernel/idempotency';
import type { Encryption } from '../../../lib/encryption';
import {
  FAILURES,
  redactChecks,
  redactProvidedDetails,
  redactSessionAttributes,
  redactSessionObject,
  redactStoredSession,
  redactVerifiedOutputs,
  serializeSession,
  SESSION_OBJECT,
  type FailureCode,
  type SessionRow,
} from './serializer';

// The asynchronous half of verification sessions: a submission's outcome after the processing
// delay (with its report), and a redaction after the redaction delay. Each step is one
// transaction guarded by the session's state, so running it twice, late, or after a cancel does
// nothing more; `reconcileIdentity` re-queues steps that are due when Redis lost their jobs.

export interface PipelineDeps {
  readonly prisma: PrismaClient;
  readonly clock: Clock;
  readonly config: Pick<Config, 'defaultApiVersion'>;
}

/** A redaction also opens and reseals the session's stored idempotent answers. */
export type RedactionDeps = PipelineDeps & { readonly encryption: Encryption };

const BATCH = 500;

/** Locks the session row for the rest of the transaction; null when the condition fails. */
export async function lockSession(tx: Tx, where: Prisma.Sql): Promise<SessionRow | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM identity_verification_sessions WHERE ${where} FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.identityVerificationSession.findUnique({ where: { id: rows[0].id } });
}

/**
 * Emits an event about a session (its stored rendering never holds a client secret or url).
 * `apiVersion`: the account's default, a version string or how to look it up.
 */
export async function emitSessionEvent(
  tx: Tx,
  row: SessionRow,
  change: 'created' | 'processing' | 'verified' | 'requires_input' | 'canceled' | 'redacted',
  created: number,
  cause: EventCause,
  apiVersion: string | { fallback: string },
): Promise<string> {
  return emit(tx, `identity.verification_session.${change}`, serializeSession(row), {
    accountId: row.accountId,
    apiVersion: typeof apiVersion === 'string' ? apiVersion : await accountApiVersion(tx, row.accountId, apiVersion.fallback),
    created,
    cause,
  });
}

// Test data, as the public test mode returns it.
const TEST_PERSON = {
  first_name: 'Jenny',
  last_name: 'Rosen',
  dob: { day: 1, month: 1, year: 1901 },
  /** The id number and document number shown once expanded (both withheld otherwise). */
  id_number: '000000000',
  document_number: 'D00000000',
  address: { city: 'San Francisco', country: 'US', line1: '1234 Main Street', line2: null, postal_code: '94111', state: 'CA' },
};

const fileId = () => `file_${randomBase62(24)}`;

type Check = 'document' | 'selfie' | 'id_number';

/** The checks a session runs: its type's, plus what its document options ask for. */
export function checksOf(row: Pick<SessionRow, 'type' | 'options'>): Check[] {
  if (row.type === 'id_number') return ['id_number'];
  const document = ((row.options ?? {}) as Record<string, any>).document ?? {};
  const checks: Check[] = ['document'];
  if (document.require_id_number === true) checks.push('id_number');
  if (document.require_matching_selfie === true) checks.push('selfie');
  return checks;
}

function reportChecks(row: SessionRow, outcome: string): Record<string, unknown> {
  const failure = outcome === 'verified' ? undefined : FAILURES[outcome as FailureCode];
  const result = (check: Check) =>
    failure?.check === check ? { status: 'unverified', error: { code: outcome, reason: failure.reason } } : { status: 'verified', error: null };
  const options = (row.options ?? {}) as Record<string, any>;
  const out: Record<string, unknown> = {};
  const checks = checksOf(row);
  if (row.type === 'id_number') out.options = { id_number: {} };
  else out.options = { document: options.document ?? {} };
  if (checks.includes('document')) {
    const allowed: string[] | undefined = options.document?.allowed_types;
    out.document = {
      address: TEST_PERSON.address,
      dob: TEST_PERSON.dob,
      ...result('document'),
      expiration_date: outcome === 'document_expired' ? { day: 1, month: 1, year: 2020 } : { day: 1, month: 12, year: 2034 },
      files: [fileId(), fileId()],
      first_name: TEST_PERSON.first_name,
      issued_date: { day: 1, month: 12, year: 2024 },
      issuing_country: 'US',
      last_name: TEST_PERSON.last_name,
      number: TEST_PERSON.document_number,
      type: allowed?.[0] ?? 'driving_license',
    };
  }
  if (checks.includes('id_number')) {
    out.id_number = {
      dob: TEST_PERSON.dob,
      ...result('id_number'),
      first_name: TEST_PERSON.first_name,
      id_number: TEST_PERSON.id_number,
      id_number_type: 'us_ssn',
      last_name: TEST_PERSON.last_name,
    };
  }
  if (checks.includes('selfie')) out.selfie = { document: fileId(), ...result('selfie'), selfie: fileId() };
  return out;
}

function verifiedOutputs(row: SessionRow): Record<string, unknown> {
  const checks = checksOf(row);
  return {
    address: checks.includes('document') ? TEST_PERSON.address : null,
    dob: TEST_PERSON.dob,
    email: null,
    first_name: TEST_PERSON.first_name,
    id_number: checks.includes('id_number') ? TEST_PERSON.id_number : null,
    id_number_type: checks.includes('id_number') ? 'us_ssn' : null,
    last_name: TEST_PERSON.last_name,
    phone: null,
  };
}

/**
 * Ends a submission: the session becomes `verified` or goes back to `requires_input` with
 * `last_error`, with a report of its checks. Returns the ids of the events it emitted.
 */
export async function finishProcessing(deps: PipelineDeps, sessionId: string): Promise<string[]> {
  return deps.prisma.$transaction(async (tx) => {
    const row = await lockSession(tx, sqlWhere(sessionId, 'processing'));
    if (!row || row.pendingOutcome === null) return [];
    const outcome = row.pendingOutcome;
    const now = unixSeconds(deps.clock);
    const failure = outcome === 'verified' ? undefined : FAILURES[outcome as FailureCode];
    // Outcomes no check produces (consent declined, unsupported device …) end without a report.
    let reportId: string | null = row.lastVerificationReport;
    if (!failure || failure.check !== null) {
      reportId = newId('vr');
      await tx.identityVerificationReport.create({
        data: {
          id: reportId,
          accountId: row.accountId,
          sessionId: row.id,
          created: now,
          type: row.type === 'id_number' ? 'id_number' : 'document',
          clientReferenceId: row.clientReferenceId,
          verificationFlow: row.verificationFlow,
          checks: reportChecks(row, outcome) as Prisma.InputJsonValue,
        },
        select: { id: true },
      });
    }
    const updated = await tx.identityVerificationSession.update({
      where: { id: row.id },
      data: {
        status: failure ? 'requires_input' : 'verified',
        lastError: failure ? { code: outcome, reason: failure.reason } : undefined,
        lastVerificationReport: reportId,
        verifiedOutputs: failure ? undefined : (verifiedOutputs(row) as Prisma.InputJsonValue),
        pendingOutcome: null,
        processingDueAt: null,
      },
    });
    return [await emitSessionEvent(tx, updated, failure ? 'requires_input' : 'verified', now, automaticCause, { fallback: deps.config.defaultApiVersion })];
  });
}

const sqlWhere = (sessionId: string, status: string): Prisma.Sql => Prisma.sql`id = ${sessionId} AND status = ${status}`;

/**
 * Finishes a redaction: the personal data of the session, its reports, the events about it and
 * the stored idempotent answers of its requests (a replay answers the redacted session) is
 * replaced, `metadata` is emptied, and `identity.verification_session.redacted` is emitted.
 */
export async function finishRedaction(deps: RedactionDeps, sessionId: string): Promise<string[]> {
  return deps.prisma.$transaction(async (tx) => {
    const row = await lockSession(tx, Prisma.sql`id = ${sessionId} AND redaction_status = 'processing'`);
    if (!row) return [];
    const now = unixSeconds(deps.clock);
    const reports = await tx.identityVerificationReport.findMany({ where: { sessionId: row.id }, select: { id: true, checks: true } });
    for (const report of reports) {
      await tx.identityVerificationReport.update({
        where: { id: report.id },
        data: { checks: redactChecks(report.checks as Record<string, any>) as Prisma.InputJsonValue },
        select: { id: true },
      });
    }
    const events = await tx.$queryRaw<{ id: string; data: Record<string, any> }[]>`
      SELECT id, data FROM events
      WHERE account_id = ${row.accountId} AND data->'object'->>'object' = ${SESSION_OBJECT} AND data->'object'->>'id' = ${row.id}`;
    for (const event of events) {
      const data: Record<string, any> = { ...event.data, object: redactSessionObject(event.data.object) };
      // An update's old values are copies too.
      if (data.previous_attributes) data.previous_attributes = redactSessionAttributes(data.previous_attributes);
      await tx.event.update({ where: { id: event.id }, data: { data: data as Prisma.InputJsonValue }, select: { id: true } });
    }
    const updated = await tx.identityVerificationSession.update({
      where: { id: row.id },
      data: {
        metadata: {},
        providedDetails: row.providedDetails === null ? undefined : (redactProvidedDetails(row.providedDetails) as Prisma.InputJsonValue),
        verifiedOutputs: row.verifiedOutputs === null ? undefined : (redactVerifiedOutputs(row.verifiedOutputs) as Prisma.InputJsonValue),
        returnUrl: null,
        redactionStatus: 'redacted',
        redactionDueAt: null,
      },
    });
    await rewriteStoredAnswers(tx, deps.encryption, row.accountId, row.id, redactStoredSession);
    // Links die with the data: none of them can open the page any more.
    await tx.identityVerificationLink.deleteMany({ where: { sessionId: row.id } });
    return [await emitSessionEvent(tx, updated, 'redacted', now, automaticCause, { fallback: deps.config.defaultApiVersion })];
  });
}

export interface IdentityReconcileResult {
  processing: number;
  redactions: number;
}

/** Queues every step that is due by the database but may have no job (Redis lost it, a worker died). */
export async function reconcileIdentity(prisma: PrismaClient, queues: JobAdder, nowMs: number): Promise<IdentityReconcileResult> {
  const now = new Date(nowMs);
  let processing = 0;
  let afterId = '';
  for (;;) {
    const due = await prisma.identityVerificationSession.findMany({
      where: { status: 'processing', processingDueAt: { lte: now }, id: { gt: afterId } },
      orderBy: { id: 'asc' },
      take: BATCH,
      select: { id: true, submissions: true },
    });
    if (due.length === 0) break;
    await scheduleIdentitySteps(queues, due.map((s) => ({ id: processingJobId(s.id, s.submissions), data: { sessionId: s.id, step: 'process' } })));
    processing += due.length;
    afterId = due[due.length - 1].id;
    if (due.length < BATCH) break;
  }
  let redactions = 0;
  afterId = '';
  for (;;) {
    const due = await prisma.identityVerificationSession.findMany({
      where: { redactionStatus: 'processing', redactionDueAt: { lte: now }, id: { gt: afterId } },
      orderBy: { id: 'asc' },
      take: BATCH,
      select: { id: true },
    });
    if (due.length === 0) break;
    await scheduleIdentitySteps(queues, due.map((s) => ({ id: redactionJobId(s.id), data: { sessionId: s.id, step: 'redact' } })));
    redactions += due.length;
    afterId = due[due.length - 1].id;
    if (due.length < BATCH) break;
  }
  return { processing, redactions };
}

/** Runs a session's delayed steps; a step re-reads the session and does nothing when nothing is left. */
export const identityWorker: JobWorker<IdentityJob> = {
  queue: identityQueue,
  run: (deps, { sessionId, step }) => (step === 'process' ? finishProcessing(deps, sessionId) : finishRedaction(deps, sessionId)),
  failure: 'identity step failed',
  describe: (data) => ({ session: data.sessionId }),
};

export const reconcileIdentityJobs: Reconcile = async ({ prisma, queues }, nowMs) => {
  const { processing, redactions } = await reconcileIdentity(prisma, queues, nowMs);
  return { identityProcessing: processing, identityRedactions: redactions };
};
