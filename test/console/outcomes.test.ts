import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { consoleGet, consolePost, rowCount, signIn, type ConsoleSession } from '../helpers/console';
import { createFcSession, createPendingAuthentication, createVerificationSession, form } from '../helpers/fixtures';
import { createForwardingRequest } from '../helpers/forwarding';

// The console's test outcomes: pending 3-D Secure challenges completed or failed, identity
// sessions awaiting input submitted, a Financial Connections session completed with a test
// institution, forwarding requests shown as the API masks them; all through the sandbox's own
// operations. Another key's challenge or session is a 404, forms need the session's CSRF token,
// and values are shown inert.

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

const apiGet = (path: string, k = key) => t.http().get(path).set(bearer(k));
const section = (page: string, name: string) => new RegExp(`<section class="card" data-test="${name}">([\\s\\S]*?)</section>`).exec(page)![1];

describe('3-D Secure', () => {
  test('pending authentications are listed with Complete and Fail; Complete pays the PaymentIntent, Fail sends it back', async () => {
    const own = newTestKey();
    const ownSession = await signIn(t, own);
    const paid = await createPendingAuthentication(t, own);
    const failed = await createPendingAuthentication(t, own);
    const page = await consoleGet(t, ownSession, '/console/outcomes');
    expect(page.status).toBe(200);
    const listed = section(page.text, 'authentications');
    expect(rowCount(listed)).toBe(2);
    expect(listed).toContain(`action="/console/outcomes/authentications/${paid.id}/complete"`);
    expect(listed).toContain(`action="/console/outcomes/authentications/${failed.id}/fail"`);
    expect(listed).toContain(`href="/console/objects/${paid.paymentIntent}"`);

    const done = await consolePost(t, ownSession, `/console/outcomes/authentications/${paid.id}/complete`, {}, '/console/outcomes');
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(`/console/outcomes?done=authentication&id=${paid.id}&status=succeeded&intent=${paid.paymentIntent}`);
    expect((await apiGet(`/v1/payment_intents/${paid.paymentIntent}`, own)).body.status).toBe('succeeded');
    const after = await consoleGet(t, ownSession, done.headers.location);
    expect(after.text).toMatch(/data-test="outcome-done">3-D Secure authentication answered: <span class="mono">payatt_\w+<\/span> is <strong>succeeded<\/strong>/);
    expect(rowCount(section(after.text, 'authentications'))).toBe(1);

    await consolePost(t, ownSession, `/console/outcomes/authentications/${failed.id}/fail`, {}, '/console/outcomes');
    expect((await apiGet(`/v1/payment_intents/${failed.paymentIntent}`, own)).body).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'payment_intent_authentication_failure' } });
    // Answered already: the API's refusal is shown.
    const again = await consolePost(t, ownSession, `/console/outcomes/authentications/${paid.id}/fail`, {}, '/console/outcomes');
    expect(again.status).toBe(400);
    expect(again.text).toContain('already been answered (succeeded)');
  });

  test('another key’s authentication is a 404, and stays pending', async () => {
    const other = newTestKey();
    const theirs = await createPendingAuthentication(t, other);
    const res = await consolePost(t, session, `/console/outcomes/authentications/${theirs.id}/complete`, {}, '/console/outcomes');
    expect(res.status).toBe(404);
    expect((await consoleGet(t, session, '/console/outcomes')).text).not.toContain(theirs.id);
    expect((await apiGet(`/v1/payment_intents/${theirs.paymentIntent}`, other)).body.status).toBe('requires_action');
  });

  test('without the session’s CSRF token nothing is answered (403)', async () => {
    const mine = await createPendingAuthentication(t, key);
    const fc = await createFcSession(t, key);
    for (const path of [`/console/outcomes/authentications/${mine.id}/complete`, `/console/outcomes/financial_connections/${fc.id}/complete`]) {
      const res = await t.http().post(path).set('Cookie', session.cookie).type('form').send(form({ csrf_token: 'forged', institution: 'test_institution' }));
      expect(res.status).toBe(403);
    }
    expect((await apiGet(`/v1/payment_intents/${mine.paymentIntent}`)).body.status).toBe('requires_action');
    expect((await apiGet(`/v1/financial_connections/sessions/${fc.id}`)).body.status).toBe('pending');
  });
});

describe('identity', () => {
  test('sessions awaiting input are listed with the API’s outcomes; submitting one starts processing', async () => {
    const vs = await createVerificationSession(t, key, { type: 'document', metadata: { note: '<img src=x onerror=alert(1)>' } });
    const page = await consoleGet(t, session, '/console/outcomes');
    const listed = section(page.text, 'verifications');
    expect(listed).toContain(vs.id);
    // The choices are the submit operation's own enum.
    for (const outcome of ['verified', 'abandoned', 'document_expired', 'selfie_face_mismatch']) expect(listed).toContain(`<option value="${outcome}">`);
    const res = await consolePost(t, session, `/console/outcomes/verifications/${vs.id}/submit`, { outcome: 'verified' }, '/console/outcomes');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/console/outcomes?done=verification&id=${vs.id}&status=processing`);
    expect((await apiGet(`/v1/identity/verification_sessions/${vs.id}`)).body.status).toBe('processing');
    expect(section((await consoleGet(t, session, '/console/outcomes')).text, 'verifications')).not.toContain(vs.id);
  });

  test('an outcome of a check the session doesn’t run shows the API’s error; another key’s session is a 404', async () => {
    const vs = await createVerificationSession(t, key, { type: 'id_number' });
    const res = await consolePost(t, session, `/console/outcomes/verifications/${vs.id}/submit`, { outcome: 'selfie_face_mismatch' }, '/console/outcomes');
    expect(res.status).toBe(400);
    expect(res.text).toContain('class="error"');
    expect((await apiGet(`/v1/identity/verification_sessions/${vs.id}`)).body.status).toBe('requires_input');
    const theirs = await createVerificationSession(t, newTestKey());
    expect((await consolePost(t, session, `/console/outcomes/verifications/${theirs.id}/submit`, { outcome: 'verified' }, '/console/outcomes')).status).toBe(404);
  });
});

describe('Financial Connections', () => {
  test('pending sessions are listed; one completed with a test institution links its accounts and leaves the list', async () => {
    const own = newTestKey();
    const ownSession = await signIn(t, own);
    const fc = await createFcSession(t, own);
    const other = await createFcSession(t, own);
    const page = await consoleGet(t, ownSession, '/console/outcomes');
    const listed = section(page.text, 'financial-connections');
    expect(rowCount(listed)).toBe(2);
    expect(listed).toContain('<option value="test_institution">');
    expect(listed).toContain(`action="/console/outcomes/financial_connections/${fc.id}/complete"`);
    expect(listed).toContain(`href="/console/objects/${fc.account_holder.customer}"`);
    const res = await consolePost(t, ownSession, `/console/outcomes/financial_connections/${fc.id}/complete`, { institution: 'test_institution' }, '/console/outcomes');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/console/outcomes?done=financial_connections&id=${fc.id}&status=succeeded`);
    const done = (await apiGet(`/v1/financial_connections/sessions/${fc.id}`, own)).body;
    expect(done.status).toBe('succeeded');
    expect(done.accounts.data.length).toBeGreaterThan(0);
    const after = section((await consoleGet(t, ownSession, '/console/outcomes')).text, 'financial-connections');
    expect(rowCount(after)).toBe(1);
    expect(after).toContain(other.id);
    // A down institution: the API's answer (the session fails), shown as done.
    const down = await consolePost(t, ownSession, `/console/outcomes/financial_connections/${other.id}/complete`, { institution: 'down_error' }, '/console/outcomes');
    expect(down.headers.location).toBe(`/console/outcomes?done=financial_connections&id=${other.id}&status=failed`);
  });

  test('an unknown institution shows the API’s refusal; another key’s session is a 404', async () => {
    const fc = await createFcSession(t, key);
    const bad = await consolePost(t, session, `/console/outcomes/financial_connections/${fc.id}/complete`, { institution: 'nope' }, '/console/outcomes');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('class="error"');
    expect((await apiGet(`/v1/financial_connections/sessions/${fc.id}`)).body.status).toBe('pending');
    const theirs = await createFcSession(t, newTestKey());
    const res = await consolePost(t, session, `/console/outcomes/financial_connections/${theirs.id}/complete`, { institution: 'test_institution' }, '/console/outcomes');
    expect(res.status).toBe(404);
    expect(section((await consoleGet(t, session, '/console/outcomes')).text, 'financial-connections')).not.toContain(theirs.id);
  });
});

describe('forwarding', () => {
  test('each request and response as the API renders them (the card number masked), values inert', async () => {
    const own = newTestKey();
    const ownSession = await signIn(t, own);
    const forwarded = await createForwardingRequest(t, own, {
      request: { body: JSON.stringify({ card: { number: '' }, note: '</pre><script>alert(1)</script>' }), headers: [{ name: 'X-Note', value: '<img src=x onerror=alert(2)>' }] },
    });
    const page = await consoleGet(t, ownSession, '/console/outcomes');
    const shown = section(page.text, 'forwards');
    expect(shown).toContain(forwarded.id);
    const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    const request = unescape(/<pre class="json" data-test="forward-request">([\s\S]*?)<\/pre>/.exec(shown)![1]);
    const response = unescape(/<pre class="json" data-test="forward-response">([\s\S]*?)<\/pre>/.exec(shown)![1]);
    const api = (await apiGet(`/v1/forwarding/requests/${forwarded.id}`, own)).body;
    expect(request).toBe(JSON.stringify(api.request_details, null, 2));
    expect(response).toBe(JSON.stringify(api.response_details, null, 2));
    expect(page.text).not.toContain('4242424242424242');
    expect(request).toContain('</pre><script>alert(1)</script>');
    expect(page.text).not.toMatch(/<script>alert|<img src=x/);
  });
});

test('a 3-D Secure PaymentIntent of a connected account viewed as is answered as that account', async () => {
  const own = newTestKey();
  const ownSession = await signIn(t, own);
  const connected = (await t.http().post('/v1/accounts').set(bearer(own)).type('form').send(form({ type: 'express' }))).body.id;
  const intent = (
    await t
      .http()
      .post('/v1/payment_intents')
      .set(bearer(own))
      .set('Stripe-Account', connected)
      .type('form')
      .send(form({ amount: 1000, currency: 'usd', allowed_payment_method_types: ['card'], payment_method: 'pm_card_authenticationRequired', confirm: true }))
  ).body;
  expect(intent.status).toBe('requires_action');
  expect((await consoleGet(t, ownSession, '/console/outcomes')).text).not.toContain(intent.id);
  await consolePost(t, ownSession, '/console/view-as', { account: connected }, '/console/outcomes');
  const page = await consoleGet(t, ownSession, '/console/outcomes');
  const id = new RegExp(`action="/console/outcomes/authentications/(payatt_\\w+)/complete"`).exec(section(page.text, 'authentications'))![1];
  expect(section(page.text, 'authentications')).toContain(intent.id);
  expect((await consolePost(t, ownSession, `/console/outcomes/authentications/${id}/complete`, {}, '/console/outcomes')).status).toBe(303);
  expect((await t.http().get(`/v1/payment_intents/${intent.id}`).set(bearer(own)).set('Stripe-Account', connected)).body.status).toBe('succeeded');
});
