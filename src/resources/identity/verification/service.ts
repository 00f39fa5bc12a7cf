import { createHash } from 'node:crypto';
import { checkHttpUrl } from '../../../kernel/urls';
import { Prisma } from '../../../generated/prisma/client';
import type { Deps, RequestContext } from '../../../kernel/route';
import { invalidRequest, parameterMissing, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { causeOf, type EventCause, type Tx } from '../../../events/emit';
import { hostedUrl } from '../../../hosted/pages';
import { handOffEvents } from '../../../events/jobs';
import { processingJobId, redactionJobId, scheduleIdentitySteps } from './jobs';
import { checksOf, emitSessionEvent, lockSession } from './pipeline';
import {
  ABANDONED,
  ABANDONED_REASON,
  FAILURES,
  serializeReport,
  serializeSession,
  type FailureCode,
  type LinkSecrets,
  type SessionRow,
} from './serializer';

// Verification sessions: create, read, update, cancel, redact, and submit (the hosted page's
// and the sandbox's way in). Every change and its event commit together; the delayed steps
// (processing, redaction) are queued after the commit and finished by pipeline.ts.

const SESSION = 'verification session';
const REPORT = 'verification report';

/** The spec's limits: a url lasts 48 hours, a client secret 24. */
export const URL_TTL_SECONDS = 48 * 3600;
export const CLIENT_SECRET_TTL_SECONDS = 24 * 3600;

/** A url's token, or a client secret: either opens the hosted page (see page.ts). */
export const LINK_TOKEN_SHAPE = /^(?:[A-Za-z0-9]{48}|vs_[A-Za-z0-9]{24}_secret_test_[A-Za-z0-9]{24})$/;

export const HOSTED_PATH = '/identity/verification_sessions';

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

// --- validation -----------------------------------------------------------------------------

/** `options` as stored: the document options of a document session, `{id_number: {}}` otherwise. */
function buildOptions(type: string, param: Record<string, any> | undefined, current?: Record<string, any>): Record<string, unknown> {
  const given = param?.document;
  const hasDocumentOptions = isObject(given) && Object.keys(given).length > 0;
  if (type !== 'document') {
    if (hasDocumentOptions) {
      throw invalidRequest(`options[document] applies only to sessions of type \`document\`, not \`${type}\`.`, 'parameter_invalid', 'options[document]');
    }
    return type === 'id_number' ? { id_number: {} } : {};
  }
  let document: Record<string, unknown> = isObject(current?.document) ? { ...current.document } : {};
  if (given === '') document = {};
  else if (isObject(given)) {
    for (const [key, value] of Object.entries(given)) document[key] = key === 'allowed_types' ? [...new Set(value as string[])] : value;
  }
  return { document };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9][0-9 ().-]{5,30}$/;

function providedDetailsOf(param: Record<string, any> | undefined, current: Record<string, any> | null): Record<string, string> | null {
  if (param === undefined) return current as Record<string, string> | null;
  const out: Record<string, string> = { ...(current ?? {}) };
  for (const key of ['email', 'phone'] as const) {
    const value = param[key];
    if (value === undefined) continue;
    if (value === '') {
      delete out[key];
      continue;
    }
    const valid = key === 'email' ? EMAIL.test(value) : PHONE.test(value);
    if (!valid) throw invalidRequest(`Invalid provided_details[${key}]: '${String(value).slice(0, 100)}' is not a valid ${key === 'email' ? 'email address' : 'phone number'}.`, key === 'email' ? 'email_invalid' : 'phone_number_invalid', `provided_details[${key}]`);
    out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** The caller itself or one of its connected accounts; anything else is `resource_missing` on `param`. */
async function ownAccount(ctx: RequestContext, id: string, param: string): Promise<{ id: string; details: unknown }> {
  const missing = resourceMissing('account', id, param, 400);
  if (!hasIdShape('acct', id)) throw missing;
  const account = await ctx.deps.prisma.account.findUnique({ where: { id }, select: { id: true, parentAccountId: true, details: true } });
  if (!account || (account.id !== ctx.caller.accountId && account.parentAccountId !== ctx.caller.accountId)) throw missing;
  return account;
}

async function relatedOf(ctx: RequestContext) {
  const { params } = ctx;
  // Sandbank has no customers: a customer id is checked for its shape only.
  if (params.related_customer !== undefined && !hasIdShape('cus', params.related_customer)) {
    throw resourceMissing('customer', params.related_customer, 'related_customer', 400);
  }
  if (params.related_customer_account !== undefined) await ownAccount(ctx, params.related_customer_account, 'related_customer_account');
  let relatedPerson: { account: string; person: string } | null = null;
  if (params.related_person !== undefined) {
    const { account, person } = params.related_person as { account: string; person: string };
    const owner = await ownAccount(ctx, account, 'related_person[account]');
    // The only persons Sandbank keeps are accounts' individuals.
    if ((owner.details as Record<string, any>)?.individual_id !== person) throw resourceMissing('person', person, 'related_person[person]', 400);
    relatedPerson = { account, person };
  }
  return { relatedCustomer: params.related_customer ?? null, relatedCustomerAccount: params.related_customer_account ?? null, relatedPerson };
}

// --- state checks ---------------------------------------------------------------------------

/** Redacted sessions (or ones being redacted) can't be changed or used. */
function refuseRedacted(row: SessionRow, action: string): void {
  if (row.redactionStatus !== null) {
    const state = row.redactionStatus === 'redacted' ? 'has been redacted' : 'is being redacted';
    throw invalidRequest(`This VerificationSession ${state} and can't be ${action}.`, 'verification_session_redacted', undefined);
  }
}

function requireInput(row: SessionRow, action: string): void {
  refuseRedacted(row, action);
  if (row.status !== 'requires_input') {
    throw invalidRequest(
      `This VerificationSession has status \`${row.status}\`; only a session with status \`requires_input\` can be ${action}.`,
      'verification_session_unexpected_status',
      undefined,
    );
  }
}

// --- links ----------------------------------------------------------------------------------

/** A fresh hosted-page url (its token is stored hashed) and client secret for a session in `requires_input`. */
async function issueLink(tx: Tx, deps: Deps, row: SessionRow, now: number): Promise<LinkSecrets> {
  const token = randomBase62(48);
  const clientSecret = `${row.id}_secret_test_${randomBase62(24)}`;
  // The client secret is what Stripe.js's verifyIdentity would open; here it opens the same
  // page, for its shorter lifetime. Both are single-use and stored only as hashes.
  await tx.identityVerificationLink.createMany({
    data: [
      { tokenHash: hashToken(token), sessionId: row.id, expiresAt: now + URL_TTL_SECONDS },
      { tokenHash: hashToken(clientSecret), sessionId: row.id, expiresAt: now + CLIENT_SECRET_TTL_SECONDS },
    ],
  });
  return { url: hostedUrl(deps.config, `${HOSTED_PATH}/${token}`), clientSecret };
}

const usable = (row: SessionRow) => row.status === 'requires_input' && row.redactionStatus === null;

// --- lookups --------------------------------------------------------------------------------

async function findSession(ctx: RequestContext, id: string): Promise<SessionRow> {
  if (!hasIdShape('vs', id)) throw resourceMissing(SESSION, id);
  const row = await ctx.deps.prisma.identityVerificationSession.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw resourceMissing(SESSION, id);
  return row;
}

async function lockOwned(tx: Tx, ctx: RequestContext, id: string): Promise<SessionRow> {
  if (!hasIdShape('vs', id)) throw resourceMissing(SESSION, id);
  const row = await lockSession(tx, Prisma.sql`id = ${id} AND account_id = ${ctx.caller.accountId}`);
  if (!row) throw resourceMissing(SESSION, id);
  return row;
}

// --- operations -----------------------------------------------------------------------------

/** POST /v1/identity/verification_sessions */
export async function createSession(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  if (params.type !== undefined && params.verification_flow !== undefined) throw parametersExclusive('type', 'verification_flow');
  if (params.type === undefined && params.verification_flow === undefined) throw parameterMissing('type');
  // Verification flows are made in the public Dashboard; any well-formed flow id stands for one.
  if (params.verification_flow !== undefined && !hasIdShape('vf', params.verification_flow)) {
    throw resourceMissing('verification flow', params.verification_flow, 'verification_flow', 400);
  }
  const type: string = params.type ?? 'verification_flow';
  const options = buildOptions(type, params.options);
  const providedDetails = providedDetailsOf(params.provided_details, null);
  if (params.return_url !== undefined) checkHttpUrl(params.return_url, 'return_url');
  const related = await relatedOf(ctx);
  const now = unixSeconds(deps.clock);
  const { row, secrets, eventId } = await deps.prisma.$transaction(async (tx) => {
    const row = await tx.identityVerificationSession.create({
      data: {
        id: newId('vs'),
        accountId: caller.accountId,
        created: now,
        type,
        verificationFlow: params.verification_flow ?? null,
        status: 'requires_input',
        clientReferenceId: params.client_reference_id ?? null,
        metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
        options: options as Prisma.InputJsonValue,
        providedDetails: providedDetails ?? Prisma.DbNull,
        relatedCustomer: related.relatedCustomer,
        relatedCustomerAccount: related.relatedCustomerAccount,
        relatedPerson: related.relatedPerson ?? Prisma.DbNull,
        returnUrl: params.return_url ?? null,
      },
    });
    const secrets = await issueLink(tx, deps, row, now);
    const eventId = await emitSessionEvent(tx, row, 'created', now, causeOf(ctx), caller.defaultApiVersion);
    return { row, secrets, eventId };
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeSession(row, secrets);
}

/** GET /v1/identity/verification_sessions/{session}: in `requires_input`, with a fresh url and client secret. */
export async function retrieveSession(ctx: RequestContext) {
  const row = await findSession(ctx, ctx.pathParams.session);
  if (!usable(row)) return serializeSession(row);
  const now = unixSeconds(ctx.deps.clock);
  const secrets = await ctx.deps.prisma.$transaction((tx) => issueLink(tx, ctx.deps, row, now));
  return serializeSession(row, secrets);
}

/** GET /v1/identity/verification_sessions */
export async function listSessions(ctx: RequestContext) {
  const { params } = ctx;
  const created = rangeWhere(params.created);
  const where: Record<string, unknown> = { accountId: ctx.caller.accountId };
  if (created !== undefined) where.created = created;
  if (params.client_reference_id !== undefined) where.clientReferenceId = params.client_reference_id;
  if (params.related_customer !== undefined) where.relatedCustomer = params.related_customer;
  if (params.related_customer_account !== undefined) where.relatedCustomerAccount = params.related_customer_account;
  if (params.status !== undefined) where.status = params.status;
  // Listed sessions carry no url or client secret: a retrieve hands out fresh ones.
  return paginate({
    params,
    url: '/v1/identity/verification_sessions',
    where,
    model: ctx.deps.prisma.identityVerificationSession as any,
    objectName: SESSION,
    serialize: (row: SessionRow) => serializeSession(row),
  });
}

/** POST /v1/identity/verification_sessions/{session}: only in `requires_input`. */
export async function updateSession(ctx: RequestContext) {
  const { params, deps } = ctx;
  const now = unixSeconds(deps.clock);
  const { row, secrets } = await deps.prisma.$transaction(async (tx) => {
    const current = await lockOwned(tx, ctx, ctx.pathParams.session);
    requireInput(current, 'updated');
    const type: string = params.type ?? current.type;
    if (params.type !== undefined && current.type === 'verification_flow') {
      throw invalidRequest('The type of a session made from a verification flow cannot be changed.', 'parameter_invalid', 'type');
    }
    const typeChanged = type !== current.type;
    const options =
      params.options !== undefined || typeChanged
        ? buildOptions(type, params.options, typeChanged ? undefined : (current.options as Record<string, any>))
        : undefined;
    const providedDetails = providedDetailsOf(params.provided_details, current.providedDetails as Record<string, any> | null);
    const row = await tx.identityVerificationSession.update({
      where: { id: current.id },
      data: {
        type,
        options: options as Prisma.InputJsonValue | undefined,
        providedDetails: params.provided_details === undefined ? undefined : (providedDetails ?? Prisma.DbNull),
        metadata: params.metadata === undefined ? undefined : applyMetadata(current.metadata as Metadata, params.metadata),
      },
    });
    return { row, secrets: await issueLink(tx, deps, row, now) };
  });
  return serializeSession(row, secrets);
}

/** POST /v1/identity/verification_sessions/{session}/cancel: only from `requires_input`, and final. */
export async function cancelSession(ctx: RequestContext) {
  const { deps } = ctx;
  const now = unixSeconds(deps.clock);
  const { row, eventId } = await deps.prisma.$transaction(async (tx) => {
    const current = await lockOwned(tx, ctx, ctx.pathParams.session);
    requireInput(current, 'canceled');
    const row = await tx.identityVerificationSession.update({ where: { id: current.id }, data: { status: 'canceled' } });
    return { row, eventId: await emitSessionEvent(tx, row, 'canceled', now, causeOf(ctx), ctx.caller.defaultApiVersion) };
  });
  await handOffEvents(deps.queues, [eventId]);
  return serializeSession(row);
}

/**
 * POST /v1/identity/verification_sessions/{session}/redact. The status stays (a `processing`
 * session is canceled first); `redaction.status` is `processing` until the redaction step runs.
 * Canceled sessions can be redacted too, as in the public API; asking again changes nothing.
 */
export async function redactSession(ctx: RequestContext) {
  const { deps } = ctx;
  const now = unixSeconds(deps.clock);
  const dueAt = new Date(deps.clock.nowMs() + deps.config.redactionDelayMs);
  const { row, eventIds, started } = await deps.prisma.$transaction(async (tx) => {
    const current = await lockOwned(tx, ctx, ctx.pathParams.session);
    if (current.redactionStatus !== null) return { row: current, eventIds: [], started: false };
    const eventIds: string[] = [];
    let row = current;
    if (current.status === 'processing') {
      row = await tx.identityVerificationSession.update({
        where: { id: current.id },
        data: { status: 'canceled', pendingOutcome: null, processingDueAt: null },
      });
      eventIds.push(await emitSessionEvent(tx, row, 'canceled', now, causeOf(ctx), ctx.caller.defaultApiVersion));
    }
    row = await tx.identityVerificationSession.update({ where: { id: current.id }, data: { redactionStatus: 'processing', redactionDueAt: dueAt } });
    return { row, eventIds, started: true };
  });
  if (eventIds.length > 0) await handOffEvents(deps.queues, eventIds);
  if (started) await scheduleIdentitySteps(deps.queues, [{ id: redactionJobId(row.id), data: { sessionId: row.id, step: 'redact' }, delayMs: deps.config.redactionDelayMs }]);
  return serializeSession(row);
}

/** Whether an outcome can come from this session's checks; a clear 400 otherwise. */
function checkOutcome(row: SessionRow, outcome: string, param: string): void {
  if (outcome === 'verified' || outcome === ABANDONED) return;
  const check = FAILURES[outcome as FailureCode]?.check;
  if (check === undefined) throw invalidRequest(`Invalid ${param}: unknown outcome '${outcome}'.`, 'parameter_invalid', param);
  if (check !== null && !checksOf(row).includes(check)) {
    const hint = check === 'selfie' ? ' (it needs options[document][require_matching_selfie])' : check === 'id_number' ? ' (it needs type `id_number` or options[document][require_id_number])' : '';
    throw invalidRequest(`The outcome '${outcome}' needs a ${check} check, which this \`${row.type}\` session does not run${hint}.`, 'parameter_invalid', param);
  }
}

export interface Submitted {
  row: SessionRow;
  eventIds: string[];
  /** Set when the submission started processing. */
  processing?: { jobId: string };
}

/**
 * Submits a session in the caller's transaction (the row must be locked): `abandoned` leaves it
 * in `requires_input` with that `last_error`; any other outcome starts `processing`, which the
 * processing step ends after IDENTITY_PROCESSING_DELAY_MS.
 */
export async function submitLocked(tx: Tx, deps: Deps, current: SessionRow, outcome: string, cause: EventCause, param: string): Promise<Submitted> {
  requireInput(current, 'submitted');
  checkOutcome(current, outcome, param);
  if (outcome === ABANDONED) {
    const row = await tx.identityVerificationSession.update({ where: { id: current.id }, data: { lastError: { code: ABANDONED, reason: ABANDONED_REASON } } });
    return { row, eventIds: [] };
  }
  const submissions = current.submissions + 1;
  const row = await tx.identityVerificationSession.update({
    where: { id: current.id },
    data: {
      status: 'processing',
      lastError: Prisma.DbNull,
      pendingOutcome: outcome,
      submissions,
      processingDueAt: new Date(deps.clock.nowMs() + deps.config.identityProcessingDelayMs),
    },
  });
  const eventId = await emitSessionEvent(tx, row, 'processing', unixSeconds(deps.clock), cause, { fallback: deps.config.defaultApiVersion });
  return { row, eventIds: [eventId], processing: { jobId: processingJobId(row.id, submissions) } };
}

/** After the submission committed: hand off its events and queue its processing step. */
export async function afterSubmit(deps: Deps, submitted: Submitted): Promise<void> {
  if (submitted.eventIds.length > 0) await handOffEvents(deps.queues, submitted.eventIds);
  if (submitted.processing) {
    const job = { id: submitted.processing.jobId, data: { sessionId: submitted.row.id, step: 'process' as const }, delayMs: deps.config.identityProcessingDelayMs };
    await scheduleIdentitySteps(deps.queues, [job]);
  }
}

/** POST /sandbox/v1/identity/verification_sessions/{session}/submit: what the hosted page does, for tests. */
export async function submitSession(ctx: RequestContext) {
  const { deps } = ctx;
  const submitted = await deps.prisma.$transaction(async (tx) => {
    const current = await lockOwned(tx, ctx, ctx.pathParams.session);
    return submitLocked(tx, deps, current, String(ctx.params.outcome), causeOf(ctx), 'outcome');
  });
  await afterSubmit(deps, submitted);
  return serializeSession(submitted.row);
}

// --- reports --------------------------------------------------------------------------------

/** GET /v1/identity/verification_reports/{report} */
export async function retrieveReport(ctx: RequestContext) {
  const id = ctx.pathParams.report;
  if (!hasIdShape('vr', id)) throw resourceMissing(REPORT, id);
  const row = await ctx.deps.prisma.identityVerificationReport.findUnique({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw resourceMissing(REPORT, id);
  return serializeReport(row);
}

/** GET /v1/identity/verification_reports */
export async function listReports(ctx: RequestContext) {
  const { params } = ctx;
  const created = rangeWhere(params.created);
  const where: Record<string, unknown> = { accountId: ctx.caller.accountId };
  if (created !== undefined) where.created = created;
  if (params.client_reference_id !== undefined) where.clientReferenceId = params.client_reference_id;
  if (params.type !== undefined) where.type = params.type;
  if (params.verification_session !== undefined) where.sessionId = params.verification_session;
  return paginate({
    params,
    url: '/v1/identity/verification_reports',
    where,
    model: ctx.deps.prisma.identityVerificationReport as any,
    objectName: REPORT,
    serialize: serializeReport,
  });
}
