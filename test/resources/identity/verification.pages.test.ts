import type { Browser } from 'playwright-core';
import { bearer, newTestKey } from '../../helpers/app';
import { browserTest, launchBrowser } from '../../helpers/browser';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { createVerificationSession, form } from '../../helpers/fixtures';
import { until } from '../../helpers/queues';
import { hashToken } from '../../../src/resources/identity/verification/service';

// Skipped without chromium (one loud line says so), failing instead under CI=true.
const test = browserTest();

// The hosted verification page in a real browser (Debian chromium): open a session's url, pick
// an outcome, and watch the workers take the session to its end; a url works once, expires, and
// two submissions racing for one link let exactly one through.

let e: EventsTestApp;
let browser: Browser;
beforeAll(async () => {
  e = await startEventsTestApp('identitypage', { IDENTITY_PROCESSING_DELAY_MS: '200', PUBLIC_URL: 'https://verify.sandbank.test' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await e.close();
});

const VS = '/v1/identity/verification_sessions';

/** The url's page on the test server: PUBLIC_URL names the public host, the test app listens on a local port. */
function local(url: string): string {
  expect(url.startsWith(`${e.t.config.publicUrl}/hosted/identity/verification_sessions/`)).toBe(true);
  return `http://127.0.0.1:${e.t.port}${new URL(url).pathname}`;
}

const session = (id: string) => e.t.runtime.prisma.identityVerificationSession.findUniqueOrThrow({ where: { id } });
const statusBecomes = (id: string, status: string) => until(async () => (await session(id)).status === status, 15000, `${id} ${status}`);

test('open the url, verify, land on return_url, and watch the session become verified; the url works once', async () => {
  const key = newTestKey();
  const returnUrl = e.receiver.url('/back-from-verification');
  const s = await createVerificationSession(e.t, key, { type: 'document', options: { document: { require_matching_selfie: true } }, return_url: returnUrl });
  const page = await browser.newPage();
  try {
    const opened = await page.goto(local(s.url));
    expect(opened?.status()).toBe(200);
    expect(opened?.headers()['content-security-policy']).toContain("script-src 'nonce-");
    expect(opened?.headers()['referrer-policy']).toBe('no-referrer');
    await expect(page.locator('h1').textContent()).resolves.toBe('Verify your identity');
    expect(await page.locator('li').allTextContents()).toEqual(['an identity document', 'a selfie matching the document']);
    // Failure codes offered are those of the checks this session runs.
    const offered = await page.locator('#failure option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(offered).toContain('selfie_face_mismatch');
    expect(offered).not.toContain('id_number_mismatch');

    await Promise.all([page.waitForURL(returnUrl), page.click('#verify')]);
    expect(e.receiver.on('/back-from-verification')).toHaveLength(1);
    expect((await session(s.id)).status).not.toBe('requires_input');
    await statusBecomes(s.id, 'verified');
    const done = await e.t.http().get(`${VS}/${s.id}`).set(bearer(key));
    expect(done.body).toMatchObject({ status: 'verified', url: null, client_secret: null, last_verification_report: expect.stringMatching(/^vr_/) });

    const again = await page.goto(local(s.url));
    expect(again?.status()).toBe(410);
    expect(await page.locator('h1').textContent()).toBe('This link has already been used');
    // The url is a credential: its token never reaches a log line.
    expect(e.t.logText()).not.toContain(new URL(s.url).pathname.split('/').pop());
    expect(e.t.logText()).not.toContain(s.client_secret);
  } finally {
    await page.close();
  }
});

test('fail with a chosen error, get a fresh url from retrieve, then leave', async () => {
  const key = newTestKey();
  const s = await createVerificationSession(e.t, key, { type: 'document' });
  const page = await browser.newPage();
  try {
    await page.goto(local(s.url));
    await page.selectOption('#failure', 'document_expired');
    await Promise.all([page.waitForLoadState('load'), page.click('#fail')]);
    await page.waitForSelector('text=Verification submitted');
    await statusBecomes(s.id, 'requires_input');
    expect((await session(s.id)).lastError).toMatchObject({ code: 'document_expired' });

    const fresh = (await e.t.http().get(`${VS}/${s.id}`).set(bearer(key))).body;
    expect(fresh.url).not.toBe(s.url);
    await page.goto(local(fresh.url));
    expect(await page.locator('.errors').textContent()).toContain('document_expired');
    await Promise.all([page.waitForLoadState('load'), page.click('#leave')]);
    await page.waitForSelector('text=You left the verification');
    const left = await session(s.id);
    expect(left.status).toBe('requires_input');
    expect(left.lastError).toMatchObject({ code: 'abandoned' });
    // The first url was used by the failed attempt.
    expect((await page.goto(local(s.url)))?.status()).toBe(410);
  } finally {
    await page.close();
  }
});

test('unknown, expired and closed links say so and change nothing', async () => {
  const key = newTestKey();
  const page = await browser.newPage();
  try {
    const unknown = await page.goto(`http://127.0.0.1:${e.t.port}/hosted/identity/verification_sessions/${'A'.repeat(48)}`);
    expect(unknown?.status()).toBe(404);

    const s = await createVerificationSession(e.t, key);
    const token = new URL(s.url).pathname.split('/').pop()!;
    await e.t.runtime.prisma.identityVerificationLink.update({ where: { tokenHash: hashToken(token) }, data: { expiresAt: Math.floor(Date.now() / 1000) - 1 } });
    const expired = await page.goto(local(s.url));
    expect(expired?.status()).toBe(410);
    expect(await page.locator('h1').textContent()).toBe('This link has expired');

    const c = await createVerificationSession(e.t, key);
    await e.t.http().post(`${VS}/${c.id}/cancel`).set(bearer(key)).type('form').send('');
    const closed = await page.goto(local(c.url));
    expect(closed?.status()).toBe(410);
    expect(await page.locator('h1').textContent()).toBe('This verification is closed');
    // Posting to it anyway neither submits nor uses up the link.
    const posted = await e.t.http().post(new URL(local(c.url)).pathname).type('form').send(form({ outcome: 'verified' }));
    expect(posted.status).toBe(410);
    expect((await session(c.id)).status).toBe('canceled');
    expect(await e.t.runtime.prisma.identityVerificationLink.count({ where: { sessionId: c.id, usedAt: { not: null } } })).toBe(0);
  } finally {
    await page.close();
  }
});

test('two submissions racing for one link: exactly one gets through', async () => {
  const key = newTestKey();
  const s = await createVerificationSession(e.t, key);
  const path = new URL(local(s.url)).pathname;
  const results = await Promise.all(
    Array.from({ length: 5 }, () => e.t.http().post(path).type('form').send(form({ outcome: 'verified' }))),
  );
  const statuses = results.map((r) => r.status).sort();
  expect(statuses).toEqual([200, 410, 410, 410, 410]);
  expect(await e.t.runtime.prisma.identityVerificationSession.count({ where: { id: s.id, submissions: 1 } })).toBe(1);
  await statusBecomes(s.id, 'verified');
});

test('the client secret opens the same page for 24 hours (the url lasts 48), once', async () => {
  const key = newTestKey();
  const s = await createVerificationSession(e.t, key);
  expect(s.client_secret).toMatch(new RegExp(`^${s.id}_secret_test_[A-Za-z0-9]{24}$`));
  const links = e.t.runtime.prisma.identityVerificationLink;
  const bySecret = await links.findUniqueOrThrow({ where: { tokenHash: hashToken(s.client_secret) } });
  const byUrl = await links.findUniqueOrThrow({ where: { tokenHash: hashToken(new URL(s.url).pathname.split('/').pop()!) } });
  expect(byUrl.expiresAt - bySecret.expiresAt).toBe(24 * 3600);
  expect(bySecret.sessionId).toBe(s.id);

  const path = `/hosted/identity/verification_sessions/${s.client_secret}`;
  const opened = await e.t.http().get(path);
  expect(opened.status).toBe(200);
  expect(opened.text).toContain('Verify your identity');
  const submitted = await e.t.http().post(path).type('form').send(form({ outcome: 'verified' }));
  expect(submitted.status).toBe(200);
  await statusBecomes(s.id, 'verified');
  expect((await e.t.http().post(path).type('form').send(form({ outcome: 'verified' }))).status).toBe(410);

  // A secret past its 24 hours says so.
  const later = await createVerificationSession(e.t, key);
  await links.update({ where: { tokenHash: hashToken(later.client_secret) }, data: { expiresAt: Math.floor(Date.now() / 1000) - 1 } });
  const expired = await e.t.http().get(`/hosted/identity/verification_sessions/${later.client_secret}`);
  expect(expired.status).toBe(410);
  expect(expired.text).toContain('This link has expired');
  expect(e.t.logText()).not.toContain(later.client_secret);
});
