import {
  alreadyRendered,
  API_VERSIONS,
  embed,
  embeddedOf,
  ERROR_STATUS_CHANGES,
  errorStatusAt,
  isApiVersion,
  LATEST_API_VERSION,
  VersionRenderer,
  type VersionChange,
} from '../../src/kernel/versions';

// The version renderer: objects are written in the newest shape, and each change made after the
// version asked for is undone, newest first, on every object of its type wherever it sits.

const renamed: VersionChange = {
  version: '2020-08-27',
  object: 'widget',
  description: 'Renames `label` to `name`.',
  downgrade: ({ name, ...rest }) => (name === undefined ? rest : { ...rest, label: name }),
};
const nested: VersionChange = {
  version: '2024-04-10',
  object: 'widget',
  description: 'Moves `size` into `dimensions.size`.',
  downgrade: ({ dimensions, ...rest }) => (dimensions?.size === undefined ? { dimensions, ...rest } : { ...rest, size: dimensions.size }),
};
const renderer = new VersionRenderer([renamed, nested]);
const widget = () => ({ id: 'w_1', object: 'widget', name: 'W', dimensions: { size: 3 } });

test('the newest version is the last one known', () => {
  expect(LATEST_API_VERSION).toBe(API_VERSIONS[API_VERSIONS.length - 1]);
  expect(isApiVersion(LATEST_API_VERSION)).toBe(true);
});

test('a version after every change gets the object itself', () => {
  const w = widget();
  expect(renderer.render(w, LATEST_API_VERSION)).toBe(w);
  expect(renderer.render(w, '2024-04-10')).toBe(w);
});

test('each change made after the version is undone, newest first', () => {
  expect(renderer.render(widget(), '2024-01-01' as string)).toEqual(widget()); // not a version: treated as the newest
  expect(renderer.render(widget(), '2023-10-16')).toEqual({ id: 'w_1', object: 'widget', name: 'W', size: 3 });
  expect(renderer.render(widget(), '2020-03-02')).toEqual({ id: 'w_1', object: 'widget', label: 'W', size: 3 });
});

test('objects are found wherever they sit (lists, nested members); others are left alone', () => {
  const page = { object: 'list', data: [widget(), { id: 'g_1', object: 'gadget', name: 'G' }], has_more: false, url: '/v1/widgets' };
  const out = renderer.render({ ...page, data: [...page.data, { holder: widget() }] }, '2020-03-02');
  expect(out.data[0]).toEqual({ id: 'w_1', object: 'widget', label: 'W', size: 3 });
  expect(out.data[1]).toEqual({ id: 'g_1', object: 'gadget', name: 'G' });
  expect((out.data[2] as any).holder).toEqual({ id: 'w_1', object: 'widget', label: 'W', size: 3 });
  // The input is not changed.
  expect(page.data[0]).toEqual(widget());
});

test('a part of an object (previous_attributes) is rendered as its type when named', () => {
  expect(renderer.render({ name: 'Old' }, '2020-03-02', 'widget')).toEqual({ label: 'Old' });
  expect(renderer.render({ metadata: { a: '1' } }, '2020-03-02', 'widget')).toEqual({ metadata: { a: '1' } });
});

test('a value marked rendered is left as it is', () => {
  const frozen = alreadyRendered({ object: widget() });
  const out = renderer.render({ id: 'evt_1', object: 'event', data: frozen }, '2020-03-02');
  expect(out.data).toBe(frozen);
  expect(JSON.stringify(out.data)).toBe(JSON.stringify({ object: widget() }));
});

describe('objects older versions showed whole (embed)', () => {
  // Before 2020-08-27 a ticket showed its widget whole; since, its id.
  const inlined: VersionChange = {
    version: '2020-08-27',
    object: 'ticket',
    description: "Shows a ticket's widget as its id.",
    downgrade: (ticket, _newest, embedded) => (typeof ticket.widget === 'string' ? { ...ticket, widget: embedded[ticket.widget] ?? ticket.widget } : ticket),
  };
  const tickets = new VersionRenderer([inlined]);
  const whole = { id: 'w_1', object: 'widget', name: 'W' };
  const ticket = (w: Record<string, unknown> = whole) => embed({ id: 't_1', object: 'ticket', widget: w.id }, { [w.id as string]: w });

  test('never show in the newest shape or JSON, and reach the downgrades of older versions', () => {
    const t = ticket();
    expect(JSON.parse(JSON.stringify(t))).toEqual({ id: 't_1', object: 'ticket', widget: 'w_1' });
    expect(tickets.render(t, LATEST_API_VERSION)).toBe(t);
    expect(tickets.render(t, '2020-03-02')).toEqual({ id: 't_1', object: 'ticket', widget: whole });
    expect(embeddedOf(t)).toEqual({ w_1: whole });
    expect(embeddedOf('w_1')).toBeUndefined();
  });

  test('each object in a list uses its own; the ones given to render (an event keeps them) serve the whole value', () => {
    const other = { id: 'w_1', object: 'widget', name: 'Another' };
    const page = { object: 'list', data: [ticket(), ticket(other)] };
    expect(tickets.render(page, '2020-03-02').data.map((x: any) => x.widget.name)).toEqual(['W', 'Another']);
    const stored = JSON.parse(JSON.stringify(ticket()));
    expect(tickets.render(stored, '2020-03-02')).toEqual(stored);
    expect(tickets.render(stored, '2020-03-02', undefined, { w_1: whole })).toEqual({ id: 't_1', object: 'ticket', widget: whole });
  });
});

test('a change naming an unknown version is a programming error', () => {
  expect(() => new VersionRenderer([{ ...renamed, version: '2099-01-01' }])).toThrow('unknown version 2099-01-01');
});

describe("an error's status at older versions (ERROR_STATUS_CHANGES)", () => {
  test('a permission error is a 401 before 2016-10-19 and a 403 from it', () => {
    expect(errorStatusAt(403, 'account_invalid', '2016-07-06')).toBe(401);
    expect(errorStatusAt(403, 'account_invalid', '2016-10-19')).toBe(403);
    expect(errorStatusAt(403, undefined, LATEST_API_VERSION)).toBe(403);
  });

  test('a rate limit is a 400 before 2015-09-08; another 429 keeps its status', () => {
    expect(errorStatusAt(429, 'rate_limit', '2015-08-19')).toBe(400);
    expect(errorStatusAt(429, 'rate_limit', '2015-09-08')).toBe(429);
    expect(errorStatusAt(429, 'lock_timeout', '2015-08-19')).toBe(429);
  });

  test('other statuses, and a version not known, are left alone', () => {
    for (const status of [400, 401, 402, 404, 500]) expect(errorStatusAt(status, undefined, '2011-01-01')).toBe(status);
    expect(errorStatusAt(403, undefined, 'not-a-version')).toBe(403);
  });

  test('every change names a known version', () => {
    for (const change of ERROR_STATUS_CHANGES) expect(isApiVersion(change.version)).toBe(true);
  });
});
