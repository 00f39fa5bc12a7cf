import qs from 'qs';
import { bearer, newTestKey, type TestApp } from './app';
import { expectErrorBody, expectMatchesResponseSchema } from './responseSchemas';

// What every list operation must do the same way: the envelope, limits, newest-first order,
// cursor pagination in both directions, cursor errors, `created` filters and expand on lists.
// Call `describeListConformance` from a test file that starts the app in its own beforeAll.

export interface CreatedObjects {
  /** Ids of the new objects, oldest first. */
  readonly ids: string[];
  /** Query parameters every request to this list needs (a parent id, say). */
  readonly query?: Record<string, string>;
  /** The list's path for these objects, when it has a path parameter (a parent's id). */
  readonly path?: string;
}

export interface ListConformanceOptions {
  /** Title of the describe block; defaults to the path. */
  readonly name?: string;
  /** The list's path, e.g. `/v1/webhook_endpoints`; also the envelope's `url`. */
  readonly path: string;
  /** The app the calling file started (called inside tests, after beforeAll). */
  readonly getApp: () => TestApp;
  /** The `object` of the listed items, e.g. `webhook_endpoint`. */
  readonly objectName: string;
  /**
   * Creates `n` objects for `key`, strictly one after another (order is part of the contract),
   * and returns their ids oldest first. `n` may be 0 (a fresh account with the list's context).
   */
  readonly createObjects: (key: string, n: number) => Promise<string[] | CreatedObjects>;
  /** Most objects one account may hold in this list (webhook endpoints: 16). */
  readonly maxObjects?: number;
  /** Whether the list declares a `created` filter; when false, `created` must be refused. */
  readonly createdFilter?: boolean;
  /** When given, every page is checked against the operation's response schema in openapi/. */
  readonly operationId?: string;
  /**
   * The items' creation time, newest first (`created`; a capability's is `requested_at`); null
   * for items that show none (bank accounts), whose order is checked by id only.
   */
  readonly timestampField?: string | null;
}

interface Page {
  status: number;
  body: any;
}

const idsOf = (page: Page): string[] => (page.body?.data ?? []).map((o: { id: string }) => o.id);

export function describeListConformance(opts: ListConformanceOptions): void {
  const max = opts.maxObjects ?? 25;

  async function create(key: string, n: number): Promise<CreatedObjects> {
    const made = await opts.createObjects(key, n);
    const result = Array.isArray(made) ? { ids: made } : made;
    if (result.ids.length !== n) throw new Error(`createObjects(key, ${n}) returned ${result.ids.length} ids`);
    return result;
  }

  async function list(key: string, base: CreatedObjects, query: Record<string, unknown> = {}): Promise<Page> {
    const search = qs.stringify({ ...base.query, ...query }, { arrayFormat: 'brackets' });
    const path = base.path ?? opts.path;
    const res = await opts.getApp().http().get(search ? `${path}?${search}` : path).set(bearer(key));
    if (res.status === 200 && opts.operationId) expectMatchesResponseSchema(opts.operationId, 200, res.body);
    if (res.status !== 200) expectErrorBody(res.body);
    return { status: res.status, body: res.body };
  }

  function expectInvalid(page: Page, param: string | RegExp): void {
    expect(page.status).toBe(400);
    expect(page.body.error.type).toBe('invalid_request_error');
    if (typeof param === 'string') expect(page.body.error.param).toBe(param);
    else expect(page.body.error.param).toMatch(param);
  }

  /** An id shaped like the list's ids (same prefix) that no object has. */
  const unknownIdLike = (id: string): string => `${id.slice(0, id.indexOf('_') + 1)}zzNoSuchObject0000000000`;

  async function walkForwards(key: string, base: CreatedObjects, limit: number) {
    const pages: string[][] = [];
    const hasMore: boolean[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 50; i++) {
      const page = await list(key, base, { limit, ...(cursor ? { starting_after: cursor } : {}) });
      expect(page.status).toBe(200);
      pages.push(idsOf(page));
      hasMore.push(page.body.has_more);
      if (!page.body.has_more) break;
      cursor = pages[pages.length - 1].at(-1);
    }
    return { pages, hasMore };
  }

  /** From `start` (exclusive) towards the newest object, one `ending_before` page at a time. */
  async function walkBackwards(key: string, base: CreatedObjects, limit: number, start: string) {
    const pages: string[][] = [];
    const hasMore: boolean[] = [];
    let cursor = start;
    for (let i = 0; i < 50; i++) {
      const page = await list(key, base, { limit, ending_before: cursor });
      expect(page.status).toBe(200);
      pages.unshift(idsOf(page));
      hasMore.push(page.body.has_more);
      if (!page.body.has_more || page.body.data.length === 0) break;
      cursor = page.body.data[0].id;
    }
    return { pages, hasMore };
  }

  describe(opts.name ?? `list conformance: GET ${opts.path}`, () => {
    test('a fresh account gets an empty list envelope', async () => {
      const key = newTestKey();
      const base = await create(key, 0);
      const page = await list(key, base);
      expect(page.status).toBe(200);
      expect(page.body).toEqual({ object: 'list', data: [], has_more: false, url: base.path ?? opts.path });
    });

    test('envelope, default limit of 10, newest first', async () => {
      const key = newTestKey();
      const n = Math.min(12, max);
      const base = await create(key, n);
      const page = await list(key, base);
      expect(page.status).toBe(200);
      expect(Object.keys(page.body).sort()).toEqual(['data', 'has_more', 'object', 'url']);
      expect(page.body.object).toBe('list');
      expect(page.body.url).toBe(base.path ?? opts.path);
      const newestFirst = [...base.ids].reverse();
      expect(idsOf(page)).toEqual(newestFirst.slice(0, 10));
      expect(page.body.has_more).toBe(n > 10);
      for (const item of page.body.data) expect(item.object).toBe(opts.objectName);
      const field = opts.timestampField === undefined ? 'created' : opts.timestampField;
      if (field !== null) {
        const created: number[] = page.body.data.map((o: Record<string, number>) => o[field]);
        for (const c of created) expect(Number.isInteger(c)).toBe(true);
        expect(created).toEqual([...created].sort((a, b) => b - a));
      }
    });

    test('limit accepts 1 to 100 and refuses anything else', async () => {
      const key = newTestKey();
      const base = await create(key, 3);
      const newestFirst = [...base.ids].reverse();

      const one = await list(key, base, { limit: 1 });
      expect(one.status).toBe(200);
      expect(idsOf(one)).toEqual(newestFirst.slice(0, 1));
      expect(one.body.has_more).toBe(true);

      const hundred = await list(key, base, { limit: 100 });
      expect(hundred.status).toBe(200);
      expect(idsOf(hundred)).toEqual(newestFirst);
      expect(hundred.body.has_more).toBe(false);

      const exact = await list(key, base, { limit: 3 });
      expect(idsOf(exact)).toEqual(newestFirst);
      expect(exact.body.has_more).toBe(false);

      for (const bad of ['0', '101', '-1', 'abc', '1.5', '', '1e2', '99999999999999999999']) {
        const page = await list(key, base, { limit: bad });
        expectInvalid(page, 'limit');
      }
      expectInvalid(await list(key, base, { limit: ['1', '2'] }), /^limit/);
      expectInvalid(await list(key, base, { limit: { a: '1' } }), /^limit/);
    });

    test('starting_after walks every object exactly once, newest first, with has_more on all pages but the last', async () => {
      const key = newTestKey();
      const n = Math.min(8, max);
      const base = await create(key, n);
      const { pages, hasMore } = await walkForwards(key, base, 3);
      expect(pages.flat()).toEqual([...base.ids].reverse());
      expect(pages.map((p) => p.length)).toEqual(Array.from({ length: Math.ceil(n / 3) }, (_, i) => Math.min(3, n - 3 * i)));
      expect(hasMore).toEqual(pages.map((_, i) => i < pages.length - 1));
      // Past the oldest object there is nothing.
      const after = await list(key, base, { starting_after: base.ids[0] });
      expect(after.status).toBe(200);
      expect(after.body.data).toEqual([]);
      expect(after.body.has_more).toBe(false);
    });

    test('ending_before walks back to the newest object exactly once, with has_more while newer objects remain', async () => {
      const key = newTestKey();
      const n = Math.min(8, max);
      const base = await create(key, n);
      const newestFirst = [...base.ids].reverse();
      const { pages, hasMore } = await walkBackwards(key, base, 3, base.ids[0]);
      // Every page is itself newest first, and together they are everything newer than the cursor.
      expect(pages.flat()).toEqual(newestFirst.slice(0, n - 1));
      const sizes = pages.map((p) => p.length);
      expect(sizes.slice(1).every((s) => s === 3)).toBe(true);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n - 1);
      expect(hasMore).toEqual(pages.map((_, i) => i < pages.length - 1));
      // Before the newest object there is nothing.
      const before = await list(key, base, { ending_before: newestFirst[0] });
      expect(before.status).toBe(200);
      expect(before.body.data).toEqual([]);
      expect(before.body.has_more).toBe(false);
      // ending_before a middle object gives the objects just newer than it.
      const middle = await list(key, base, { ending_before: newestFirst[4], limit: 2 });
      expect(idsOf(middle)).toEqual(newestFirst.slice(2, 4));
      expect(middle.body.has_more).toBe(true);
    });

    test('an unknown cursor is a 400, not an empty page', async () => {
      const key = newTestKey();
      const base = await create(key, 2);
      const unknown = unknownIdLike(base.ids[0]);
      for (const cursor of ['starting_after', 'ending_before'] as const) {
        const page = await list(key, base, { [cursor]: unknown });
        expectInvalid(page, cursor);
        expect(page.body.error.code).toBe('resource_missing');
        expect(page.body.error.message).toContain(unknown);
        expectInvalid(await list(key, base, { [cursor]: 'garbage' }), cursor);
        expectInvalid(await list(key, base, { [cursor]: '' }), cursor);
      }
    });

    test("another account's object is not a cursor here", async () => {
      const owner = newTestKey();
      const other = newTestKey();
      const theirs = await create(owner, 1);
      const mine = await create(other, 2);
      for (const cursor of ['starting_after', 'ending_before'] as const) {
        const page = await list(other, mine, { [cursor]: theirs.ids[0] });
        expectInvalid(page, cursor);
        expect(page.body.error.code).toBe('resource_missing');
        expect(JSON.stringify(page.body)).not.toContain('"data"');
      }
      // The owner can still use it.
      const ok = await list(owner, theirs, { starting_after: theirs.ids[0] });
      expect(ok.status).toBe(200);
      expect(ok.body.data).toEqual([]);
    });

    test('starting_after and ending_before together are refused', async () => {
      const key = newTestKey();
      const base = await create(key, 3);
      const page = await list(key, base, { starting_after: base.ids[2], ending_before: base.ids[0] });
      expect(page.status).toBe(400);
      expect(page.body.error.type).toBe('invalid_request_error');
      expect(['starting_after', 'ending_before']).toContain(page.body.error.param);
    });

    test('expand on a list must start with data. and name an expandable field', async () => {
      const key = newTestKey();
      const base = await create(key, 1);
      for (const path of ['data.zz_not_expandable', 'zz_not_expandable', 'data', 'data.', 'data.a.b.c.d.e']) {
        const page = await list(key, base, { expand: [path] });
        expectInvalid(page, 'expand');
        expect(page.body.error.message).toMatch(/expand/i);
      }
      expectInvalid(await list(key, base, { expand: 'data.zz' }), /^expand/);
    });

    if (opts.createdFilter) {
      test('created filters take an integer or gt/gte/lt/lte', async () => {
        const key = newTestKey();
        const base = await create(key, 3);
        const all = await list(key, base, { limit: 100 });
        // The filter reads the objects' own timestamp (an invoice item's is `date`).
        const field = opts.timestampField ?? 'created';
        const created: number[] = all.body.data.map((o: Record<string, number>) => o[field]);
        const min = Math.min(...created);
        const maxCreated = Math.max(...created);
        const newestFirst = [...base.ids].reverse();
        expect(idsOf(await list(key, base, { created: { gte: min } }))).toEqual(newestFirst);
        expect(idsOf(await list(key, base, { created: { lte: maxCreated } }))).toEqual(newestFirst);
        expect(idsOf(await list(key, base, { created: { gt: maxCreated } }))).toEqual([]);
        expect(idsOf(await list(key, base, { created: { lt: min } }))).toEqual([]);
        const exact = all.body.data.filter((o: Record<string, number>) => o[field] === maxCreated).map((o: { id: string }) => o.id);
        expect(idsOf(await list(key, base, { created: maxCreated }))).toEqual(exact);
        expectInvalid(await list(key, base, { created: { gte: 'abc' } }), /^created/);
        expectInvalid(await list(key, base, { created: { zz: '1' } }), /^created/);
        expectInvalid(await list(key, base, { created: 'abc' }), /^created/);
        // Beyond what the column holds: a 400 naming the parameter, never a 500.
        for (const huge of ['2147483648', '99999999999999999999', '-2147483649']) {
          expectInvalid(await list(key, base, { created: huge }), 'created');
          expectInvalid(await list(key, base, { created: { gt: huge } }), 'created[gt]');
        }
        expect((await list(key, base, { created: { lt: '2147483647' } })).status).toBe(200);
      });
    } else {
      test('created is not a filter of this list', async () => {
        const key = newTestKey();
        const base = await create(key, 1);
        for (const created of ['1', { gte: '1' }]) {
          const page = await list(key, base, { created });
          expectInvalid(page, 'created');
          expect(page.body.error.code).toBe('parameter_unknown');
        }
      });
    }
  });
}
