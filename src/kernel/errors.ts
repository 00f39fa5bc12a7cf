// The one error type. Everything a client may see as an error is an ApiError; anything else
// becomes a plain 500 api_error in the error middleware.

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
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code?: string;
  readonly param?: string;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.type = init.type ?? (init.status >= 500 ? 'api_error' : 'invalid_request_error');
    this.code = init.code;
    this.param = init.param;
    this.extra = init.extra;
    this.headers = init.headers;
  }

  toBody(requestId?: string): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { type: this.type, message: this.message };
    if (this.code) {
      error.code = this.code;
      error.doc_url = `https://stripe.com/docs/error-codes/${this.code.replace(/_/g, '-')}`;
    }
    if (this.param !== undefined) error.param = this.param;
    if (requestId) error.request_log_url = `https://dashboard.stripe.com/test/logs/${requestId}`;
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

export const internalError = (): ApiError =>
  new ApiError({
    status: 500,
    type: 'api_error',
    message: 'An unknown error occurred while processing your request. Please try again later.',
    headers: { 'Stripe-Should-Retry': 'true' },
  });
