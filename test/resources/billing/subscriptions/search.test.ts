import { newTestKey, startTestApp, type TestApp } from '../../../helpers/app';
import { createSubscription } from '../../../helpers/fixtures';
import { expectMatchesResponseSchema } from '../../../helpers/responseSchemas';
import { expectError, requestsOf } from '../../../helpers/requests';

// GET /v1/subscriptions/search end to end: its query fields (created, metadata, status) against
// stored subscriptions of every status, canceled ones included, pages and total_count, the
// answer rendered as the list renders it (at today's version and an older one), the errors, the
// scope of a key, and the official SDK.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const { get, del } = requestsOf(() => t);
const SEARCH = '/v1/subscriptions/search';
const search = (key: string, query: string, extra = '', headers?: Record<string, string>) => get(key, `${SEARCH}?query=${encodeURIComponent(query)}${extra}`, headers);

async function found(key: string, query: string): Promise<string[]> {
  const res = await search(key, query, '&limit=100');
  expect(res.status).toBe(200);
  return res.body.data.map((s: { id: string }) => s.id);
}

describe('subscriptions searched', () => {
  const key = newTestKey();
  let active: Record<string, any>;
  let trialing: Record<string, any>;
  let incomplete: Record<string, any>;
  let canceled: Record<string, any>;
  beforeAll(async () => {
    active = await createSubscription(t, key, 1, { metadata: { plan: 'gold', order: '6735' } });
    trialing = await createSubscription(t, key, 1, { trial_period_days: 3, metadata: { plan: 'silver' } });
    incomplete = await createSubscription(t, key, 1, { payment_behavior: 'default_incomplete' });
    canceled = await createSubscription(t, key);
    expect((await del(key, `/v1/subscriptions/${canceled.id}`)).body.status).toBe('canceled');
    expect([active.status, trialing.status, incomplete.status]).toEqual(['active', 'trialing', 'incomplete']);
  });

  test('status, exactly; canceled subscriptions are searched too', async () => {
    expect(await found(key, 'status:"active"')).toEqual([active.id]);
    expect(await found(key, "status:'trialing'")).toEqual([trialing.id]);
    expect(await found(key, 'status:"canceled"')).toEqual([canceled.id]);
    // A token: case and whole value count.
    expect(await found(key, 'status:"Active"')).toEqual([]);
    expect(await found(key, 'status:"act"')).toEqual([]);
  });

  test('negation, AND and OR', async () => {
    expect(await found(key, '-status:"active"')).toEqual([canceled.id, incomplete.id, trialing.id]);
    expect(await found(key, 'status:"active" OR status:"trialing"')).toEqual([trialing.id, active.id]);
    expect(await found(key, "status:'trialing' AND metadata['plan']:'silver'")).toEqual([trialing.id]);
    expect(await found(key, "status:'active' metadata['plan']:'silver'")).toEqual([]);
  });

  test('metadata by key, through containment; null finds what lacks the key', async () => {
    expect(await found(key, "metadata['plan']:'gold'")).toEqual([active.id]);
    expect(await found(key, 'metadata["order"]:"6735"')).toEqual([active.id]);
    expect(await found(key, "metadata['plan']:'Gold'")).toEqual([]);
    expect(await found(key, "metadata['plan']:null")).toEqual([canceled.id, incomplete.id]);
    expect(await found(key, "-metadata['plan']:'gold'")).toEqual([canceled.id, incomplete.id, trialing.id]);
  });

  test('created as a number', async () => {
    const all = [canceled.id, incomplete.id, trialing.id, active.id];
    expect(await found(key, `created>=${active.created}`)).toEqual(all);
    expect(await found(key, `created<${active.created}`)).toEqual([]);
    expect(await found(key, `created<=${canceled.created + 1000} AND created>${active.created - 1}`)).toEqual(all);
  });

  test('pages through next_page, newest first; total_count only when expanded', async () => {
    const seen: string[] = [];
    let page: string | undefined;
    for (let i = 0; i < 2; i++) {
      const res = await search(key, 'created>0', `&limit=2&expand[]=total_count${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'search_result', url: SEARCH, total_count: 4, has_more: i === 0 });
      expectMatchesResponseSchema('GetSubscriptionsSearch', 200, res.body);
      seen.push(...res.body.data.map((s: { id: string }) => s.id));
      page = res.body.next_page ?? undefined;
    }
    expect(page).toBeUndefined();
    expect(seen).toEqual([canceled.id, incomplete.id, trialing.id, active.id]);
    expect((await search(key, 'created>0')).body).not.toHaveProperty('total_count');
  });

  test('each subscription is rendered as the list renders it, today and at an older version', async () => {
    for (const headers of [{}, { 'Stripe-Version': '2024-04-10' }] as Record<string, string>[]) {
      const listed = await get(key, '/v1/subscriptions?status=all&limit=100&expand[]=data.customer', headers);
      const searched = await search(key, 'created>0', '&limit=100&expand[]=data.customer', headers);
      expect(searched.status).toBe(200);
      expect(searched.body.data).toEqual(listed.body.data);
      expect(searched.body.data[0].customer).toMatchObject({ object: 'customer' });
    }
    // Older versions show the period on the subscription; today's on its items.
    const old = await search(key, 'status:"active"', '', { 'Stripe-Version': '2024-04-10' });
    expect(old.body.data[0].current_period_end).toEqual(expect.any(Number));
  });

  test('fields subscriptions do not have, and operators a field does not take, are the public 400', async () => {
    expectError(await search(key, 'customer:"cus_1"'), 400, {
      type: 'invalid_request_error',
      param: 'query',
      message: 'Field `customer` is an unsupported search field for resource `subscriptions`. See http://stripe.com/docs/search#query-fields-for-subscriptions for a list of supported fields.',
    });
    expectError(await search(key, 'status~"act"'), 400, { param: 'query', message: 'Field `status` does not support the `~` operator in a search for resource `subscriptions`.' });
    expectError(await search(key, 'created>soon'), 400, { param: 'query' });
  });

  test('another key finds none of them', async () => {
    expect(await found(newTestKey(), 'created>0')).toEqual([]);
    expect(await found(newTestKey(), 'status:"active"')).toEqual([]);
  });

  test('search is never read as a subscription id', async () => {
    expect((await get(key, SEARCH)).body.error).toMatchObject({ param: 'query', message: 'Missing required param: query.' });
  });

  test('the official SDK pages through subscriptions.search', async () => {
    const stripe = t.stripe(key);
    const all: string[] = [];
    for await (const sub of stripe.subscriptions.search({ query: 'created>0', limit: 1 })) all.push(sub.id);
    expect(all).toEqual([canceled.id, incomplete.id, trialing.id, active.id]);
    const counted = await stripe.subscriptions.search({ query: "metadata['plan']:'gold'", expand: ['total_count'] });
    expect({ ids: counted.data.map((s) => s.id), total: counted.total_count }).toEqual({ ids: [active.id], total: 1 });
  });
});
