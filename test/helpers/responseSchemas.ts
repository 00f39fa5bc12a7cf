import Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { deref, loadOpenApiDocument, type OpenApiDocument } from '../../src/kernel/openapi';
import { generatedSchemas } from '../../src/resources';

// Response conformance: the OpenAPI document (openapi/*.yaml, merged as the app merges it) is
// the contract, so any test can check a body against the schema its operation declares. The
// document is OpenAPI 3.1, i.e. JSON Schema 2020-12; $refs are inlined with the kernel's deref.

export interface DocumentedOperation {
  readonly method: 'get' | 'post' | 'delete';
  readonly path: string;
  readonly operationId: string;
  /** The raw operation object from the document. */
  readonly operation: Record<string, any>;
}

let cachedDocument: OpenApiDocument | undefined;

/** The merged document, loaded once per test file. */
export function openApiDocument(): OpenApiDocument {
  return (cachedDocument ??= loadOpenApiDocument(generatedSchemas));
}

/** Every public operation (the kernel's own endpoints, marked `x-kernel`, are left out). */
export function documentedOperations(): DocumentedOperation[] {
  const out: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(openApiDocument().paths)) {
    for (const method of ['get', 'post', 'delete'] as const) {
      const operation = item[method];
      if (!operation || operation['x-kernel']) continue;
      out.push({ method, path, operationId: operation.operationId, operation });
    }
  }
  return out;
}

export function documentedOperation(operationId: string): DocumentedOperation {
  const op = documentedOperations().find((o) => o.operationId === operationId);
  if (!op) throw new Error(`The OpenAPI document has no operation ${operationId}`);
  return op;
}

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
const validators = new Map<string, ValidateFunction>();

/**
 * The JSON schema an operation declares for a status: the exact status code, else `default`
 * (for errors only: a 200 must be declared explicitly). $refs are inlined.
 */
export function responseSchema(operationId: string, status: number): Record<string, unknown> {
  const { operation } = documentedOperation(operationId);
  const responses: Record<string, any> = operation.responses ?? {};
  let response = responses[String(status)];
  if (response === undefined && (status < 200 || status >= 300)) response = responses.default;
  if (response === undefined) throw new Error(`${operationId} declares no response for status ${status}`);
  const resolved = deref(openApiDocument(), response);
  const schema = resolved?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${operationId} declares no application/json schema for status ${status}`);
  return schema;
}

function validatorFor(operationId: string, status: number): ValidateFunction {
  const cacheKey = `${operationId} ${status}`;
  let validate = validators.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(responseSchema(operationId, status));
    validators.set(cacheKey, validate);
  }
  return validate;
}

const formatErrors = (errors: ErrorObject[]): string[] =>
  errors.map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);

/** The schema violations of `body`, or an empty list when it conforms. */
export function responseSchemaErrors(operationId: string, status: number, body: unknown): string[] {
  const validate = validatorFor(operationId, status);
  return validate(body) ? [] : formatErrors(validate.errors ?? []);
}

const truncate = (text: string, max = 2000): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/** Fails the test with the violations and the body when `body` does not match the declared schema. */
export function expectMatchesResponseSchema(operationId: string, status: number, body: unknown): void {
  const errors = responseSchemaErrors(operationId, status, body);
  if (errors.length > 0) {
    throw new Error(
      `The ${status} response of ${operationId} does not match openapi/:\n- ${errors.join('\n- ')}\nbody: ${truncate(JSON.stringify(body))}`,
    );
  }
}

const errorValidator = (): ValidateFunction => {
  const key = '#error';
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(deref(openApiDocument(), { $ref: '#/components/schemas/error' }));
    validators.set(key, validate);
  }
  return validate;
};

export const ERROR_TYPES = ['invalid_request_error', 'api_error', 'card_error', 'idempotency_error'] as const;

/**
 * Problems with an error body: it must match the document's `error` schema and carry the members
 * every SDK reads (`type` one of the four, a non-empty `message`).
 */
export function errorBodyProblems(body: unknown): string[] {
  const validate = errorValidator();
  const problems = validate(body) ? [] : formatErrors(validate.errors ?? []);
  const error = (body as any)?.error;
  if (!error || typeof error !== 'object') return problems.length ? problems : ['no `error` object'];
  if (!(ERROR_TYPES as readonly string[]).includes(error.type)) problems.push(`error.type is ${JSON.stringify(error.type)}`);
  if (typeof error.message !== 'string' || error.message === '') problems.push('error.message is missing or empty');
  return problems;
}

export function expectErrorBody(body: unknown): void {
  const problems = errorBodyProblems(body);
  if (problems.length > 0) throw new Error(`Not an error in the public API's shape:\n- ${problems.join('\n- ')}\nbody: ${truncate(JSON.stringify(body))}`);
}
