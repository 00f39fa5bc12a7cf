import type { IncomingMessage } from 'node:http';
import qs from 'qs';
import { ApiError, invalidRequest } from './errors';

export interface ParamLimits {
  bodyLimitBytes: number;
  depthLimit: number;
  countLimit: number;
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Reads the raw body up to the limit; larger bodies get a 413 in the error shape. */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(bodyTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function bodyTooLarge(limit: number): ApiError {
  return new ApiError({ status: 413, message: `The request body is too large: the limit is ${limit} bytes.`, code: 'request_too_large' });
}

/** qs parses bracketed objects and `a[]`/indexed arrays; past a limit it throws rather than silently dropping input. */
export function parseForm(text: string, limits: ParamLimits, source: 'query string' | 'request body'): Record<string, unknown> {
  if (text === '') return {};
  try {
    return qs.parse(text, {
      depth: limits.depthLimit,
      strictDepth: true,
      parameterLimit: limits.countLimit,
      arrayLimit: limits.countLimit,
      throwOnLimitExceeded: true,
      allowPrototypes: false,
      allowDots: false,
      parseArrays: true,
      charset: 'utf-8',
    }) as Record<string, unknown>;
  } catch (err) {
    const reason = err instanceof RangeError ? err.message : 'it could not be parsed';
    if (/depth/i.test(reason)) {
      throw invalidRequest(`Invalid ${source}: parameters may be nested at most ${limits.depthLimit} levels deep.`, 'parameter_invalid');
    }
    if (/array limit/i.test(reason)) {
      throw invalidRequest(`Invalid ${source}: arrays may have at most ${limits.countLimit} elements.`, 'parameter_invalid');
    }
    if (/limit/i.test(reason)) {
      throw invalidRequest(`Invalid ${source}: at most ${limits.countLimit} parameters are allowed.`, 'parameter_invalid');
    }
    throw invalidRequest(`Invalid ${source}: ${reason}.`);
  }
}

/** The parameter bag of a request: query string and form body merged (the body wins), as the public API does. */
export async function readParams(req: IncomingMessage, url: string, limits: ParamLimits): Promise<Record<string, unknown>> {
  const q = url.indexOf('?');
  const query = q === -1 ? {} : parseForm(url.slice(q + 1), limits, 'query string');
  if (req.method === 'GET' || req.method === 'HEAD') return query;
  const body = await readBody(req, limits.bodyLimitBytes);
  if (body === '') return query;
  const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (contentType !== FORM_TYPE && contentType !== '') {
    throw invalidRequest(
      `Invalid request: the body must be sent as ${FORM_TYPE}, not ${contentType}.`,
      'invalid_content_type',
    );
  }
  const form = parseForm(body, limits, 'request body');
  return q === -1 ? form : { ...query, ...form };
}
