import type { IncomingMessage } from 'node:http';
import qs from 'qs';
import { ApiError, echo, invalidRequest, parameterUnknown } from './errors';

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
    // A client that hangs up mid-body is the client's doing, not an unexpected failure (nobody reads the answer).
    req.on('error', () => reject(bodyIncomplete()));
    req.on('close', () => {
      if (!req.complete) reject(bodyIncomplete());
    });
  });
}

const bodyIncomplete = (): ApiError =>
  new ApiError({ status: 400, message: 'The request body ended before its declared length: the client closed the connection.', code: 'request_incomplete' });

function bodyTooLarge(limit: number): ApiError {
  return new ApiError({ status: 413, message: `The request body is too large: the limit is ${limit} bytes.`, code: 'request_too_large' });
}

/**
 * `a[]=x&a[]=y` becomes `a[0]=x&a[1]=y` before parsing. qs then runs with parseArrays off, so a
 * numeric segment stays an object key (`metadata[0]=…` is a metadata key, as the SDKs send it) and
 * coerce turns objects keyed 0..n-1 into arrays where the schema wants an array.
 */
function indexPushes(text: string): string {
  if (!text.includes('[]') && !/%5B%5D/i.test(text)) return text;
  const counters = new Map<string, number>();
  // qs makes the same bracket replacement before it splits keys, so nothing else changes meaning.
  return text
    .replace(/%5B/gi, '[')
    .replace(/%5D/gi, ']')
    .split('&')
    .map((part) => {
      const bracketEquals = part.indexOf(']=');
      const equals = part.indexOf('=');
      const end = bracketEquals !== -1 ? bracketEquals + 1 : equals !== -1 ? equals : part.length;
      let key = part.slice(0, end);
      for (let at = key.indexOf('[]'); at !== -1; at = key.indexOf('[]')) {
        const prefix = key.slice(0, at);
        const n = counters.get(prefix) ?? 0;
        counters.set(prefix, n + 1);
        key = `${prefix}[${n}]${key.slice(at + 2)}`;
      }
      return key + part.slice(end);
    })
    .join('&');
}

const PROTO_SEGMENT = /(^|\[)__proto__(\]|(?=\[)|$)/;
/** `name`, `name[a]`, `name[a][0]`…; qs would silently drop text after a closing bracket (`a[b]c`). */
const WELL_FORMED_KEY = /^[^[\]]+(\[[^[\]]*\])*$/;
const printable = (name: string): string => echo(name.replace(/\u0000/g, '\\0'));

/** qs parses bracketed objects and indexed arrays; past a limit it throws rather than silently dropping input. */
export function parseForm(text: string, limits: ParamLimits, source: 'query string' | 'request body'): Record<string, unknown> {
  if (text === '') return {};
  let lastKey = '';
  try {
    return qs.parse(indexPushes(text), {
      depth: limits.depthLimit,
      strictDepth: true,
      parameterLimit: limits.countLimit,
      arrayLimit: limits.countLimit,
      throwOnLimitExceeded: true,
      allowPrototypes: false,
      // Null-prototype objects, so keys such as metadata[constructor] are kept, not dropped as prototype names.
      plainObjects: true,
      allowDots: false,
      parseArrays: false,
      charset: 'utf-8',
      decoder(str, defaultDecoder, charset, type) {
        const decoded: string = defaultDecoder(str, defaultDecoder, charset);
        if (type === 'key') {
          lastKey = decoded;
          // qs would drop a __proto__ segment in silence; name it as the unknown parameter it is.
          const proto = PROTO_SEGMENT.exec(decoded);
          if (proto) throw parameterUnknown(decoded.slice(0, proto.index + proto[0].length));
          if (!WELL_FORMED_KEY.test(decoded)) {
            const param = printable(decoded);
            throw invalidRequest(`Invalid ${source}: the parameter name '${param}' is malformed.`, 'parameter_invalid', param);
          }
        }
        // PostgreSQL text can't hold NUL, and no parameter needs one.
        if (decoded.includes('\u0000')) {
          const param = printable(lastKey);
          throw invalidRequest(`Invalid ${source}: ${param} must not contain NUL characters.`, 'parameter_invalid', param);
        }
        return decoded;
      },
    }) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ApiError) throw err;
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
