import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { createAccount, createVerificationSession, form } from '../helpers/fixtures';
import { html, raw } from '../../src/hosted/html';

// What every hosted page shares (src/hosted/): escaping, headers, form parsing and its limits,
// and that no posted body, however malformed, gets anything but an HTML 4xx page.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ BODY_LIMIT_BYTES: '4096' });
});
afterAll(() => t.close());

test('the html template escapes every interpolation except our own markup', () => {
  const value = `<img src=x onerror="alert('1')">&`;
  expect(html`<p title="${value}">${value}</p>`.text).toBe(
    '<p title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;</p>',
  );
  expect(html`<p${raw(' hidden')}>${[1, null, false, undefined, 'a']}</p>`.text).toBe('<p hidden>1a</p>');
});

/** An open invoice's hosted page (the invoice page's form pays it). */
async function invoicePath(key: string): Promise<string> {
  const post = (path: string, body: Record<string, unknown>) => t.http().post(path).set(bearer(key)).type('form').send(form(body));
  const customer = (await post('/v1/customers', {})).body.id;
  await post('/v1/invoiceitems', { customer, amount: 1000, currency: 'usd' });
  const draft = await post('/v1/invoices', { customer, collection_method: 'send_invoice', pending_invoice_items_behavior: 'include' });
  return new URL((await post(`/v1/invoices/${draft.body.id}/finalize`, {})).body.hosted_invoice_url).pathname;
}

/** The kinds of hosted page with a form, each with a fresh, opened link. */
async function hostedPaths(): Promise<string[]> {
  const key = newTestKey();
  const account = (await createAccount(t, key, { business_type: 'individual' })).id;
  const link = await t.http().post('/v1/account_links').set(bearer(key)).type('form').send(form({ account, type: 'account_onboarding' }));
  const onboarding = new URL(link.body.url).pathname;
  await t.http().get(onboarding);
  const verification = new URL((await createVerificationSession(t, key)).url).pathname;
  return [onboarding, verification, await invoicePath(key)];
}

const MALFORMED_BODIES = [
  '',
  '=',
  '&&&',
  'form_token[]=x&action[]=submit',
  'form_token[a][b]=1&individual=text&external_account=text&business_type[]=company',
  'individual[dob][day][x]=1&individual[first_name][]=a',
  'outcome[]=verified',
  'outcome=failed&failure[]=document_expired',
  'outcome=failed&failure=__proto__',
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'a[b][c][d][e][f][g][h][i][j][k]=deep',
  '%ZZ=%E0%A4%A',
  'tos_acceptance=accepted&individual[first_name]=%00',
  'number[]=4242424242424242&exp[a]=12',
  'number=4242424242424242&exp=13/99&cvc[]=1',
  'number=%00&exp=%00',
];

test('malformed forms get an HTML 4xx page (or the form again), never a 500', async () => {
  for (const path of await hostedPaths()) {
    for (const body of MALFORMED_BODIES) {
      const res = await t.http().post(path).set('Content-Type', 'application/x-www-form-urlencoded').send(body);
      expect({ path, body, status: res.status < 500 }).toEqual({ path, body, status: true });
      if (res.status !== 303) expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test('a body over BODY_LIMIT_BYTES is a 413 page; another content type a 415 page; both with the pages\' headers', async () => {
  const [path] = await hostedPaths();
  const big = await t.http().post(path).type('form').send(`individual[first_name]=${'a'.repeat(5000)}`);
  expect(big.status).toBe(413);
  const json = await t.http().post(path).set('Content-Type', 'application/json').send('{"a":1}');
  expect(json.status).toBe(415);
  for (const res of [big, json]) {
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  }
});

test('every page carries a fresh script nonce', async () => {
  const key = newTestKey();
  const first = await t.http().get(new URL((await createVerificationSession(t, key)).url).pathname);
  const second = await t.http().get(new URL((await createVerificationSession(t, key)).url).pathname);
  const nonceOf = (csp: string) => /'nonce-([^']+)'/.exec(csp)?.[1];
  expect(nonceOf(first.headers['content-security-policy'])).toBeTruthy();
  expect(nonceOf(first.headers['content-security-policy'])).not.toBe(nonceOf(second.headers['content-security-policy']));
});

test('a page request counts as in flight until it has answered, so shutdown waits for it', async () => {
  const [path] = await hostedPaths();
  const { request } = await import('node:http');
  const answered = new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: t.port, path, method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': 11 } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    // Half the body now: the page is reading it, so it is in flight.
    req.write('action=');
    setTimeout(() => req.end('leav'), 300);
  });
  await new Promise((r) => setTimeout(r, 100));
  let idle = false;
  const drained = t.kernel.inFlight.idle().then(() => {
    idle = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  expect(idle).toBe(false);
  expect(await answered).toBeLessThan(500);
  await drained;
  expect(idle).toBe(true);
});
