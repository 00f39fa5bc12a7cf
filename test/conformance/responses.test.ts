import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createAccount, createWebhookEndpoint } from '../helpers/fixtures';
import { documentedOperations, expectMatchesResponseSchema, responseSchema, responseSchemaErrors } from '../helpers/responseSchemas';
import { AC, CUSTOM_INDIVIDUAL, EV, WE, errorScenarios, eventsOf, get, scenarios, useApp } from '../helpers/responseScenarios';
import { sdkTypeProblems, sdkVersionProblems, type SdkPackage } from '../helpers/sdkTypes';
import { LATEST_API_VERSION } from '../../src/kernel/versions';

/** Operations the public API removed (2025-03-31.basil): their scenarios run at 2025-02-24.acacia, stripe-node 17's version. */
const REMOVED_LATER: Record<string, SdkPackage> = { GetInvoicesUpcoming: 'stripe-v17', GetInvoicesUpcomingLines: 'stripe-v17' };

// Successful (and error) responses of every documented operation (the scenarios in
// test/helpers/responseScenarios.ts), checked against the schemas openapi/ declares, so the
// document and the implementation can't drift apart, and against the stripe package's types.

let t: TestApp;
beforeAll(async () => {
  // Today's shapes, which the newest package's types describe: pinned, as the default is the contract's older version.
  t = useApp(await startTestApp(), LATEST_API_VERSION);
});
// close() also removes the app's queue keys from Redis.
afterAll(() => t.close());

const operations = documentedOperations();

describe('openapi/ declares every response', () => {
  test.each(operations.map((o) => [o.operationId]))('%s has a JSON 200 schema and the default error response', (operationId) => {
    expect(() => responseSchema(operationId, 200)).not.toThrow();
    expect(responseSchema(operationId, 400)).toEqual(responseSchema(operationId, 500));
    expect(Object.keys(responseSchema(operationId, 404)).sort()).toEqual(['additionalProperties', 'properties', 'required', 'type']);
  });

  test('every operation has a success scenario and an error scenario in this file', () => {
    const ids = operations.map((o) => o.operationId);
    expect(ids.filter((id) => !scenarios[id])).toEqual([]);
    expect(ids.filter((id) => !errorScenarios[id])).toEqual([]);
    // …and no scenario is left over from an operation that is gone.
    expect(Object.keys(scenarios).filter((id) => !ids.includes(id))).toEqual([]);
  });
});

describe.each(operations.filter((o) => scenarios[o.operationId]).map((o) => [o.operationId] as const))('%s', (operationId) => {
  test('successful responses match the declared 200 schema', async () => {
    const answers = await scenarios[operationId](newTestKey());
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) {
      expect({ label: a.label, status: a.status }).toEqual({ label: a.label, status: 200 });
      expectMatchesResponseSchema(operationId, 200, a.body);
    }
  });

  test("successful responses have every member the stripe package's types declare", async () => {
    const answers = await scenarios[operationId](newTestKey());
    // An operation a version removed answers at a version before: the types of the major pinned there.
    const pkg = REMOVED_LATER[operationId];
    const problems = answers.flatMap((a) => (pkg ? sdkVersionProblems(a.body, pkg) : sdkTypeProblems(a.body)).map((p) => `${a.label}: ${p}`));
    expect(problems).toEqual([]);
  });

  test('error responses match the declared default schema', async () => {
    const answers = await errorScenarios[operationId](newTestKey());
    for (const a of answers) {
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
      expectMatchesResponseSchema(operationId, a.status, a.body);
    }
  });
});

describe('the schemas are strict enough to catch drift', () => {
  test('a webhook endpoint with a missing, extra or mistyped member is refused', async () => {
    const key = newTestKey();
    const { secret: _secret, ...endpoint } = await createWebhookEndpoint(t, key);
    const op = 'GetWebhookEndpointsWebhookEndpoint';
    expect(responseSchemaErrors(op, 200, endpoint)).toEqual([]);
    const { url: _url, ...withoutUrl } = endpoint;
    expect(responseSchemaErrors(op, 200, withoutUrl).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, connect: false }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, created: '123' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, status: 'paused' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, object: 'webhook' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...endpoint, metadata: { a: 1 } }).length).toBeGreaterThan(0);
  });

  test('a list with a wrong envelope or a wrong item is refused', async () => {
    const key = newTestKey();
    await createWebhookEndpoint(t, key);
    const { body } = await get(key, WE);
    const op = 'GetWebhookEndpoints';
    expect(responseSchemaErrors(op, 200, body)).toEqual([]);
    expect(responseSchemaErrors(op, 200, { ...body, object: 'array' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...body, url: '/v1/other' }).length).toBeGreaterThan(0);
    const { has_more: _h, ...noHasMore } = body;
    expect(responseSchemaErrors(op, 200, noHasMore).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...body, data: [{ ...body.data[0], livemode: 'no' }] }).length).toBeGreaterThan(0);
  });

  test('an event with a missing, extra or mistyped member is refused', async () => {
    const key = newTestKey();
    const { plain } = await eventsOf(key);
    const { body: event } = await get(key, `${EV}/${plain}`);
    const op = 'GetEventsId';
    expect(responseSchemaErrors(op, 200, event)).toEqual([]);
    const { request: _request, ...withoutRequest } = event;
    expect(responseSchemaErrors(op, 200, withoutRequest).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...event, webhooks: [] }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...event, id: 'ev_1' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 200, { ...event, pending_webhooks: '0' }).length).toBeGreaterThan(0);
  });

  test("an object lacking a member the stripe package's types declare is refused, wherever it sits", async () => {
    const key = newTestKey();
    const { id } = await createAccount(t, key, { ...CUSTOM_INDIVIDUAL, external_account: 'tok_visa_debit' });
    const { body: account } = await get(key, `${AC}/${id}`);
    expect(sdkTypeProblems(account)).toEqual([]);
    const without = (path: string[]) => {
      const copy = structuredClone(account);
      let node = copy;
      for (const segment of path.slice(0, -1)) node = node[segment];
      delete node[path[path.length - 1]];
      return copy;
    };
    expect(sdkTypeProblems(without(['settings', 'payments', 'statement_descriptor_prefix_kana']))).toContain(
      '$<account>.settings.payments.statement_descriptor_prefix_kana is missing',
    );
    expect(sdkTypeProblems(without(['individual', 'relationship', 'authorizer']))).toContain('$<account>.individual.relationship.authorizer is missing');
    expect(sdkTypeProblems(without(['external_accounts', 'data', '0', 'regulated_status']))).toContain(
      '$.external_accounts.data[0]<card>.regulated_status is missing',
    );
    // null only where the type allows it; an object in a list, or in an event, is checked as what it is.
    expect(sdkTypeProblems({ ...account, charges_enabled: null })).toContain('$<account>.charges_enabled is null; the SDK type is boolean');
    const { type: _type, ...untyped } = account;
    expect(sdkTypeProblems({ object: 'list', data: [untyped] })).toContain('$.data[0]<account>.type is missing');
    expect(sdkTypeProblems({ id: 'evt_1', object: 'event', data: { object: untyped } })).toEqual(
      expect.arrayContaining(['$.data.object<account>.type is missing']),
    );
    // An object no SDK type describes is refused too, unless it is the sandbox's own.
    expect(sdkTypeProblems({ id: 'x_1', object: 'widget' })).toEqual(['$: the SDK has no type for objects "widget"']);
    expect(sdkTypeProblems({ id: 'whdel_1', object: 'webhook_delivery' })).toEqual([]);
  });

  test('an error body in another shape is refused', () => {
    const op = 'PostWebhookEndpoints';
    expect(responseSchemaErrors(op, 400, { error: { type: 'invalid_request_error', message: 'm' } })).toEqual([]);
    expect(responseSchemaErrors(op, 400, { message: 'm' }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 400, { error: { type: 'oops', message: 'm' } }).length).toBeGreaterThan(0);
    expect(responseSchemaErrors(op, 400, { error: { message: 'm' } }).length).toBeGreaterThan(0);
  });
});
