import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { coerce, type Schema } from '../../src/kernel/coerce';
import { ApiError } from '../../src/kernel/errors';
import { deref, loadOpenApiDocument, operationsOf } from '../../src/kernel/openapi';
import { bracketPath, compileParamsValidator } from '../../src/kernel/validate';
import { generatedSchemas } from '../../src/resources';
import { createEndpoint, ENDPOINTS, expectError, mustCreate } from './util';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const document = loadOpenApiDocument(generatedSchemas);
const operations = operationsOf(document);
const schemaOf = (operationId: string): Schema => operations.find((o) => o.operationId === operationId)!.paramsSchema;

/** A list operation's parameters plus `created`, the way list operations with a created filter declare it. */
const withCreated: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...schemaOf('GetWebhookEndpoints').properties, created: deref(document, document.components.parameters.created).schema },
};

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('coercion', () => {
  test('integers and booleans are coerced from strings', () => {
    const schema: Schema = { type: 'object', properties: { n: { type: 'integer' }, b: { type: 'boolean' }, x: { type: 'number' } } };
    expect(coerce(schema, { n: '42', b: 'true', x: '1.5' })).toEqual({ n: 42, b: true, x: 1.5 });
    expect(coerce(schema, { n: '-7', b: 'false' })).toEqual({ n: -7, b: false });
  });

  test('values that do not fit are left for the validator', () => {
    const schema: Schema = { type: 'object', properties: { n: { type: 'integer' }, b: { type: 'boolean' } } };
    expect(coerce(schema, { n: '4.2', b: 'yes' })).toEqual({ n: '4.2', b: 'yes' });
    expect(coerce(schema, { n: '99999999999999999999' })).toEqual({ n: '99999999999999999999' });
  });

  test('array items are coerced by the item schema', () => {
    expect(coerce({ type: 'array', items: { type: 'integer' } }, ['1', '2', 'x'])).toEqual([1, 2, 'x']);
  });

  test('indexed form arrays (objects keyed 0..n-1) become arrays only where the schema wants one', () => {
    const schema: Schema = {
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'integer' } }, meta: { type: 'object', additionalProperties: { type: 'string' } } },
    };
    expect(coerce(schema, { list: { 1: '20', 0: '10' }, meta: { 0: 'zero', 7: 'seven' } })).toEqual({ list: [10, 20], meta: { 0: 'zero', 7: 'seven' } });
    // Sparse, or not indexes at all: left alone for the validator to refuse.
    expect(coerce(schema, { list: { 0: '1', 2: '3' } })).toEqual({ list: { 0: '1', 2: '3' } });
    expect(coerce(schema, { list: { a: '1' } })).toEqual({ list: { a: '1' } });
    expect(coerce(schema, { list: { '01': '1' } })).toEqual({ list: { '01': '1' } });
  });

  test('created: a plain integer or a range object', () => {
    const validate = compileParamsValidator(withCreated);
    expect(validate({ created: '1700000000' })).toEqual({ created: 1700000000 });
    expect(validate({ created: { gte: '10', lt: '20' } })).toEqual({ created: { gte: 10, lt: 20 } });
  });

  test('created: an unknown range operator is an unknown parameter, a bad bound a bad integer', () => {
    const validate = compileParamsValidator(withCreated);
    const unknown = errorOf(() => validate({ created: { gte: '1', between: '2' } }));
    expect(unknown.toBody().error).toMatchObject({ code: 'parameter_unknown', param: 'created[between]' });
    const bad = errorOf(() => validate({ created: { gt: 'soon' } }));
    expect(bad.toBody().error).toMatchObject({ code: 'parameter_invalid_integer', param: 'created[gt]', message: 'Invalid integer: soon' });
  });

  test('metadata: an object or an empty string (unset all)', async () => {
    const validate = compileParamsValidator(schemaOf('PostWebhookEndpointsWebhookEndpoint'));
    expect(validate({ metadata: '' })).toEqual({ metadata: '' });
    expect(validate({ metadata: { a: '1', b: '' } })).toEqual({ metadata: { a: '1', b: '' } });
  });

  test('values of `format: password` parameters are never repeated in an error; others are', () => {
    const schema: Schema = {
      type: 'object',
      properties: {
        secret: { type: 'string', format: 'password', maxLength: 5 },
        nested: { type: 'object', properties: { pin: { type: 'integer', format: 'password' } } },
        plain: { type: 'string', maxLength: 5 },
      },
    };
    const validate = compileParamsValidator(schema);
    const long = errorOf(() => validate({ secret: 'hunter22' })).toBody().error;
    expect(long).toMatchObject({ code: 'invalid_string_too_long', param: 'secret' });
    expect(long.message).not.toContain('hunter');
    const pin = errorOf(() => validate({ nested: { pin: '12x4' } })).toBody().error;
    expect(pin).toMatchObject({ code: 'parameter_invalid_integer', param: 'nested[pin]' });
    expect(pin.message).not.toContain('12x4');
    expect(errorOf(() => validate({ plain: 'visible' })).message).toContain('visible');
    // The real operation: an app secret's payload.
    const payload = errorOf(() => compileParamsValidator(schemaOf('PostAppsSecrets'))({ name: 'n', scope: { type: 'account' }, payload: 'p4yl0ad'.repeat(800) }));
    expect(payload.toBody().error).toMatchObject({ code: 'invalid_string_too_long', param: 'payload' });
    expect(payload.message).not.toContain('p4yl0ad');
  });

  test('bracketPath names nested parameters the way forms spell them', () => {
    expect(bracketPath(['metadata', 'foo', 'bar'])).toBe('metadata[foo][bar]');
    expect(bracketPath(['enabled_events', '0'])).toBe('enabled_events[0]');
    expect(bracketPath(['url'])).toBe('url');
  });
});

describe('coercion over HTTP', () => {
  test('limit arrives as a string and is used as an integer', async () => {
    const key = newTestKey();
    for (let i = 0; i < 3; i++) await mustCreate(t, key);
    const res = await t.http().get(`${ENDPOINTS}?limit=2`).set(bearer(key));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
  });

  test('disabled=true / disabled=false toggle the status', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const off = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('disabled=true');
    expect(off.body.status).toBe('disabled');
    const on = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('disabled=false');
    expect(on.body.status).toBe('enabled');
  });

  test('connect=true is accepted as a boolean', async () => {
    const res = await createEndpoint(t, newTestKey(), `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&connect=true`);
    expect(res.status).toBe(200);
    const row = await t.runtime.prisma.webhookEndpoint.findUnique({ where: { id: res.body.id }, select: { connect: true } });
    expect(row?.connect).toBe(true);
  });

  test('metadata= (empty) unsets every key; an empty value unsets one key', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&metadata[a]=1&metadata[b]=2&metadata[c]=3`);
    const one = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('metadata[b]=');
    expect(one.body.metadata).toEqual({ a: '1', c: '3' });
    const all = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('metadata=');
    expect(all.body.metadata).toEqual({});
  });

  test('description: a string, or "" to clear it', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&description=first`);
    expect(created.description).toBe('first');
    const cleared = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('description=');
    expect(cleared.status).toBe(200);
    expect(cleared.body.description).toBeNull();
  });
});

describe('validation errors', () => {
  const create = (body: string) => createEndpoint(t, newTestKey(), body);
  const base = `url=${CLOSED_ORIGIN}/h&enabled_events[]=*`;

  test('an unknown parameter', async () => {
    expectError(await create(`${base}&foo=1`), 400, { code: 'parameter_unknown', param: 'foo', message: 'Received unknown parameter: foo' });
  });

  test('an unknown parameter sent as an object is named by its own name', async () => {
    // The public API names the unknown key, not the leaf below it (…[price_data][product_data]).
    expectError(await create(`${base}&foo[bar]=1`), 400, { code: 'parameter_unknown', param: 'foo', message: 'Received unknown parameter: foo' });
  });

  test('a nested value under a metadata key is an unknown bracketed parameter', async () => {
    expectError(await create(`${base}&metadata[foo][bar]=x`), 400, {
      code: 'parameter_unknown',
      param: 'metadata[foo][bar]',
      message: 'Received unknown parameter: metadata[foo][bar]',
    });
  });

  test('brackets under a scalar parameter are unknown bracketed parameters', async () => {
    expectError(await create(`url[x]=${CLOSED_ORIGIN}/h&enabled_events[]=*`), 400, { code: 'parameter_unknown', param: 'url[x]' });
    expectError(await create(`url=${CLOSED_ORIGIN}/h&enabled_events[0][x]=y`), 400, { code: 'parameter_unknown', param: 'enabled_events[0][x]' });
  });

  test('a missing required parameter', async () => {
    expectError(await create('enabled_events[]=*'), 400, { code: 'parameter_missing', param: 'url', message: 'Missing required param: url.' });
    expectError(await create(`url=${CLOSED_ORIGIN}/h`), 400, {
      code: 'parameter_missing',
      param: 'enabled_events',
      message: 'Missing required param: enabled_events.',
    });
  });

  test('a bad integer', async () => {
    const res = await t.http().get(`${ENDPOINTS}?limit=abc`).set(bearer(newTestKey()));
    expectError(res, 400, { code: 'parameter_invalid_integer', param: 'limit', message: 'Invalid integer: abc' });
    const decimal = await t.http().get(`${ENDPOINTS}?limit=2.5`).set(bearer(newTestKey()));
    expectError(decimal, 400, { code: 'parameter_invalid_integer', param: 'limit' });
  });

  test('an integer out of range', async () => {
    const res = await t.http().get(`${ENDPOINTS}?limit=0`).set(bearer(newTestKey()));
    expectError(res, 400, { code: 'parameter_invalid', param: 'limit', message: 'Invalid limit: must be greater than or equal to 1' });
  });

  test('a bad boolean', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const res = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('disabled=maybe');
    const error = expectError(res, 400, { param: 'disabled', message: 'Invalid boolean: maybe' });
    // The public API's boolean errors carry no code (and so no doc_url).
    expect(error.code).toBeUndefined();
    expect(error.doc_url).toBeUndefined();
    expectError(await create(`${base}&connect=1`), 400, { param: 'connect', message: 'Invalid boolean: 1' });
  });

  test('a bad enum value', async () => {
    const events = await create(`url=${CLOSED_ORIGIN}/h&enabled_events[]=not.an.event`);
    // Every accepted value is listed, however many, and an enum error carries no code.
    const error = expectError(events, 400, { param: 'enabled_events[0]', message: /^Invalid enabled_events\[0\]: must be one of \*, account\.application\.authorized, .+, or [a-z_.]+$/ });
    expect(error.code).toBeUndefined();
    const version = await create(`${base}&api_version=1999-01-01`);
    expect(expectError(version, 400, { param: 'api_version' }).code).toBeUndefined();
  });

  test('an array sent as a plain value', async () => {
    expectError(await create(`url=${CLOSED_ORIGIN}/h&enabled_events=*`), 400, { code: 'parameter_invalid', param: 'enabled_events' });
  });

  test('strings longer than 5000 characters', async () => {
    const res = await create(`url=${CLOSED_ORIGIN}/${'a'.repeat(5000)}&enabled_events[]=*`);
    const error = expectError(res, 400, { code: 'invalid_string_too_long', param: 'url' });
    expect(error.message).toMatch(/must be at most 5000 characters$/);
    expectError(await create(`${base}&description=${'d'.repeat(5001)}`), 400, { code: 'invalid_string_too_long', param: 'description' });
  });

  test('a string of exactly 5000 characters is fine', async () => {
    const res = await create(`${base}&description=${'d'.repeat(5000)}`);
    expect(res.status).toBe(200);
    expect(res.body.description).toHaveLength(5000);
  });

  test('a metadata key longer than 40 characters', async () => {
    const long = 'k'.repeat(41);
    const error = expectError(await create(`${base}&metadata[${long}]=v`), 400, { code: 'parameter_invalid', param: `metadata[${long}]` });
    expect(error.message).toBe(`Invalid key '${long}' in metadata: keys must be at most 40 characters`);
    expect((await create(`${base}&metadata[${'k'.repeat(40)}]=v`)).status).toBe(200);
  });

  test('a metadata value longer than 500 characters', async () => {
    const error = expectError(await create(`${base}&metadata[note]=${'v'.repeat(501)}`), 400, { code: 'invalid_string_too_long', param: 'metadata[note]' });
    expect(error.message).toMatch(/must be at most 500 characters$/);
    expect((await create(`${base}&metadata[note]=${'v'.repeat(500)}`)).status).toBe(200);
  });

  test('more than 50 metadata keys', async () => {
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => `metadata[k${i}]=v`).join('&');
    expectError(await create(`${base}&${pairs(51)}`), 400, { code: 'parameter_invalid', param: 'metadata', message: 'Invalid metadata: it can have at most 50 keys' });
    expect((await create(`${base}&${pairs(50)}`)).status).toBe(200);
  });

  test('more than 50 metadata keys in total after an update', async () => {
    const key = newTestKey();
    const pairs = Array.from({ length: 50 }, (_, i) => `metadata[k${i}]=v`).join('&');
    const created = await mustCreate(t, key, `${base}&${pairs}`);
    const res = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('metadata[extra]=v');
    expectError(res, 400, { code: 'parameter_invalid', param: 'metadata' });
    const swapped = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('metadata[k0]=&metadata[extra]=v');
    expect(swapped.status).toBe(200);
    expect(Object.keys(swapped.body.metadata)).toHaveLength(50);
  });

  test('an empty string where unsetting is not allowed', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const res = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('disabled=');
    expectError(res, 400, {
      code: 'parameter_invalid_empty',
      param: 'disabled',
      message:
        "You passed an empty string for 'disabled'. We assume empty values are an attempt to unset a parameter; however 'disabled' cannot be unset. You should remove 'disabled' from your request or supply a non-empty value.",
    });
    expectError(await create(`url=${CLOSED_ORIGIN}/h&enabled_events=`), 400, { code: 'parameter_invalid_empty', param: 'enabled_events' });
    expectError(await create(`${base}&api_version=`), 400, { code: 'parameter_invalid_empty', param: 'api_version' });
    expectError(await t.http().get(`${ENDPOINTS}?limit=`).set(bearer(key)), 400, { code: 'parameter_invalid_empty', param: 'limit' });
  });

  test('the first problem reported is an unknown parameter, whatever else is wrong', async () => {
    expectError(await create('enabled_events[]=bogus&zzz=1'), 400, { code: 'parameter_unknown', param: 'zzz' });
  });

  test('validation errors carry a doc_url for their code', async () => {
    const error = expectError(await create('enabled_events[]=*'), 400, { code: 'parameter_missing' });
    expect(error.doc_url).toBe('https://stripe.com/docs/error-codes/parameter-missing');
  });
});

describe('a value that matches no form of an anyOf', () => {
  const validate = compileParamsValidator({
    type: 'object',
    additionalProperties: false,
    properties: {
      external_account: {
        anyOf: [
          { type: 'object', additionalProperties: false, required: ['number'], properties: { object: { type: 'string', enum: ['card'] }, number: { type: 'string' } } },
          {
            type: 'object',
            additionalProperties: false,
            required: ['account_number'],
            properties: { object: { type: 'string', enum: ['bank_account'] }, account_number: { type: 'string' }, account_holder_type: { type: 'string', enum: ['company', 'individual'] } },
          },
          { type: 'string', maxLength: 50 },
        ],
      },
    },
  } as Schema);
  const errorOf = (params: Record<string, unknown>): ApiError => {
    try {
      validate(params);
    } catch (err) {
      return err as ApiError;
    }
    throw new Error('expected a validation error');
  };

  test("is judged as the form it was meant for, not as another form's unknown member", () => {
    const bank = errorOf({ external_account: { account_number: '000123456789', account_holder_type: 'nobody' } });
    expect({ message: bank.message, param: bank.param }).toEqual({
      message: 'Invalid external_account[account_holder_type]: must be one of company or individual',
      param: 'external_account[account_holder_type]',
    });
    const card = errorOf({ external_account: { object: 'card' } });
    expect({ code: card.code, param: card.param }).toEqual({ code: 'parameter_missing', param: 'external_account[number]' });
    // A member no form has is still an unknown parameter.
    expect(errorOf({ external_account: { number: '4242', bogus: 'x' } }).param).toBe('external_account[bogus]');
  });
});
