import { checkRoutesAgainstDocument, loadOpenApiDocument, operationsOf, type OperationSpec } from '../../src/kernel/openapi';
import { route, type Route } from '../../src/kernel/route';
import { generatedSchemas, routes } from '../../src/resources';

const handler = async () => ({});
const op = (method: OperationSpec['method'], path: string, operationId: string): OperationSpec => ({
  method,
  path,
  operationId,
  paramsSchema: { type: 'object' },
});

describe('the router is checked against the document at boot', () => {
  const ops = [op('get', '/v1/things', 'GetThings'), op('post', '/v1/things/{thing}', 'PostThingsThing')];
  const routes: Route[] = [
    route('get', '/v1/things', 'GetThings', { object: 'thing', list: true }, handler),
    route('post', '/v1/things/{thing}', 'PostThingsThing', { object: 'thing' }, handler),
  ];

  test('a router and document that agree pass', () => {
    expect(() => checkRoutesAgainstDocument(routes, ops)).not.toThrow();
  });

  test('a route with no operation in the document fails start-up', () => {
    const extra = [...routes, route('delete', '/v1/things/{thing}', 'DeleteThingsThing', { object: 'thing' }, handler)];
    expect(() => checkRoutesAgainstDocument(extra, ops)).toThrow(/DeleteThingsThing\) has no operation in openapi/);
  });

  test('an operation with no route fails start-up', () => {
    expect(() => checkRoutesAgainstDocument(routes.slice(0, 1), ops)).toThrow(/operation PostThingsThing \(POST \/v1\/things\/\{thing\}\) has no route/);
  });

  test('a route whose method or path differs from its operation fails start-up', () => {
    const wrong = [routes[0], route('post', '/v1/things/{id}', 'PostThingsThing', { object: 'thing' }, handler)];
    expect(() => checkRoutesAgainstDocument(wrong, ops)).toThrow(/PostThingsThing is POST \/v1\/things\/\{id\} but openapi\/ says POST \/v1\/things\/\{thing\}/);
  });

  test('one operation routed twice fails start-up', () => {
    expect(() => checkRoutesAgainstDocument([...routes, routes[0]], ops)).toThrow(/GetThings is routed twice/);
  });
});

describe("the project's own document", () => {
  const document = loadOpenApiDocument(generatedSchemas);
  const operations = operationsOf(document);

  test('is OpenAPI 3.1 and every resource route has its operation, and the reverse', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(() => checkRoutesAgainstDocument(routes, operations)).not.toThrow();
  });

  test("each operation's parameter schema refuses unknown parameters and lists its required ones", () => {
    const create = operations.find((o) => o.operationId === 'PostWebhookEndpoints')!;
    expect(create.paramsSchema.additionalProperties).toBe(false);
    expect(create.paramsSchema.required).toEqual(['enabled_events', 'url']);
    // $refs are inlined: the event-type list comes from code.
    const events = (create.paramsSchema.properties as any).enabled_events;
    expect(events.items.enum).toContain('account.updated');
    expect(events.items.enum).toContain('*');
  });

  test('query parameters of list operations are in their schema', () => {
    const list = operations.find((o) => o.operationId === 'GetEvents')!;
    expect(Object.keys(list.paramsSchema.properties as object).sort()).toEqual(
      ['created', 'delivery_success', 'ending_before', 'expand', 'limit', 'starting_after', 'type', 'types'].sort(),
    );
  });
});
