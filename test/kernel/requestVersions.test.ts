import { ApiError, parameterMissing, parameterUnknown, resourceMissing } from '../../src/kernel/errors';
import { formEntries, ParamRenames, renamed, RequestUpgrader, type RequestChange } from '../../src/kernel/requestVersions';
import { compileParamsValidator } from '../../src/kernel/validate';
import { LATEST_API_VERSION } from '../../src/kernel/versions';
import { requestChanges, requestUpgrader, routes } from '../../src/resources';

// Request parameters by version: each change maps the parameters of the versions before it onto
// those of its own version, oldest first, only for a request at an older version; errors then
// name what the request sent.

/** `label` became `name` in 2020-08-27, then `name` became `title` in 2024-04-10. */
const first: RequestChange = { version: '2020-08-27', operation: 'PostWidgets', description: 'Renames `label` to `name`.', takes: { label: {} }, upgrade: renamed('label', 'name') };
const second: RequestChange = { version: '2024-04-10', operation: 'PostWidgets', description: 'Renames `name` to `title`.', takes: { name: {} }, upgrade: renamed('name', 'title') };
const other: RequestChange = { version: '2024-04-10', operation: 'PostGadgets', description: 'Renames `colour` to `color`.', takes: { colour: {} }, upgrade: renamed('colour', 'color') };
// Declared newest first: the upgrader orders them itself.
const upgrader = new RequestUpgrader([second, other, first]);

const schema = { type: 'object', additionalProperties: false, properties: { title: { type: 'string', maxLength: 5 }, size: { type: 'integer' } } } as const;
const validate = compileParamsValidator(schema as any);

const thrown = (f: () => unknown): ApiError => {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('nothing thrown');
};

test('a request older than every change goes through them all, oldest first', () => {
  expect(upgrader.pending('PostWidgets', '2019-12-03')).toEqual([first, second]);
  const { params, names } = upgrader.upgrade('PostWidgets', '2019-12-03', { label: 'W', size: '3' });
  expect(params).toEqual({ title: 'W', size: '3' });
  expect(validate(params)).toEqual({ title: 'W', size: 3 });
  expect(names.nameOf('title')).toBe('label');
});

test('only the changes after the request’s version apply', () => {
  expect(upgrader.pending('PostWidgets', '2020-08-27')).toEqual([second]);
  expect(upgrader.upgrade('PostWidgets', '2022-11-15', { name: 'W' }).params).toEqual({ title: 'W' });
  // Its own version's parameter name passes through the older change untouched.
  expect(upgrader.upgrade('PostWidgets', '2019-12-03', { name: 'W' }).params).toEqual({ title: 'W' });
});

test('a request at or after a change is not upgraded: the old name is an unknown parameter there', () => {
  const raw = { label: 'W' };
  for (const version of ['2024-04-10', LATEST_API_VERSION]) {
    const { params, names } = upgrader.upgrade('PostWidgets', version, raw);
    expect(params).toBe(raw);
    expect(names.size).toBe(0);
    expect(thrown(() => validate(params))).toMatchObject({ code: 'parameter_unknown', param: 'label', message: 'Received unknown parameter: label' });
  }
  // Between the two changes `label` is gone already.
  expect(thrown(() => validate(upgrader.upgrade('PostWidgets', '2022-11-15', { label: 'W' }).params))).toMatchObject({ code: 'parameter_unknown', param: 'label' });
});

test('other operations are left alone, and the bag sent is never changed', () => {
  const raw = { label: 'W', colour: 'red' };
  expect(upgrader.upgrade('PostGadgets', '2019-12-03', raw).params).toEqual({ label: 'W', color: 'red' });
  expect(upgrader.upgrade('GetWidgets', '2019-12-03', raw).params).toBe(raw);
  expect(upgrader.upgrade('PostWidgets', '2019-12-03', raw).params).toEqual({ title: 'W', colour: 'red' });
  expect(raw).toEqual({ label: 'W', colour: 'red' });
});

test('an old and a new name at once is a 400 naming both', () => {
  expect(thrown(() => upgrader.upgrade('PostWidgets', '2022-11-15', { name: 'W', title: 'T' }))).toMatchObject({
    status: 400,
    code: 'parameters_exclusive',
    param: 'name',
    message: 'You may only specify one of these parameters: name, title.',
  });
});

test('errors about an upgraded parameter name the one the request sent', () => {
  const { params, names } = upgrader.upgrade('PostWidgets', '2019-12-03', { label: 'far too long' });
  const invalid = thrown(() => validate(params));
  expect(invalid.param).toBe('title');
  expect(names.apply(invalid)).toMatchObject({ status: 400, code: 'invalid_string_too_long', param: 'label' });
  expect(names.apply(parameterMissing('title'))).toMatchObject({ param: 'label', message: 'Missing required param: label.' });
  // A lookup's message names the object, not the parameter: only `param` changes.
  expect(names.apply(resourceMissing('widget', 'w_1', 'title', 400))).toMatchObject({ param: 'label', message: "No such widget: 'w_1'" });
  const unrelated = parameterMissing('size');
  expect(names.apply(unrelated)).toBe(unrelated);
});

test('renames: the longest match wins, and parameters inside a renamed one follow it', () => {
  const names = new ParamRenames();
  names.rename('promotion', 'coupon');
  names.rename('promotion[coupon]', 'coupon');
  names.rename('items[0][price]', 'items[0][plan]');
  expect(names.nameOf('promotion')).toBe('coupon');
  expect(names.nameOf('promotion[coupon]')).toBe('coupon');
  expect(names.nameOf('promotion[coupon][x]')).toBe('coupon[x]');
  expect(names.nameOf('promotionx')).toBe('promotionx');
  expect(names.nameOf('items[0][price]')).toBe('items[0][plan]');
  expect(names.nameOf('items[1][price]')).toBe('items[1][price]');
});

test('form arrays arrive as arrays or as objects keyed by index', () => {
  expect(formEntries(['a', 'b'])).toEqual([['0', 'a'], ['1', 'b']]);
  expect(formEntries({ 0: 'a', 1: 'b' })).toEqual([['0', 'a'], ['1', 'b']]);
  expect(formEntries('a')).toEqual([]);
  expect(formEntries(undefined)).toEqual([]);
});

test('a change naming an unknown version is refused at start', () => {
  expect(() => new RequestUpgrader([{ ...first, version: '2020-13-01' }])).toThrow(/unknown version 2020-13-01/);
});

test("the registry's changes name known versions and operations the app serves", () => {
  expect(requestChanges.length).toBeGreaterThan(0);
  const served = new Set(routes.map((r) => r.operationId));
  for (const operation of requestUpgrader.operations) expect(served).toContain(operation);
  for (const change of requestChanges) expect(change.description).not.toBe('');
});

test('`kept` parameters skip validation before the change, as strings; from it on they are unknown', () => {
  const keeping: RequestChange = { version: '2024-04-10', operation: 'PostBoxes', description: 'Removes `token`.', takes: {}, upgrade: (p) => p, kept: ['token'] };
  const boxes = new RequestUpgrader([keeping]);
  const old = boxes.upgrade('PostBoxes', '2023-10-16', { title: 'B', token: 'abc' });
  expect(old.params).toEqual({ title: 'B' });
  expect(old.kept).toEqual({ token: 'abc' });
  expect(validate(old.params)).toEqual({ title: 'B' });
  expect(boxes.upgrade('PostBoxes', '2023-10-16', { title: 'B' }).kept).toEqual({});
  expect(thrown(() => boxes.upgrade('PostBoxes', '2023-10-16', { token: { a: '1' } }))).toMatchObject({ status: 400, param: 'token' });
  const now = boxes.upgrade('PostBoxes', '2024-04-10', { title: 'B', token: 'abc' });
  expect(now.kept).toEqual({});
  expect(thrown(() => validate(now.params))).toMatchObject({ code: 'parameter_unknown', param: 'token' });
});

test('an upgrade sees only values of the shapes it takes: anything else is a 400 before it runs', () => {
  let seen: unknown;
  const reading: RequestChange = {
    version: '2024-04-10',
    operation: 'PostBoxes',
    description: 'Replaces `sizes` (a list of names) with `size`.',
    takes: { sizes: { type: 'array', items: { type: 'string', maxLength: 5 } } },
    upgrade: (p) => {
      seen = p.sizes;
      // Reads each entry as a string: a nested object here would be a TypeError (a 500).
      return { ...p, sizes: undefined, size: Object.values(p.sizes ?? {}).map((s) => `${s as string}`.toUpperCase())[0] };
    },
  };
  const boxes = new RequestUpgrader([reading]);
  expect(boxes.upgrade('PostBoxes', '2023-10-16', { sizes: { 0: 's' } }).params.size).toBe('S');
  seen = undefined;
  // A null-prototype object (as qs parses one) can't even be turned into a string.
  const nested = Object.assign(Object.create(null), { a: '1' });
  expect(thrown(() => boxes.upgrade('PostBoxes', '2023-10-16', { sizes: { 0: nested } }))).toMatchObject({ status: 400, code: 'parameter_unknown', param: 'sizes[0][a]' });
  expect(thrown(() => boxes.upgrade('PostBoxes', '2023-10-16', { sizes: 'small' }))).toMatchObject({ status: 400, param: 'sizes' });
  expect(thrown(() => boxes.upgrade('PostBoxes', '2023-10-16', { sizes: ['toolarge'] }))).toMatchObject({ status: 400, param: 'sizes[0]' });
  expect(seen).toBeUndefined();
  // At or after the change nothing is checked: `sizes` is an unknown parameter there.
  expect(boxes.upgrade('PostBoxes', '2024-04-10', { sizes: 'small' }).params).toEqual({ sizes: 'small' });
  expect(boxes.parametersOf('PostBoxes')).toEqual(['sizes']);
});

describe('a removed parameter sent at or after the change names what replaced it', () => {
  const removed: RequestChange = {
    version: '2024-04-10',
    operation: 'PostWidgets',
    description: 'Replaces `label` and `shape[corners]` with `title` and `shape[edges]`.',
    takes: {},
    upgrade: (p) => p,
    replaced: { label: '`title`', 'shape[corners]': '`shape[edges]`' },
  };
  const explaining = new RequestUpgrader([removed]);
  const unknown = (param: string) => thrown(() => validate({ [param]: 'x' }));

  test('at the version and after: the unknown parameter error says what to send instead', () => {
    for (const version of ['2024-04-10', LATEST_API_VERSION]) {
      const error = explaining.explain('PostWidgets', version, unknown('label'));
      expect(error).toMatchObject({ status: 400, code: 'parameter_unknown', param: 'label' });
      expect(error.message).toBe('Received unknown parameter: label. label was removed in API version 2024-04-10: use `title` instead.');
    }
    const nested = explaining.explain('PostWidgets', LATEST_API_VERSION, parameterUnknown('shape[corners][0]'));
    expect(nested.message).toContain('shape[corners] was removed in API version 2024-04-10: use `shape[edges]` instead.');
  });

  test('before the version, for another operation, another parameter or another error: unchanged', () => {
    const error = unknown('label');
    expect(explaining.explain('PostWidgets', '2023-10-16', error)).toBe(error);
    expect(explaining.explain('PostGadgets', LATEST_API_VERSION, error)).toBe(error);
    const size = unknown('sizes');
    expect(explaining.explain('PostWidgets', LATEST_API_VERSION, size)).toBe(size);
    const missing = parameterMissing('label');
    expect(explaining.explain('PostWidgets', LATEST_API_VERSION, missing)).toBe(missing);
  });

  test('every declared replacement belongs to an operation the app serves', () => {
    const served = new Set(routes.map((r) => r.operationId));
    for (const change of requestChanges.filter((c) => c.replaced)) expect(served.has(change.operation)).toBe(true);
  });
});
