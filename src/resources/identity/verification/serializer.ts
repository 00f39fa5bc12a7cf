import type { IdentityVerificationReport, IdentityVerificationSession } from '../../../generated/prisma/client';
import { pathField, withheldField, withhold, type ExpandableFields } from '../../../kernel/expand';
import type { Metadata } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { hasIdShape } from '../../../lib/ids';

export const SESSION_OBJECT = 'identity.verification_session';
export const REPORT_OBJECT = 'identity.verification_report';

export const SESSION_TYPES = ['document', 'id_number'] as const;
export const SESSION_STATUSES = ['requires_input', 'processing', 'verified', 'canceled'] as const;
export const DOCUMENT_TYPES = ['driving_license', 'id_card', 'passport'] as const;

/** What the public API puts in place of personal data once a session is redacted. */
export const REDACTED = '[redacted]';

/**
 * Failure outcomes a submission can end with (the public API's `last_error.code` values), the
 * check each belongs to, and the reason shown with it. `abandoned` is the user leaving.
 */
export const FAILURES = {
  document_expired: { check: 'document', reason: 'The document is expired.' },
  document_type_not_supported: { check: 'document', reason: 'The document type is not supported.' },
  document_unverified_other: { check: 'document', reason: 'The document could not be verified.' },
  selfie_document_missing_photo: { check: 'selfie', reason: 'The document did not contain a photo of a face.' },
  selfie_face_mismatch: { check: 'selfie', reason: "The selfie did not match the document's photo." },
  selfie_manipulated: { check: 'selfie', reason: 'The selfie was manipulated.' },
  selfie_unverified_other: { check: 'selfie', reason: 'The selfie could not be verified.' },
  id_number_insufficient_document_data: { check: 'id_number', reason: 'The document did not contain enough data to match the ID number.' },
  id_number_mismatch: { check: 'id_number', reason: 'The ID number did not match the records.' },
  id_number_unverified_other: { check: 'id_number', reason: 'The ID number could not be verified.' },
  consent_declined: { check: null, reason: 'The user declined to be verified.' },
  country_not_supported: { check: null, reason: "The user's country is not supported." },
  device_not_supported: { check: null, reason: "The user's device is not supported." },
  under_supported_age: { check: null, reason: 'The user is under the supported age.' },
} as const satisfies Record<string, { check: 'document' | 'selfie' | 'id_number' | null; reason: string }>;

export type FailureCode = keyof typeof FAILURES;
export const ABANDONED = 'abandoned';
export const ABANDONED_REASON = 'The user left the verification flow without submitting.';
/** Every outcome the sandbox submit endpoint and the hosted page offer. */
export const OUTCOMES = ['verified', ...Object.keys(FAILURES), ABANDONED] as const;

export type SessionRow = IdentityVerificationSession;
export type ReportRow = IdentityVerificationReport;

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What the public API returns only when expanded (its guide to accessing verification results):
 * a session's `provided_details` and `verified_outputs`, and inside them or a report's checks
 * the sensitive fields below.
 */
const SENSITIVE = {
  verified_outputs: ['dob', 'id_number'],
  document: ['number', 'dob', 'expiration_date'],
  id_number: ['dob', 'id_number'],
} as const;

/** `obj` without its sensitive `fields`, which `expand[]` can bring back. */
function withholdSensitive(obj: unknown, fields: readonly string[]): unknown {
  if (!isObject(obj)) return obj ?? null;
  const shown = { ...obj };
  const held: Record<string, unknown> = {};
  for (const field of fields) {
    held[field] = shown[field] ?? null;
    delete shown[field];
  }
  return withhold(shown, held);
}

export interface LinkSecrets {
  clientSecret: string;
  url: string;
}

/**
 * The public object. `client_secret` and `url` are given only by the responses that hand them
 * to the caller (create, retrieve, update in `requires_input`); stored copies (events) have null.
 */
export function serializeSession(row: SessionRow, secrets?: LinkSecrets) {
  const out: Record<string, unknown> = {
    id: row.id,
    object: SESSION_OBJECT,
    client_reference_id: row.clientReferenceId,
    client_secret: secrets?.clientSecret ?? null,
    created: row.created,
    last_error: row.lastError ?? null,
    last_verification_report: row.lastVerificationReport,
    livemode: false,
    metadata: row.metadata as Metadata,
    options: row.options ?? null,
    redaction: row.redactionStatus ? { status: row.redactionStatus } : null,
    related_customer: row.relatedCustomer,
    related_customer_account: row.relatedCustomerAccount,
    ...(row.relatedPerson ? { related_person: row.relatedPerson } : {}),
    status: row.status,
    type: row.type,
    url: secrets?.url ?? null,
    ...(row.verificationFlow ? { verification_flow: row.verificationFlow } : {}),
  };
  return withhold(out, {
    provided_details: row.providedDetails ?? null,
    verified_outputs: withholdSensitive(row.verifiedOutputs, SENSITIVE.verified_outputs),
  });
}

export function serializeReport(row: ReportRow) {
  const checks = { ...(row.checks as Record<string, unknown>) };
  if (checks.document) checks.document = withholdSensitive(checks.document, SENSITIVE.document);
  if (checks.id_number) checks.id_number = withholdSensitive(checks.id_number, SENSITIVE.id_number);
  return {
    id: row.id,
    object: REPORT_OBJECT,
    client_reference_id: row.clientReferenceId,
    created: row.created,
    livemode: false,
    ...checks,
    type: row.type,
    ...(row.verificationFlow ? { verification_flow: row.verificationFlow } : {}),
    verification_session: row.sessionId,
  };
}

async function expandReport(value: unknown, _parent: Record<string, unknown>, ctx: RequestContext): Promise<unknown> {
  if (typeof value !== 'string' || !hasIdShape('vr', value)) return value ?? null;
  const row = await ctx.deps.prisma.identityVerificationReport.findUnique({ where: { id: value, accountId: ctx.caller.accountId } });
  return row ? serializeReport(row) : value;
}

const VERIFIED_OUTPUTS = `${SESSION_OBJECT}.verified_outputs`;
const DOCUMENT_REPORT = `${REPORT_OBJECT}.document`;
const ID_NUMBER_REPORT = `${REPORT_OBJECT}.id_number`;

const withheldFields = (type: string, fields: readonly string[]): ExpandableFields =>
  Object.fromEntries(fields.map((f) => [f, withheldField(`${type}.${f}`)]));

/** Expandable fields per object type (the sub-objects holding sensitive fields included). */
export const expandable: Readonly<Record<string, ExpandableFields>> = {
  [SESSION_OBJECT]: {
    provided_details: withheldField(`${SESSION_OBJECT}.provided_details`),
    verified_outputs: withheldField(VERIFIED_OUTPUTS),
    last_verification_report: { type: REPORT_OBJECT, expand: expandReport },
  },
  [VERIFIED_OUTPUTS]: withheldFields(VERIFIED_OUTPUTS, SENSITIVE.verified_outputs),
  [REPORT_OBJECT]: { document: pathField(DOCUMENT_REPORT), id_number: pathField(ID_NUMBER_REPORT) },
  [DOCUMENT_REPORT]: withheldFields(DOCUMENT_REPORT, SENSITIVE.document),
  [ID_NUMBER_REPORT]: withheldFields(ID_NUMBER_REPORT, SENSITIVE.id_number),
};

// Redaction: personal data becomes the placeholder, dates (non-strings) become null.

function redactMembers(obj: Record<string, any>, strings: readonly string[], nulls: readonly string[] = []): Record<string, any> {
  const out = { ...obj };
  for (const key of strings) if (typeof out[key] === 'string') out[key] = REDACTED;
  for (const key of nulls) if (key in out) out[key] = null;
  if (isObject(out.address)) {
    out.address = Object.fromEntries(Object.entries(out.address).map(([k, v]) => [k, typeof v === 'string' ? REDACTED : v]));
  }
  return out;
}

const PERSON_STRINGS = ['first_name', 'last_name', 'email', 'phone', 'id_number', 'number', 'sex', 'unparsed_place_of_birth', 'unparsed_sex'];

export const redactProvidedDetails = (v: unknown): unknown => (isObject(v) ? redactMembers(v, ['email', 'phone']) : v);
export const redactVerifiedOutputs = (v: unknown): unknown => (isObject(v) ? redactMembers(v, PERSON_STRINGS, ['dob']) : v);

/** A report's sub-reports with their personal data replaced. */
export function redactChecks(checks: Record<string, any>): Record<string, any> {
  const out = { ...checks };
  if (isObject(out.document)) out.document = redactMembers(out.document, PERSON_STRINGS, ['dob', 'expiration_date', 'issued_date', 'files']);
  if (isObject(out.id_number)) out.id_number = redactMembers(out.id_number, PERSON_STRINGS, ['dob']);
  if (isObject(out.selfie)) out.selfie = redactMembers(out.selfie, ['document', 'selfie']);
  if (isObject(out.email)) out.email = redactMembers(out.email, ['email']);
  if (isObject(out.phone)) out.phone = redactMembers(out.phone, ['phone']);
  return out;
}

/** An update event's `previous_attributes` of a session with its personal data replaced (only the members it has). */
export function redactSessionAttributes(attributes: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...attributes };
  if ('metadata' in out) out.metadata = {};
  if ('provided_details' in out) out.provided_details = redactProvidedDetails(out.provided_details);
  if ('verified_outputs' in out) out.verified_outputs = redactVerifiedOutputs(out.verified_outputs);
  return out;
}

/**
 * A stored answer about a session (an idempotent replay's body) with its personal data replaced,
 * an expanded report's too; its `url` and `client_secret` open nothing once redacted, so they go as well.
 */
export function redactStoredSession(answer: Record<string, any>): Record<string, any> {
  const out = redactSessionObject(answer);
  if ('url' in out) out.url = null;
  if ('client_secret' in out) out.client_secret = null;
  if ('redaction' in out) out.redaction = { status: 'redacted' };
  if (isObject(out.last_verification_report)) out.last_verification_report = redactChecks(out.last_verification_report);
  return out;
}

/** A stored rendering of a session (an event's `data.object`) with its personal data replaced. */
export function redactSessionObject(obj: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...obj, metadata: {} };
  if ('provided_details' in out) out.provided_details = redactProvidedDetails(out.provided_details);
  if ('verified_outputs' in out) out.verified_outputs = redactVerifiedOutputs(out.verified_outputs);
  return out;
}
