import { loadOpenApiDocument, operationsOf, type OperationSpec } from '../../src/kernel/openapi';
import { generatedSchemas } from '../../src/resources';
import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { pathFixtures, validParams } from '../helpers/fixtures';
import {
  baselineFor,
  closeAgent,
  encodeForm,
  generateCases,
  inBatches,
  seededRng,
  sendRaw,
  type ParamsCase,
  type RawRequest,
  type RawResponse,
} from '../helpers/malformed';
import { errorBodyProblems } from '../helpers/responseSchemas';

// Every operation in openapi/ (so new areas are covered as soon as they are documented) gets
// hundreds of malformed requests built from its parameter schema. Each must be answered with a
// 4xx in the public error shape (or, for inputs that may be valid, at least not crash).
// Reproduce a failure with the seed it prints: MALFORMED_SEED=<seed> npx jest test/conformance/malformed.

const SEED = Number(process.env.MALFORMED_SEED ?? 20261123);
const operations = operationsOf(loadOpenApiDocument(generatedSchemas));
const CHUNK = 12;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  closeAgent();
  await t.close();
});

const pathParamsOf = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function fixturesFor(params: readonly string[], key: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  // In path order, so a sub-resource's fixture belongs to the parent made just before it.
  const made: Record<string, string> = {};
  for (const p of params) {
    if (pathFixtures[p]) made[p] = await pathFixtures[p](t, key, made);
    out[p] = p in made ? encodeURIComponent(made[p]) : 'zz_no_fixture';
  }
  return out;
}

/** Ids that can't name an object of this account, shaped after a real one where it helps. */
function junkIds(real: string): string[] {
  const prefix = real.includes('_') ? real.slice(0, real.indexOf('_')) : 'zz';
  return [
    'zz_doesnotexist',
    `${prefix}_${'0'.repeat(24)}`,
    `${real}x`,
    real.toUpperCase(),
    'x'.repeat(6000),
    '%00',
    `${real}%00`,
    '%ZZ',
    '%E2%98%83',
    '..',
    '%2F',
    '%27%20OR%201%3D1--',
    // An id with no lower-case letter (a random coupon id, say) is its own upper-case: not junk.
  ].filter((junk) => junk !== real);
}

function buildRequest(op: OperationSpec, c: ParamsCase, pathValues: Record<string, string>, key: string): RawRequest {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => pathValues[name]);
  const inQuery = op.method === 'get' || c.where === 'query';
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, ...c.headers };
  let url = path;
  let body: Buffer | undefined;
  if (c.rawBody) body = c.rawBody;
  else if (c.text !== undefined && c.text !== '') {
    if (inQuery) url = `${path}?${c.text}`;
    else body = Buffer.from(c.text, 'utf8');
  }
  if (body && c.contentType !== null) headers['Content-Type'] = c.contentType ?? 'application/x-www-form-urlencoded';
  return { method: op.method.toUpperCase(), path: url, headers, body };
}

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);

function problemsOf(c: ParamsCase, res: RawResponse): string[] {
  const problems: string[] = [];
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    problems.push('the body is not JSON');
  }
  if (!/^req_[A-Za-z0-9]{14,}$/.test(String(res.headers['request-id']))) problems.push('no Request-Id header');
  if (res.status >= 500 || res.status < 200) problems.push(`status ${res.status}`);
  else if (c.expect === 'reject' && res.status < 400) problems.push(`status ${res.status}, expected a 4xx`);
  if (res.status >= 400 && body !== undefined) problems.push(...errorBodyProblems(body));
  if (res.status < 300 && body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    problems.push('a 2xx body that is not an object');
  }
  return problems;
}

interface Failure {
  readonly text: string;
}

function describeFailure(c: ParamsCase, req: RawRequest, res: RawResponse | undefined, problems: string[]): Failure {
  const { Authorization: _auth, ...headers } = req.headers;
  const lines = [
    `[${c.label}] expected ${c.expect === 'reject' ? 'a 4xx' : 'no crash'}: ${problems.join('; ')}`,
    `  ${req.method} ${clip(req.path, 300)}`,
    `  headers: ${JSON.stringify(headers)}`,
  ];
  if (req.body) lines.push(`  body: ${clip(JSON.stringify(req.body.toString('latin1')), 300)}`);
  if (res) lines.push(`  → ${res.status} ${clip(res.text, 300)}`);
  return { text: lines.join('\n') };
}

async function check(op: OperationSpec, c: ParamsCase, pathValues: Record<string, string>, key: string, failures: Failure[]): Promise<void> {
  const req = buildRequest(op, c, pathValues, key);
  let res: RawResponse;
  try {
    res = await sendRaw(t.port, req);
  } catch (err) {
    failures.push(describeFailure(c, req, undefined, [`the request failed: ${(err as Error).message}`]));
    return;
  }
  const problems = problemsOf(c, res);
  if (problems.length > 0) failures.push(describeFailure(c, req, res, problems));
}

let totalRequests = 0;

test('every path parameter in openapi/ has a fixture in test/helpers/fixtures.ts', () => {
  const params = [...new Set(operations.flatMap((op) => pathParamsOf(op.path)))];
  expect(params.filter((p) => !pathFixtures[p])).toEqual([]);
});

describe.each(operations.map((op) => [`${op.method.toUpperCase()} ${op.path} (${op.operationId})`, op] as const))('%s', (_title, op) => {
  // POST /v1/accounts has hundreds of nested members, so thousands of cases: give it room on a loaded machine.
  test('malformed input is refused with a 4xx in the error shape, and nothing crashes', async () => {
    const rng = seededRng(SEED ^ hash(op.operationId));
    const limits = { depth: t.config.paramDepthLimit, count: t.config.paramCountLimit, bodyBytes: t.config.bodyLimitBytes };
    const baseline = baselineFor(op.paramsSchema, validParams[op.operationId]);
    const cases = generateCases({ method: op.method, schema: op.paramsSchema, baseline, limits, rng });
    const params = pathParamsOf(op.path);
    const failures: Failure[] = [];
    let sent = 0;

    // Against existing objects: each chunk gets a fresh account with fresh fixtures, so a case
    // that is accepted (and creates or deletes something) can't starve the others.
    await inBatches(chunks(cases, CHUNK), 3, async (group) => {
      const key = newTestKey();
      const ids = await fixturesFor(params, key);
      await Promise.all(group.map((c) => check(op, c, ids, key, failures)));
      sent += group.length;
    });

    // Against ids that name nothing here: always a 4xx, whatever the parameters.
    if (params.length > 0) {
      const key = newTestKey();
      const real = await fixturesFor(params, key);
      const short = cases.filter((c) => c.text !== undefined && c.text.length < 4000 && !c.headers);
      const base: ParamsCase = { label: 'valid parameters', text: encodeForm(baseline), expect: 'reject' };
      const junkCases: [ParamsCase, Record<string, string>][] = [];
      for (const p of params) {
        for (const junk of junkIds(decodeURIComponent(real[p]))) {
          const values = { ...real, [p]: junk };
          junkCases.push([{ ...base, label: `${p}=${clip(junk, 40)} with valid parameters` }, values]);
          for (let i = 0; i < 4; i++) {
            const c = rng.pick(short);
            junkCases.push([{ ...c, label: `${p}=${clip(junk, 40)}, ${c.label}`, expect: 'reject' }, values]);
          }
        }
      }
      await inBatches(junkCases, 12, ([c, values]) => check(op, c, values, key, failures));
      sent += junkCases.length;
    }
    totalRequests += sent;

    // Nothing reached Object.prototype on the way.
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // GET /v1/account takes nothing but `expand` and no path parameter: about 90 cases.
    expect(sent).toBeGreaterThan(80);
    if (failures.length > 0) {
      const shown = failures.slice(0, 40).map((f) => f.text);
      throw new Error(
        `${failures.length} of ${sent} malformed requests to ${op.operationId} were answered wrongly (MALFORMED_SEED=${SEED}):\n\n` +
          shown.join('\n\n') +
          (failures.length > shown.length ? `\n\n… and ${failures.length - shown.length} more` : ''),
      );
    }
  }, 120_000);
});

test('hundreds of malformed requests were sent in all', () => {
  expect(totalRequests).toBeGreaterThan(300);
});
