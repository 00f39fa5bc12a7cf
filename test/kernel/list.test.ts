import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { paginate, rangeWhere } from '../../src/kernel/list';
import { ENDPOINTS, expectError, mustCreate } from './util';

// A frozen clock: every object is created in the same second, so the order must come from the
// insertion sequence, not from `created`.
const NOW_MS = 1_800_000_000_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { clock: { nowMs: () => NOW_MS } });
});
afterAll(() => t.close());

/** Creates `n` endpoints in order and returns their ids, oldest first. */
async function createMany(key: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await mustCreate(t, key, `url=${CLOSED_ORIGIN}/h${i}&enabled_events[]=*`)).id);
  return ids;
}

const list = (key: string, query = '') => t.http().get(`${ENDPOINTS}${query ? `?${query}` : ''}`).set(bearer(key));
const idsOf = (body: any): string[] => body.data.map((o: any) => o.id);

describe('envelope and limit', () => {
  let key: string;
  let ids: string[];
  beforeAll(async () => {
    key = newTestKey();
    ids = await createMany(key, 12);
  });

  test('the envelope, the default limit of 10, newest first', async () => {
    const res = await list(key);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'has_more', 'object', 'url']);
    expect(res.body.object).toBe('list');
    expect(res.body.url).toBe('/v1/webhook_endpoints');
    expect(res.body.has_more).toBe(true);
    expect(idsOf(res.body)).toEqual([...ids].reverse().slice(0, 10));
    expect(res.body.data.every((o: any) => o.object === 'webhook_endpoint' && o.created === NOW_MS / 1000)).toBe(true);
  });

  test('list items never carry the signing secret', async () => {
    const res = await list(key, 'limit=100');
    expect(res.body.data.some((o: any) => 'secret' in o)).toBe(false);
  });

  test('limit bounds: 1 and 100 are accepted, 0 and 101 are not', async () => {
    const one = await list(key, 'limit=1');
    expect(idsOf(one.body)).toEqual([ids[11]]);
    expect(one.body.has_more).toBe(true);
    const hundred = await list(key, 'limit=100');
    expect(idsOf(hundred.body)).toEqual([...ids].reverse());
    expect(hundred.body.has_more).toBe(false);
    expectError(await list(key, 'limit=0'), 400, { code: 'parameter_invalid', param: 'limit' });
    expectError(await list(key, 'limit=101'), 400, { code: 'parameter_invalid', param: 'limit', message: 'Invalid limit: must be less than or equal to 100' });
    expectError(await list(key, 'limit=-1'), 400, { param: 'limit' });
  });

  test('a limit equal to the number of objects has no more', async () => {
    const res = await list(key, 'limit=12');
    expect(res.body.data).toHaveLength(12);
    expect(res.body.has_more).toBe(false);
  });

  test('starting_after pages towards older objects', async () => {
    // Newest first: ids[11] … ids[0].
    const first = await list(key, 'limit=5');
    expect(idsOf(first.body)).toEqual([ids[11], ids[10], ids[9], ids[8], ids[7]]);
    expect(first.body.has_more).toBe(true);
    const second = await list(key, `limit=5&starting_after=${ids[7]}`);
    expect(idsOf(second.body)).toEqual([ids[6], ids[5], ids[4], ids[3], ids[2]]);
    expect(second.body.has_more).toBe(true);
    const last = await list(key, `limit=5&starting_after=${ids[2]}`);
    expect(idsOf(last.body)).toEqual([ids[1], ids[0]]);
    expect(last.body.has_more).toBe(false);
    const beyond = await list(key, `starting_after=${ids[0]}`);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.has_more).toBe(false);
  });

  test('ending_before pages towards newer objects, each page still newest first', async () => {
    const first = await list(key, `limit=5&ending_before=${ids[0]}`);
    expect(idsOf(first.body)).toEqual([ids[5], ids[4], ids[3], ids[2], ids[1]]);
    expect(first.body.has_more).toBe(true);
    const second = await list(key, `limit=5&ending_before=${ids[5]}`);
    expect(idsOf(second.body)).toEqual([ids[10], ids[9], ids[8], ids[7], ids[6]]);
    expect(second.body.has_more).toBe(true);
    const last = await list(key, `limit=5&ending_before=${ids[10]}`);
    expect(idsOf(last.body)).toEqual([ids[11]]);
    expect(last.body.has_more).toBe(false);
    const none = await list(key, `ending_before=${ids[11]}`);
    expect(none.body.data).toEqual([]);
    expect(none.body.has_more).toBe(false);
  });

  test('walking every page with starting_after visits each object once, in order', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let guard = 0; guard < 20; guard++) {
      const res = await list(key, `limit=3${after ? `&starting_after=${after}` : ''}`);
      seen.push(...idsOf(res.body));
      if (!res.body.has_more) break;
      after = seen[seen.length - 1];
    }
    expect(seen).toEqual([...ids].reverse());
  });

  test('the SDK auto-pagination walks the same order', async () => {
    const stripe = t.stripe(key);
    const seen: string[] = [];
    for await (const endpoint of stripe.webhookEndpoints.list({ limit: 4 })) seen.push(endpoint.id);
    expect(seen).toEqual([...ids].reverse());
  });
});

describe('cursor errors', () => {
  let key: string;
  let ids: string[];
  let otherId: string;
  beforeAll(async () => {
    key = newTestKey();
    ids = await createMany(key, 3);
    otherId = (await mustCreate(t, newTestKey())).id;
  });

  test.each(['starting_after', 'ending_before'])('%s from another account is a 400, not an empty page', async (cursor) => {
    const res = await list(key, `${cursor}=${otherId}`);
    expectError(res, 400, { code: 'resource_missing', param: cursor, message: `No such webhook endpoint: '${otherId}'` });
  });

  test.each(['starting_after', 'ending_before'])('%s with an unknown id is a 400', async (cursor) => {
    expectError(await list(key, `${cursor}=we_doesnotexist`), 400, { code: 'resource_missing', param: cursor });
  });

  test('a deleted object is no longer a cursor', async () => {
    const gone = (await mustCreate(t, key)).id;
    expect((await t.http().delete(`${ENDPOINTS}/${gone}`).set(bearer(key))).status).toBe(200);
    expectError(await list(key, `starting_after=${gone}`), 400, { code: 'resource_missing', param: 'starting_after' });
  });

  test('both cursors at once is a 400', async () => {
    const res = await list(key, `starting_after=${ids[2]}&ending_before=${ids[0]}`);
    expectError(res, 400, { code: 'parameters_exclusive', message: /starting_after, ending_before/ });
  });

  test('an empty cursor is a 400', async () => {
    expectError(await list(key, 'starting_after='), 400, { code: 'parameter_invalid_empty', param: 'starting_after' });
  });

  test('another account sees none of these objects', async () => {
    const res = await list(newTestKey());
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.has_more).toBe(false);
  });
});

describe('pure helpers', () => {
  test('rangeWhere turns created filters into a where fragment', () => {
    expect(rangeWhere(undefined)).toBeUndefined();
    expect(rangeWhere(5)).toBe(5);
    expect(rangeWhere({ gte: 1, lt: 9 })).toEqual({ gte: 1, lt: 9 });
    expect(rangeWhere({})).toBeUndefined();
  });

  test('paginate asks for one row more than the limit and trims it', async () => {
    const rows = [5n, 4n, 3n].map((seq) => ({ id: `x_${seq}`, seq }));
    const findMany = jest.fn().mockResolvedValue(rows);
    const result = await paginate<{ id: string; seq: bigint }>({
      params: { limit: 2 },
      url: '/v1/things',
      where: { accountId: 'acct_1' },
      model: { findUnique: jest.fn(), findMany },
      objectName: 'thing',
      serialize: (r: { id: string }) => r.id,
    });
    expect(findMany).toHaveBeenCalledWith({ where: { accountId: 'acct_1' }, orderBy: { seq: 'desc' }, take: 3 });
    expect(result).toEqual({ object: 'list', data: ['x_5', 'x_4'], has_more: true, url: '/v1/things' });
  });
});
