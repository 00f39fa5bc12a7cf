import { loadOpenApiDocument, operationsOf, type OperationSpec } from '../../src/kernel/openapi';
import { API_VERSIONS, LATEST_API_VERSION } from '../../src/kernel/versions';
import { generatedSchemas, requestUpgrader } from '../../src/resources';
import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { pathFixtures, validParams } from '../helpers/fixtures';
import { baselineFor, closeAgent, encodeForm, inBatches, sendRaw, type RawRequest, type RawResponse } from '../helpers/malformed';

// Every parameter of every operation in openapi/ (and every older parameter a request change
// takes, which today's document no longer names) gets values of the wrong shape: nested objects,
// arrays, arrays of objects and a few odd scalars, at the oldest and the newest API version, beside
// the operation's valid parameters. None may be answered with a 5xx: an SDK retries a 5xx (with
// `Stripe-Should-Retry: true`) forever. One request per parameter per shape per version, so it
// stays bounded as operations are added (test/conformance/malformed.test.ts tries many more
// values at the account's version).

const operations = operationsOf(loadOpenApiDocument(generatedSchemas));
const VERSIONS = [API_VERSIONS[0], LATEST_API_VERSION];

/** Each shape as a form fragment for parameter `p`. */
const SHAPES: readonly [string, (p: string) => string][] = [
  ['nested object', (p) => `${p}[a][b]=1`],
  ['object', (p) => `${p}[a]=1`],
  ['array', (p) => `${p}[0]=x&${p}[1]=y`],
  ['array of objects', (p) => `${p}[0][a]=1`],
  ['array of arrays', (p) => `${p}[0][0]=1`],
  ['empty', (p) => `${p}=`],
  ['huge number', (p) => `${p}=1${'0'.repeat(40)}`],
  ['NUL and emoji', (p) => `${p}=%00%F0%9F%92%A9`],
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  closeAgent();
  await t.close();
});

const pathParamsOf = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

async function pathValuesFor(op: OperationSpec, key: string): Promise<Record<string, string>> {
  const made: Record<string, string> = {};
  for (const p of pathParamsOf(op.path)) made[p] = pathFixtures[p] ? await pathFixtures[p](t, key, made) : 'zz_no_fixture';
  return made;
}

/** Top-level parameters: today's and the older ones the operation's request changes read. */
function parametersOf(op: OperationSpec): string[] {
  const today = Object.keys((op.paramsSchema as { properties?: Record<string, unknown> }).properties ?? {});
  return [...new Set([...today, ...requestUpgrader.parametersOf(op.operationId)])];
}

interface Case {
  readonly op: OperationSpec;
  readonly label: string;
  readonly req: RawRequest;
}

function caseFor(op: OperationSpec, pathValues: Record<string, string>, key: string, version: string, param: string, shape: string, text: string): Case {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name]));
  const { [param]: _replaced, ...rest } = baselineFor(op.paramsSchema, validParams[op.operationId]);
  const form = [encodeForm(rest), text].filter(Boolean).join('&');
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, 'Stripe-Version': version };
  const req: RawRequest =
    op.method === 'get'
      ? { method: 'GET', path: `${path}?${form}`, headers }
      : { method: op.method.toUpperCase(), path, headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }, body: Buffer.from(form) };
  return { op, label: `${op.method.toUpperCase()} ${op.path} at ${version}, ${param}: ${shape}`, req };
}

function problemOf(res: RawResponse): string | undefined {
  if (res.status >= 500 || res.status < 200) return `status ${res.status}`;
  try {
    JSON.parse(res.text);
  } catch {
    return 'a body that is not JSON';
  }
  return undefined;
}

test('values of every shape, in every parameter of every operation, at the oldest and newest versions: never a 5xx', async () => {
  const failures: string[] = [];
  let sent = 0;
  // One account (and one set of path fixtures) per operation, so what one operation deletes or
  // cancels leaves the others' fixtures alone.
  await inBatches(operations, 4, async (op) => {
    const key = newTestKey();
    const pathValues = await pathValuesFor(op, key);
    const cases: Case[] = [];
    for (const version of VERSIONS) {
      for (const param of parametersOf(op)) {
        for (const [shape, text] of SHAPES) cases.push(caseFor(op, pathValues, key, version, param, shape, text(param)));
      }
    }
    await inBatches(cases, 4, async (c) => {
      let res: RawResponse;
      try {
        res = await sendRaw(t.port, c.req);
      } catch (err) {
        failures.push(`${c.label}: the request failed: ${(err as Error).message}`);
        return;
      }
      sent++;
      const problem = problemOf(res);
      if (problem) failures.push(`${c.label}: ${problem}\n  ${c.req.body?.toString() ?? c.req.path}\n  → ${res.text.slice(0, 300)}`);
    });
  });
  // Every operation sent something (an operation with no parameters still has `expand` or its version).
  expect(sent).toBeGreaterThan(operations.length * SHAPES.length);
  if (failures.length > 0) throw new Error(`${failures.length} of ${sent} fuzzed requests were answered wrongly:\n\n${failures.slice(0, 40).join('\n\n')}`);
}, 300_000);
