import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createCustomer, createPaymentIntent, createPaymentMethod, form } from '../helpers/fixtures';
import { consoleGet, jsonTextOf, rowCount, signIn, type ConsoleSession } from '../helpers/console';

// The console's object pages: lists per type (the API's list operation: cursor pages, created
// filters, search), id lookup, the object page (the API's retrieve at a chosen version, its ids
// linked, a customer's related objects), isolation between keys, and values shown inert.

let t: TestApp;
let key: string;
let session: ConsoleSession;

beforeAll(async () => {
  t = await startTestApp();
  key = newTestKey();
  session = await signIn(t, key);
});
afterAll(async () => {
  await t?.close();
});

const api = (path: string, version?: string) => {
  const req = t.http().get(path).set(bearer(key));
  return version ? req.set('Stripe-Version', version) : req;
};

describe('lists', () => {
  test('the objects index links a list of every served type with a list operation', async () => {
    const res = await consoleGet(t, session, '/console/objects');
    expect(res.status).toBe(200);
    for (const type of ['customer', 'payment_intent', 'invoice', 'subscription', 'event', 'webhook_endpoint', 'test_helpers.test_clock', 'coupon']) {
      expect(res.text).toContain(`href="/console/objects?type=${type}"`);
    }
    // An account's persons need the account in the path, an upcoming invoice's lines are part of
    // one object: no list of their own.
    expect(res.text).not.toContain('type=person"');
    expect(res.text).not.toContain('type=line_item"');
    // The sandbox's lists are test tools (the test outcomes page), not object types.
    expect(res.text).not.toContain('type=sandbox.payment_authentication"');
    expect(res.text).not.toContain('type=financial_connections.session"');
  });

  test('a list pages with the API’s cursors (newest first, 25 a page), filters by created, and each row links its object', async () => {
    const pager = newTestKey();
    const own = await signIn(t, pager);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await createCustomer(t, pager, { name: `Customer ${i}` })).id);
    const first = await consoleGet(t, own, '/console/objects?type=customer');
    expect(first.status).toBe(200);
    expect(rowCount(first.text)).toBe(25);
    const apiFirst = (await t.http().get('/v1/customers?limit=25').set(bearer(pager))).body.data.map((c: { id: string }) => c.id);
    const shownIds = [...first.text.matchAll(/<tr data-test="object-row"><td><a class="mono" href="\/console\/objects\/(cus_\w+)\?type=customer">/g)].map((m) => m[1]);
    expect(shownIds).toEqual(apiFirst);
    expect(first.text).not.toContain('data-test="page-newer"');
    const older = /href="([^"]+)" data-test="page-older"/.exec(first.text)![1].replace(/&amp;/g, '&');
    expect(older).toBe(`/console/objects?type=customer&starting_after=${apiFirst[24]}`);
    const second = await consoleGet(t, own, older);
    expect(rowCount(second.text)).toBe(5);
    expect(second.text).not.toContain('data-test="page-older"');
    const newer = /href="([^"]+)" data-test="page-newer"/.exec(second.text)![1].replace(/&amp;/g, '&');
    const back = await consoleGet(t, own, newer);
    expect(rowCount(back.text)).toBe(25);

    // Created filters: nothing was made in 2001; everything after 2001.
    const none = await consoleGet(t, own, '/console/objects?type=customer&created_lte=2001-01-01T00:00');
    expect(rowCount(none.text)).toBe(0);
    const all = await consoleGet(t, own, '/console/objects?type=customer&created_gte=2001-01-01T00:00');
    expect(rowCount(all.text)).toBe(25);
  });

  test('a type with search takes the query language; a bad query shows the API’s error', async () => {
    const email = `jenny.${Date.now()}@example.com`;
    const jenny = await createCustomer(t, key, { email, name: 'Jenny Rosen' });
    await createCustomer(t, key, { email: 'someone@example.com' });
    const res = await consoleGet(t, session, `/console/objects?type=customer&query=${encodeURIComponent(`email:'${email}'`)}`);
    expect(res.status).toBe(200);
    expect(rowCount(res.text)).toBe(1);
    expect(res.text).toContain(`/console/objects/${jenny.id}?type=customer`);
    const bad = await consoleGet(t, session, `/console/objects?type=customer&query=${encodeURIComponent('nosuchfield:1')}`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('class="error"');
  });

  test('an unknown type is a 404 page; an id typed into the lookup goes to its page', async () => {
    expect((await consoleGet(t, session, '/console/objects?type=nonsense')).status).toBe(404);
    const lookup = await consoleGet(t, session, '/console/objects?id=cus_abc123');
    expect(lookup.status).toBe(303);
    expect(lookup.headers.location).toBe('/console/objects/cus_abc123');
  });
});

describe('object page', () => {
  test('shows the JSON exactly as the API’s retrieve renders it, at the version picked, with its ids linked', async () => {
    const customer = await createCustomer(t, key, { name: 'Versioned', metadata: { plan: 'gold' } });
    const pm = await createPaymentMethod(t, key);
    await t.http().post(`/v1/payment_methods/${pm.id}/attach`).set(bearer(key)).type('form').send(form({ customer: customer.id }));
    const page = await consoleGet(t, session, `/console/objects/${pm.id}`);
    expect(page.status).toBe(200);
    const apiJson = (await api(`/v1/payment_methods/${pm.id}`)).body;
    expect(jsonTextOf(page.text)).toBe(JSON.stringify(apiJson, null, 2));
    // The customer's id is a link to its page; the payment method's own too.
    expect(page.text).toContain(`<a class="s" href="/console/objects/${customer.id}">&quot;${customer.id}&quot;</a>`);

    // A PaymentIntent before 2022-11-15 carries its charges: the picked version is the API's rendering.
    const intent = await createPaymentIntent(t, key, { payment_method: 'pm_card_visa', confirm: true });
    const old = '2022-08-01';
    const newest = (await api(`/v1/payment_intents/${intent.id}`)).body;
    const atOld = await consoleGet(t, session, `/console/objects/${intent.id}?version=${old}`);
    // Viewing at a version is no integration's request: the account's default stays unpinned.
    const account = (await api('/v1/account')).body.id;
    expect((await t.runtime.prisma.account.findUnique({ where: { id: account } }))?.defaultApiVersion).toBeNull();
    const apiOld = (await api(`/v1/payment_intents/${intent.id}`, old)).body;
    expect(apiOld.charges.data).toHaveLength(1);
    expect(jsonTextOf(atOld.text)).toBe(JSON.stringify(apiOld, null, 2));
    expect(jsonTextOf(atOld.text)).not.toBe(JSON.stringify(newest, null, 2));
    expect(atOld.text).toContain(`<option value="${old}" selected>`);
  });

  test('a customer’s page lists its payment methods, subscriptions, invoices and payments', async () => {
    const customer = await createCustomer(t, key, { payment_method: 'pm_card_visa' });
    const intent = await createPaymentIntent(t, key, { customer: customer.id });
    const page = await consoleGet(t, session, `/console/objects/${customer.id}`);
    expect(page.status).toBe(200);
    const section = (type: string) => new RegExp(`<section class="card" data-test="related-${type}">([\\s\\S]*?)</section>`).exec(page.text)![1];
    expect(rowCount(section('payment_method'))).toBe(1);
    expect(section('payment_intent')).toContain(intent.id);
    expect(rowCount(section('subscription'))).toBe(0);
    expect(rowCount(section('invoice'))).toBe(0);
  });

  test('ids without a prefix of their own (coupons) open with ?type= and by lookup', async () => {
    const coupon = (await t.http().post('/v1/coupons').set(bearer(key)).type('form').send(form({ percent_off: 10 }))).body;
    expect((await consoleGet(t, session, `/console/objects/${coupon.id}?type=coupon`)).status).toBe(200);
    expect((await consoleGet(t, session, `/console/objects/${coupon.id}`)).status).toBe(200);
  });
});

describe('isolation', () => {
  test('another key’s id typed into the URL is the same 404 as an unknown id, and its objects are in no list', async () => {
    const other = newTestKey();
    const theirs = await createCustomer(t, other, { name: 'Not yours', email: 'theirs@example.com' });
    for (const path of [`/console/objects/${theirs.id}`, `/console/objects/${theirs.id}?type=customer`, '/console/objects/cus_doesnotexist000']) {
      const res = await consoleGet(t, session, path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('Not yours');
    }
    const list = await consoleGet(t, session, '/console/objects?type=customer');
    expect(list.text).not.toContain(theirs.id);
    const search = await consoleGet(t, session, `/console/objects?type=customer&query=${encodeURIComponent("email:'theirs@example.com'")}`);
    expect(rowCount(search.text)).toBe(0);
  });
});

describe('inert values', () => {
  test('a customer named <script>… and HTML in metadata keys and values show as text on its page, in lists and in search', async () => {
    const name = '<script>alert(1)</script>';
    const customer = await createCustomer(t, key, {
      name,
      email: 'x"><img src=x onerror=alert(2)>@example.com',
      metadata: { '<b>k</b>': '<img src=x onerror=alert(3)>', note: '</pre><script>alert(4)</script>' },
    });
    const pages = [
      await consoleGet(t, session, `/console/objects/${customer.id}`),
      await consoleGet(t, session, '/console/objects?type=customer'),
      await consoleGet(t, session, `/console/objects?type=customer&query=${encodeURIComponent(`name:'${name}'`)}`),
    ];
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.text).not.toMatch(/<script>alert|<img src=x|<b>k<\/b>|<\/pre><script>/);
      // The page's only script elements are its own (none here).
      expect(page.text.match(/<script/g) ?? []).toHaveLength(0);
    }
    expect(pages[0].text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(jsonTextOf(pages[0].text)).toBe(JSON.stringify((await api(`/v1/customers/${customer.id}`)).body, null, 2));
  });
});

describe('home', () => {
  test('counts objects per type (a page’s worth at most), shows recent events and endpoints whose latest delivery failed', async () => {
    const own = newTestKey();
    const ownSession = await signIn(t, own);
    await createCustomer(t, own);
    await createCustomer(t, own);
    const res = await consoleGet(t, ownSession, '/console');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/data-test="count-customer"><span>customer<\/span><strong>2<\/strong>/);
    expect(res.text).toContain('customer.created');
    expect(res.text).toContain('Every endpoint’s latest delivery succeeded.');
  });
});
