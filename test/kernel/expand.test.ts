import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { ApiError } from '../../src/kernel/errors';
import { ExpandRegistry, listField, MAX_EXPAND_DEPTH, pathField, ref, withheldField, withhold } from '../../src/kernel/expand';
import { VersionRenderer, type VersionChange } from '../../src/kernel/versions';
import type { RequestContext } from '../../src/kernel/route';
import { accountOf, createEndpoint, ENDPOINTS, endpointCount, expectError, mustCreate } from './util';

// Fake object graph: charge.customer → customer, customer.default_source → source,
// source.owner → person, person.employer → company, company.parent → company;
// invoice.lines is an array of line ids; customer.provided_details is shown only when expanded.

const ctx = { requestId: 'req_test' } as unknown as RequestContext;

function fakeRegistry() {
  const calls: { field: string; value: unknown; parent: unknown; ctx: unknown }[] = [];
  const fetcher =
    (field: string, object: string, extra: Record<string, unknown> = {}) =>
    async (value: unknown, parent: Record<string, unknown>, c: RequestContext) => {
      calls.push({ field, value, parent, ctx: c });
      if (value === null || value === undefined) return value ?? null;
      return { id: value, object, ...extra };
    };
  const registry = new ExpandRegistry();
  registry.register('charge', { customer: { type: 'customer', expand: fetcher('customer', 'customer', { default_source: 'src_1' }) } });
  registry.register('customer', {
    default_source: { type: 'source', expand: fetcher('default_source', 'source', { owner: 'per_1' }) },
    provided_details: {
      type: 'details',
      expand: async (_v, parent) => ({ object: 'details', of: parent.id }),
    },
  });
  registry.register('source', { owner: { type: 'person', expand: fetcher('owner', 'person', { employer: 'co_1' }) } });
  registry.register('person', { employer: { type: 'company', expand: fetcher('employer', 'company', { parent: 'co_0' }) } });
  registry.register('company', { parent: { type: 'company', expand: fetcher('parent', 'company', { parent: null }) } });
  registry.register('invoice', { lines: { type: 'line', expand: fetcher('lines', 'line') } });
  registry.register('line', {});
  return { registry, calls };
}

function checkError(registry: ExpandRegistry, paths: string[], rootType: string, isList: boolean | 'search'): ApiError {
  try {
    registry.check(paths, rootType, isList);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the check to fail');
}

function errorOf(fn: () => void): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('ExpandRegistry.check', () => {
  const { registry } = fakeRegistry();

  test('accepts declared fields and nested paths', () => {
    expect(() => registry.check(['customer', 'customer.default_source', 'customer.provided_details'], 'charge', false)).not.toThrow();
    expect(() => registry.check([], 'charge', false)).not.toThrow();
  });

  test('an undeclared field: "This property cannot be expanded (x)."', () => {
    const err = checkError(registry, ['amount'], 'charge', false);
    expect(err.status).toBe(400);
    expect(err.message).toBe('This property cannot be expanded (amount).');
    expect(err.param).toBe('expand');
    expect(checkError(registry, ['customer.bogus'], 'charge', false).message).toBe('This property cannot be expanded (bogus).');
  });

  test('names that exist on every JavaScript object are not fields', () => {
    expect(checkError(registry, ['toString'], 'charge', false).message).toBe('This property cannot be expanded (toString).');
    expect(checkError(registry, ['constructor'], 'charge', false).message).toBe('This property cannot be expanded (constructor).');
  });

  test('a type with nothing declared expands nothing', () => {
    expect(checkError(registry, ['anything'], 'line', false).message).toBe('This property cannot be expanded (anything).');
    expect(checkError(registry, ['anything'], 'unregistered_type', false).message).toBe('This property cannot be expanded (anything).');
  });

  test(`paths may nest ${MAX_EXPAND_DEPTH} levels, not more`, () => {
    expect(MAX_EXPAND_DEPTH).toBe(4);
    expect(() => registry.check(['customer.default_source.owner.employer'], 'charge', false)).not.toThrow();
    const err = checkError(registry, ['customer.default_source.owner.employer.parent'], 'charge', false);
    expect(err.status).toBe(400);
    expect(err.message).toBe('You cannot expand more than 4 levels of a property. Property: customer.default_source.owner.employer.parent');
  });

  test('on a list, paths start with data.', () => {
    expect(() => registry.check(['data.customer', 'data.customer.default_source'], 'charge', true)).not.toThrow();
    expect(() => registry.check(['data.customer.default_source.owner.employer'], 'charge', true)).not.toThrow();
    expect(checkError(registry, ['data.customer.default_source.owner.employer.parent'], 'charge', true).message).toMatch(/more than 4 levels/);
    expect(checkError(registry, ['data.amount'], 'charge', true).message).toBe('This property cannot be expanded (amount).');
  });

  test("on a list, a path that would work on each item suggests 'data.x'", () => {
    const err = checkError(registry, ['customer'], 'charge', true);
    expect(err.message).toBe("This property cannot be expanded (customer). You may want to try expanding 'data.customer' instead.");
    const nested = checkError(registry, ['customer.default_source'], 'charge', true);
    expect(nested.message).toBe(
      "This property cannot be expanded (customer). You may want to try expanding 'data.customer.default_source' instead.",
    );
  });

  test('on a list, an invalid path gets no hint', () => {
    expect(checkError(registry, ['amount'], 'charge', true).message).toBe('This property cannot be expanded (amount).');
  });

  test('on a search result, total_count expands too; paths otherwise as on a list', () => {
    const { registry } = fakeRegistry();
    expect(() => registry.check(['total_count', 'data.customer.default_source'], 'charge', 'search')).not.toThrow();
    expect(checkError(registry, ['total_count'], 'charge', true).message).toBe('This property cannot be expanded (total_count).');
    expect(checkError(registry, ['total_count'], 'charge', false).message).toBe('This property cannot be expanded (total_count).');
    expect(checkError(registry, ['data.total_count'], 'charge', 'search').message).toBe('This property cannot be expanded (total_count).');
    expect(checkError(registry, ['customer'], 'charge', 'search').message).toBe("This property cannot be expanded (customer). You may want to try expanding 'data.customer' instead.");
  });

  test('every path is checked, not only the first', () => {
    expect(checkError(registry, ['customer', 'nope'], 'charge', false).message).toBe('This property cannot be expanded (nope).');
  });

  test('declaring one type twice is a programming error', () => {
    expect(() => registry.register('charge', {})).toThrow('Expandable fields of charge are declared twice');
  });
});

describe('ExpandRegistry.apply', () => {
  test('expands an id into its object and passes the parent and the request context', async () => {
    const { registry, calls } = fakeRegistry();
    const charge = { id: 'ch_1', object: 'charge', customer: 'cus_1' };
    const out = (await registry.apply(charge, ['customer'], ctx)) as any;
    expect(out.customer).toEqual({ id: 'cus_1', object: 'customer', default_source: 'src_1' });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ field: 'customer', value: 'cus_1', ctx });
    expect((calls[0].parent as any).id).toBe('ch_1');
  });

  test('nested paths expand level by level', async () => {
    const { registry } = fakeRegistry();
    const charge = { id: 'ch_1', object: 'charge', customer: 'cus_1' };
    const out = (await registry.apply(charge, ['customer.default_source.owner.employer'], ctx)) as any;
    expect(out.customer.default_source.owner.employer).toEqual({ id: 'co_1', object: 'company', parent: 'co_0' });
    expect(out.customer.default_source.owner.id).toBe('per_1');
  });

  test('two paths sharing a prefix expand the prefix once', async () => {
    const { registry, calls } = fakeRegistry();
    const charge = { id: 'ch_1', object: 'charge', customer: 'cus_1' };
    const out = (await registry.apply(charge, ['customer', 'customer.default_source'], ctx)) as any;
    expect(out.customer.default_source.object).toBe('source');
    expect(calls.filter((c) => c.field === 'customer')).toHaveLength(1);
  });

  test('arrays of ids expand element by element; objects already there are kept', async () => {
    const { registry } = fakeRegistry();
    const kept = { id: 'il_0', object: 'line', note: 'already expanded' };
    const invoice = { id: 'in_1', object: 'invoice', lines: [kept, 'il_1', 'il_2'] };
    const out = (await registry.apply(invoice, ['lines'], ctx)) as any;
    expect(out.lines).toEqual([kept, { id: 'il_1', object: 'line' }, { id: 'il_2', object: 'line' }]);
  });

  test('a field shown only when expanded is computed from the parent', async () => {
    const { registry } = fakeRegistry();
    const customer = { id: 'cus_9', object: 'customer' };
    const out = (await registry.apply(customer, ['provided_details'], ctx)) as any;
    expect(out.provided_details).toEqual({ object: 'details', of: 'cus_9' });
  });

  test('a null reference stays null and deeper segments are skipped', async () => {
    const { registry } = fakeRegistry();
    const charge = { id: 'ch_1', object: 'charge', customer: null };
    const out = (await registry.apply(charge, ['customer.default_source'], ctx)) as any;
    expect(out.customer).toBeNull();
  });

  test('on a list, data.x expands every item', async () => {
    const { registry } = fakeRegistry();
    const page = {
      object: 'list',
      url: '/v1/charges',
      has_more: false,
      data: [
        { id: 'ch_1', object: 'charge', customer: 'cus_1' },
        { id: 'ch_2', object: 'charge', customer: 'cus_2' },
      ],
    };
    const out = (await registry.apply(page, ['data.customer.default_source'], ctx)) as any;
    expect(out.data.map((c: any) => c.customer.id)).toEqual(['cus_1', 'cus_2']);
    expect(out.data.map((c: any) => c.customer.default_source.object)).toEqual(['source', 'source']);
  });

  test('on a search result, data.x expands every item and total_count is left to the search', async () => {
    const { registry } = fakeRegistry();
    const found = { object: 'search_result', url: '/v1/charges/search', has_more: false, next_page: null, total_count: 1, data: [{ id: 'ch_1', object: 'charge', customer: 'cus_1' }] };
    const out = (await registry.apply(found, ['total_count', 'data.customer'], ctx)) as any;
    expect(out.total_count).toBe(1);
    expect(out.data[0].customer).toMatchObject({ id: 'cus_1', object: 'customer' });
  });

  test('no paths: the object is returned unchanged', async () => {
    const { registry, calls } = fakeRegistry();
    const charge = { id: 'ch_1', object: 'charge', customer: 'cus_1' };
    expect(await registry.apply(charge, [], ctx)).toEqual({ id: 'ch_1', object: 'charge', customer: 'cus_1' });
    expect(calls).toHaveLength(0);
  });
});

describe('the object registry: a ref expands through the retrieve its type registered', () => {
  // An order names its buyer by id; the buyer type is another resource's, which registers how to
  // retrieve one. The order's serializer knows only the type's name.
  function registry() {
    const retrieved: string[] = [];
    const r = new ExpandRegistry();
    r.register('order', { buyer: ref('buyer'), buyers: ref('buyer') });
    r.register('buyer', { friend: ref('buyer') }, async (c, id) => {
      retrieved.push(`${(c as { requestId: string }).requestId} ${id}`);
      return id === 'by_gone' ? null : { id, object: 'buyer', friend: 'by_2' };
    });
    r.checkReferences();
    return { r, retrieved };
  }

  test('ids become objects, in arrays too, and deeper paths go on through the retrieved object', async () => {
    const { r, retrieved } = registry();
    const order = { id: 'or_1', object: 'order', buyer: 'by_1', buyers: ['by_1', { id: 'by_9', object: 'buyer' }] };
    r.check(['buyer.friend', 'buyers'], 'order', false);
    const out = (await r.apply(order, ['buyer.friend', 'buyers'], ctx)) as any;
    expect(out.buyer).toEqual({ id: 'by_1', object: 'buyer', friend: { id: 'by_2', object: 'buyer', friend: 'by_2' } });
    expect(out.buyers).toEqual([{ id: 'by_1', object: 'buyer', friend: 'by_2' }, { id: 'by_9', object: 'buyer' }]);
    expect(retrieved).toEqual(['req_test by_1', 'req_test by_2', 'req_test by_1']);
  });

  test('an id the caller has nothing for expands to null; a null stays null', async () => {
    const { r } = registry();
    expect(await r.apply({ id: 'or_2', object: 'order', buyer: 'by_gone' }, ['buyer'], ctx)).toEqual({ id: 'or_2', object: 'order', buyer: null });
    expect(await r.apply({ id: 'or_3', object: 'order', buyer: null }, ['buyer'], ctx)).toEqual({ id: 'or_3', object: 'order', buyer: null });
  });

  test('a ref to a type nothing retrieves stops start-up, naming the field', () => {
    const r = new ExpandRegistry();
    r.register('order', { buyer: ref('buyer') });
    r.register('buyer', {});
    expect(() => r.checkReferences()).toThrow('order.buyer refers to buyer, which no resource retrieves');
  });
});

describe('withheld fields and the sub-objects that hold them', () => {
  // A person's `ssn` is withheld; a check's `report` is a sub-object always shown whose
  // `number` is withheld; `secret_profile` (withheld) holds a withheld `pin`.
  function registry() {
    const r = new ExpandRegistry();
    r.register('person', { ssn: withheldField('person.ssn'), report: pathField('person.report'), secret_profile: withheldField('person.profile') });
    r.register('person.report', { number: withheldField('person.report.number') });
    r.register('person.profile', { pin: withheldField('person.profile.pin') });
    return r;
  }
  const person = () =>
    withhold(
      { id: 'per_1', object: 'person', name: 'J', report: withhold({ status: 'ok' }, { number: 'N1' }) },
      { ssn: '000', secret_profile: withhold({ color: 'red' }, { pin: '1234' }) },
    );

  test('withheld values never reach JSON', () => {
    expect(JSON.parse(JSON.stringify(person()))).toEqual({ id: 'per_1', object: 'person', name: 'J', report: { status: 'ok' } });
  });

  test('expanding brings them back, through sub-objects and parents that are withheld too', async () => {
    const out = (await registry().apply(person(), ['ssn', 'report.number', 'secret_profile.pin'], ctx)) as any;
    expect(JSON.parse(JSON.stringify(out))).toEqual({
      id: 'per_1',
      object: 'person',
      name: 'J',
      ssn: '000',
      report: { status: 'ok', number: 'N1' },
      secret_profile: { color: 'red', pin: '1234' },
    });
    const parentOnly = (await registry().apply(person(), ['secret_profile'], ctx)) as any;
    expect(JSON.parse(JSON.stringify(parentOnly.secret_profile))).toEqual({ color: 'red' });
  });

  test('a withheld value that was never set expands to null; a missing sub-object stays missing', async () => {
    const bare = { id: 'per_2', object: 'person' };
    const out = (await registry().apply(bare, ['ssn', 'report.number'], ctx)) as any;
    expect(out).toEqual({ id: 'per_2', object: 'person', ssn: null });
  });

  test('a value withheld as undefined stays absent when expanded (an optional field with nothing to show)', async () => {
    const none = withhold({ id: 'per_3', object: 'person' }, { ssn: undefined });
    const out = (await registry().apply(none, ['ssn'], ctx)) as any;
    expect(out).not.toHaveProperty('ssn', null);
    expect(JSON.parse(JSON.stringify(out))).toEqual({ id: 'per_3', object: 'person' });
  });

  test('a path field leads to expandable fields but is not expandable itself', () => {
    expect(() => registry().check(['report.number', 'secret_profile.pin'], 'person', false)).not.toThrow();
    expect(checkError(registry(), ['report'], 'person', false).message).toBe('This property cannot be expanded (report).');
    expect(checkError(registry(), ['report.status'], 'person', false).message).toBe('This property cannot be expanded (status).');
    expect(checkError(registry(), ['report'], 'person', true).message).toBe('This property cannot be expanded (report).');
    expect(checkError(registry(), ['report.number'], 'person', true).message).toMatch(/try expanding 'data.report.number'/);
  });
});

describe('fields by API version (VersionChange.expandable)', () => {
  // A ticket's `owner` (an id) was removed in 2024-04-10 (today: `assignee`, added then); before
  // it, older versions show `owner` and a `history` list of notes, each with an `author` id.
  const renamed: VersionChange = {
    version: '2024-04-10',
    object: 'ticket',
    description: 'Replaces `owner` with `assignee`.',
    expandable: { owner: ref('person'), assignee: null, history: listField('note') },
    downgrade: (o) => {
      const { assignee, ...rest } = o;
      return { ...rest, owner: assignee, history: { object: 'list', data: [{ object: 'note', author: 'per_2' }], has_more: false } };
    },
  };
  const OLD = '2023-10-16';
  const NEW = '2024-04-10';
  const versions = new VersionRenderer([renamed]);
  const retrieved: string[] = [];
  const registry = new ExpandRegistry(versions);
  registry.register('ticket', { assignee: ref('person') });
  registry.register('note', { author: ref('person') });
  registry.register('person', { employer: ref('company') }, async (_c, id) => (retrieved.push(id), { id, object: 'person', employer: 'co_1', at: _c.apiVersion }));
  registry.register('company', {}, async (_c, id) => ({ id, object: 'company' }));
  registry.checkReferences();
  const ticket = () => ({ id: 'tk_1', object: 'ticket', assignee: 'per_1' });
  const at = (apiVersion: string) => ({ ...ctx, apiVersion }) as RequestContext;

  test('the check follows the version: what it removed and added', () => {
    expect(() => registry.check(['owner.employer', 'history.data.author.employer'], 'ticket', false, OLD)).not.toThrow();
    expect(() => registry.check(['assignee'], 'ticket', false, NEW)).not.toThrow();
    for (const [path, segment] of [['assignee', 'assignee'], ['history', 'history'], ['history.author', 'author'], ['history.data', 'data']]) {
      expect(errorOf(() => registry.check([path], 'ticket', false, OLD)).message).toBe(`This property cannot be expanded (${segment}).`);
    }
    expect(errorOf(() => registry.check(['owner'], 'ticket', false, NEW)).message).toBe('This property cannot be expanded (owner).');
  });

  test('an older version expands its own field on the rendered object, the rest of the path on the expanded object', async () => {
    retrieved.length = 0;
    const out = (await registry.render(ticket(), ['owner.employer'], at(OLD))) as Record<string, any>;
    expect(out).toEqual({ id: 'tk_1', object: 'ticket', owner: { id: 'per_1', object: 'person', employer: { id: 'co_1', object: 'company' }, at: OLD }, history: expect.any(Object) });
    expect(retrieved).toEqual(['per_1']);
  });

  test('a list older versions show is gone through by its data', async () => {
    const out = (await registry.render(ticket(), ['history.data.author'], at(OLD))) as Record<string, any>;
    expect(out.history.data[0].author).toMatchObject({ id: 'per_2', object: 'person' });
    expect(out.owner).toBe('per_1');
  });

  test('the newest version is unchanged; no paths renders only', async () => {
    const out = (await registry.render(ticket(), ['assignee'], at(NEW))) as Record<string, any>;
    expect(out).toEqual({ id: 'tk_1', object: 'ticket', assignee: expect.objectContaining({ id: 'per_1', object: 'person' }) });
    retrieved.length = 0;
    expect(await registry.render(ticket(), [], at(OLD))).toMatchObject({ owner: 'per_1' });
    expect(retrieved).toEqual([]);
  });

  test('a version ref to a type nothing retrieves stops start-up', () => {
    const bad = new ExpandRegistry(new VersionRenderer([{ ...renamed, expandable: { owner: ref('ghost') } }]));
    bad.register('ticket', {});
    expect(() => bad.checkReferences()).toThrow('ticket before 2024-04-10.owner refers to ghost, which no resource retrieves');
  });

  test('fields one area gives another type join it; twice is a programming error', () => {
    const r = new ExpandRegistry();
    r.register('ticket', { assignee: ref('person') });
    r.extend('ticket', { watchers: { type: 'person', list: true, expand: async () => ({ object: 'list', data: [] }) } });
    expect(() => r.check(['watchers', 'watchers.data.employer'], 'ticket', false)).toThrow('This property cannot be expanded (employer).');
    expect(() => r.check(['watchers'], 'ticket', false)).not.toThrow();
    expect(() => r.extend('ticket', { assignee: ref('person') })).toThrow('ticket.assignee is declared twice');
    expect(() => r.extend('nothing', {})).toThrow('nothing, which no area registers');
  });
});

describe('expand over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('expand[]=foo on a webhook endpoint is a 400', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const res = await t.http().get(`${ENDPOINTS}/${created.id}?expand[]=foo`).set(bearer(key));
    expectError(res, 400, { param: 'expand', message: 'This property cannot be expanded (foo).' });
  });

  test('on the list, expand[]=data.foo names foo, and expand[]=foo gets no hint', async () => {
    const key = newTestKey();
    expectError(await t.http().get(`${ENDPOINTS}?expand[]=data.foo`).set(bearer(key)), 400, { message: 'This property cannot be expanded (foo).' });
    expectError(await t.http().get(`${ENDPOINTS}?expand[]=foo`).set(bearer(key)), 400, { message: 'This property cannot be expanded (foo).' });
  });

  test('a create with a bad expand creates nothing', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const res = await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/h&enabled_events[]=*&expand[]=secret`);
    expectError(res, 400, { message: 'This property cannot be expanded (secret).' });
    expect(await endpointCount(t, await accountOf(t, key))).toBe(1);
  });

  test('expand must be an array', async () => {
    const res = await t.http().get(`${ENDPOINTS}?expand=foo`).set(bearer(newTestKey()));
    expectError(res, 400, { code: 'parameter_invalid', param: 'expand' });
  });
});
