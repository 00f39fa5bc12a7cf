import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { checkRoutesAgainstDocument, loadOpenApiDocument, openApiCacheFile, operationsOf, type OperationSpec } from '../../src/kernel/openapi';
import { route, type Route } from '../../src/kernel/route';
import { generatedSchemas, routes } from '../../src/resources';
import { compileParamsValidator } from '../../src/kernel/validate';

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

  test("every operation's parameter schema compiles (validators compile on first use, so start-up no longer proves it)", () => {
    for (const operation of operations) expect(() => compileParamsValidator(operation.paramsSchema).compile()).not.toThrow();
    expect(operations.length).toBeGreaterThan(100);
  });

  test('the parsed YAML kept between starts is what parsing gives, and a loaded document is the same from it', () => {
    const again = loadOpenApiDocument(generatedSchemas); // from the cache the first load filled (or found)
    expect(again).toEqual(document);
    const dir = path.join(__dirname, '..', '..', 'openapi');
    const cached = JSON.parse(readFileSync(openApiCacheFile(), 'utf8'));
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      expect(cached.parts[file]).toEqual(parseYaml(readFileSync(path.join(dir, file), 'utf8')));
    }
  });

  test('query parameters of list operations are in their schema', () => {
    const list = operations.find((o) => o.operationId === 'GetEvents')!;
    expect(Object.keys(list.paramsSchema.properties as object).sort()).toEqual(
      ['created', 'delivery_success', 'ending_before', 'expand', 'limit', 'starting_after', 'type', 'types'].sort(),
    );
  });
});
