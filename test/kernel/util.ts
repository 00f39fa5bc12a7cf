import type { Response } from 'supertest';
import { hashKey } from '../../src/kernel/auth';
import { bearer, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';

// Small helpers shared by the kernel tests; webhook endpoints are the vehicle.

export const ENDPOINTS = '/v1/webhook_endpoints';
export const CREATE_BODY = `url=${CLOSED_ORIGIN}/hook&enabled_events[]=*`;

export function createEndpoint(t: TestApp, key: string, body = CREATE_BODY, headers: Record<string, string> = {}) {
  return t.http().post(ENDPOINTS).set(bearer(key)).set(headers).type('form').send(body);
}

/** Creates one endpoint and fails the test unless it worked. */
export async function mustCreate(t: TestApp, key: string, body = CREATE_BODY, headers: Record<string, string> = {}): Promise<any> {
  const res = await createEndpoint(t, key, body, headers);
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface ExpectedError {
  type?: string;
  code?: string | undefined;
  param?: string | undefined;
  message?: string | RegExp;
}

/** Checks the status and the `{error: {...}}` shape; only the members given are compared. */
export function expectError(res: Response, status: number, expected: ExpectedError = {}): Record<string, any> {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error;
  expect(typeof error.type).toBe('string');
  expect(typeof error.message).toBe('string');
  expect(error.type).toBe(expected.type ?? (status >= 500 ? 'api_error' : 'invalid_request_error'));
  if ('code' in expected) expect(error.code).toBe(expected.code);
  if ('param' in expected) expect(error.param).toBe(expected.param);
  if (expected.message instanceof RegExp) expect(error.message).toMatch(expected.message);
  else if (expected.message !== undefined) expect(error.message).toBe(expected.message);
  return error;
}

/** The platform account a key was given (after its first request). */
export async function accountOf(t: TestApp, key: string): Promise<string> {
  const row = await t.runtime.prisma.apiKey.findUnique({ where: { keyHash: hashKey(key) }, select: { accountId: true } });
  if (!row) throw new Error('the key has no account yet');
  return row.accountId;
}

export async function endpointCount(t: TestApp, accountId: string): Promise<number> {
  return t.runtime.prisma.webhookEndpoint.count({ where: { accountId } });
}
