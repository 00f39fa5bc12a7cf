// The one error type. Everything a client may see as an error is an ApiError; anything else
// becomes a plain 500 api_error in the error middleware.

import { DOCUMENTED_ERROR_CODES } from './errorCodes';

export type ErrorType = 'invalid_request_error' | 'api_error' | 'card_error' | 'idempotency_error';

export interface ApiErrorInit {
  status: number;
  type?: ErrorType;
  code?: string;
  message: string;
  param?: string;
  /** Extra members of the error body (decline_code, payment_intent, …). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Overrides what `isParameterError` infers (see there). */
  kind?: ErrorKind;
  /**
   * The operation's writes stand and commit with this answer (a declined payment is recorded,
   * then answered 402, as the public API does); its idempotent result is stored in the same commit.
   */
  keepsWrites?: boolean;
}

/**
 * `parameter`: the request's parameters failed validation, wherever that was found (AJV or a
 * handler), so no idempotent result is kept. `pending`: the operation's outcome is not final yet
 * (a worker is still to record it), so the key is freed and a retry with it answers the outcome.
 * `state`: anything else, which the key keeps.
 */
export type ErrorKind = 'parameter' | 'pending' | 'state';

/** Codes of errors about a parameter's presence or value: `parameter_missing`, `url_invalid`, `invalid_string_too_long`… */
const PARAMETER_CODE = /^parameters?_|_invalid$|^invalid_string_/;

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code?: string;
  readonly param?: string;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  readonly kind: ErrorKind;
  readonly keepsWrites: boolean;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.type = init.type ?? (init.status >= 500 ? 'api_error' : 'invalid_request_error');
    this.code = init.code;
    this.param = init.param;
    this.extra = init.extra;
    this.headers = init.headers;
    // A 400 that names a parameter and has no code (enum, boolean) or a parameter code; a lookup
    // (`resource_missing`) or a state code (`…_unexpected_status`) is not one.
    const inferred = this.status === 400 && this.type === 'invalid_request_error' && this.param !== undefined && (this.code === undefined || PARAMETER_CODE.test(this.code));
    this.kind = init.kind ?? (inferred ? 'parameter' : 'state');
    this.keepsWrites = init.keepsWrites ?? false;
  }

  /**
   * The public error body. `doc_url` only for codes the public API documents; `request_log_url`
   * (see kernel/requestLog.ts) when the request has a log page.
   */
  toBody(requestLogUrl?: string): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { type: this.type, message: this.message };
    if (this.code) {
      error.code = this.code;
      if (DOCUMENTED_ERROR_CODES.has(this.code)) error.doc_url = `https://stripe.com/docs/error-codes/${this.code.replace(/_/g, '-')}`;
    }
    if (this.param !== undefined) error.param = this.param;
    if (requestLogUrl) error.request_log_url = requestLogUrl;
    if (this.extra) Object.assign(error, this.extra);
    return { error };
  }
}

export const invalidRequest = (message: string, code?: string, param?: string): ApiError =>
  new ApiError({ status: 400, message, code, param });

export const parameterUnknown = (param: string): ApiError =>
  invalidRequest(`Received unknown parameter: ${param}`, 'parameter_unknown', param);

export const parameterMissing = (param: string): ApiError =>
  invalidRequest(`Missing required param: ${param}.`, 'parameter_missing', param);

export const parametersExclusive = (a: string, b: string): ApiError =>
  invalidRequest(`You may only specify one of these parameters: ${a}, ${b}.`, 'parameters_exclusive', a);

/** `kind` is the human name of the object ("webhook endpoint"). */
export const resourceMissing = (kind: string, id: string, param = 'id', status = 404): ApiError =>
  new ApiError({ status, message: `No such ${kind}: '${id}'`, code: 'resource_missing', param });

export const unrecognizedUrl = (method: string, path: string): ApiError =>
  new ApiError({
    status: 404,
    message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
  });

/** PostgreSQL is away (restarting, say): nothing changed, and a retry will work once it is back. */
export const serviceUnavailable = (): ApiError =>
  new ApiError({
    status: 503,
    type: 'api_error',
    message: 'The service is temporarily unavailable. Please try again later.',
    headers: { 'Stripe-Should-Retry': 'true' },
  });

export const internalError = (): ApiError =>
  new ApiError({
    status: 500,
    type: 'api_error',
    message: 'An unknown error occurred while processing your request. Please try again later.',
    headers: { 'Stripe-Should-Retry': 'true' },
  });

/** Why a request was limited, in the public API's `Stripe-Rate-Limited-Reason` header. */
export type RateLimitReason = 'global-rate' | 'endpoint-rate';

/**
 * The public API's 429. Without `Stripe-Should-Retry` the SDKs don't retry it on their own (they
 * retry only lock timeouts among 429s): backing off is left to the integration, as with the public API.
 */
export const rateLimited = (reason: RateLimitReason): ApiError =>
  new ApiError({
    status: 429,
    code: 'rate_limit',
    message: 'Request rate limit exceeded. You can learn more about rate limits here https://stripe.com/docs/rate-limits.',
    headers: { 'Stripe-Rate-Limited-Reason': reason },
  });
