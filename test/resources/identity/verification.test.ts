import { bearer, newTestKey, startTestApp, type TestApp } from '../../helpers/app';
import { accountOfKey } from '../../helpers/events';
import { createAccount, form } from '../../helpers/fixtures';
import { expectErrorBody, expectMatchesResponseSchema } from '../../helpers/responseSchemas';
import { finishProcessing } from '../../../src/resources/identity/verification/pipeline';
import { hashToken } from '../../../src/resources/identity/verification/service';

// Verification sessions over HTTP, without workers: create with every parameter validated,
// retrieve (fresh url and secret only in requires_input), list filters, update, cancel, redact
// start, sandbox submit, every forbidden transition, expand, isolation between keys, and the
// events each change writes. The processing step is run directly here (the worker runs the same
// function; identity_pipeline.test.ts runs it through the queue).

type Res = { status: number; body: any; headers: Record<string, string> };

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://sandbank.example.test' });
});
afterAll(() => t.close());

const VS = '/v1/identity/verification_sessions';

const post = (key: string, path: string, body: string | Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Res> =>
  t.http().post(path).set(bearer(key)).set(headers).type('form').send(typeof body === 'string' ? body : form(body)) as unknown as Promise<Res>;
const get = (key: string, path: string): Promise<Res> => t.http().get(path).set(bearer(key)) as unknown as Promise<Res>;

async function create(key: string, params: Record<string, unknown> = { type: 'document' }): Promise<Record<string, any>> {
  const res = await post(key, VS, params);
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const submit = (key: string, id: string, outcome: string) => post(key, `/sandbox${VS}/${id}/submit`, { outcome });

function expectError(res: Res, status: number, error: Record<string, unknown>): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, error });
  expectErrorBody(res.body);
}

async function eventsOf(key: string, sessionId: string): Promise<{ type: string; object: any; requestId: string | null }[]> {
  const accountId = await accountOfKey(t.runtime, key);
  const rows = await t.runtime.prisma.event.findMany({ where: { accountId }, orderBy: { seq: 'asc' } });
  return rows
    .filter((r) => (r.data as any).object.id === sessionId)
    .map((r) => ({ type: r.type, object: (r.data as any).object, requestId: r.requestId }));
}

/** Submits and runs the processing step, as the worker does after the delay. */
async function submitAndProcess(key: string, id: string, outcome: string): Promise<Record<string, any>> {
  const res = await submit(key, id, outcome);
  expect(res.status).toBe(200);
  expect(res.body.status).toBe('processing');
  await finishProcessing(t.runtime, id);
  return (await get(key, `${VS}/${id}`)).body;
}

describe('create', () => {
  test('starts in requires_input with a client secret and a hosted url under PUBLIC_URL', async () => {
    const key = newTestKey();
    const res = await post(key, VS, { type: 'document', client_reference_id: 'user_42', metadata: { order: '7' }, return_url: 'https://shop.example/done' });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostIdentityVerificationSessions', 200, res.body);
    expect(res.body).toMatchObject({
      object: 'identity.verification_session',
      status: 'requires_input',
      type: 'document',
      client_reference_id: 'user_42',
      metadata: { order: '7' },
      options: { document: {} },
      last_error: null,
      last_verification_report: null,
      redaction: null,
      livemode: false,
    });
    expect(res.body.id).toMatch(/^vs_[A-Za-z0-9]{24}$/);
    expect(res.body.client_secret).toMatch(new RegExp(`^${res.body.id}_secret_test_[A-Za-z0-9]{24}$`));
    expect(res.body.url).toMatch(/^https:\/\/sandbank\.example\.test\/hosted\/identity\/verification_sessions\/[A-Za-z0-9]{48}$/);
    // Expand-only fields are absent, not null.
    expect(res.body).not.toHaveProperty('provided_details');
    expect(res.body).not.toHaveProperty('verified_outputs');
    // Only the token's hash is stored, never the session id as the credential.
    const token = res.body.url.split('/').pop();
    const link = await t.runtime.prisma.identityVerificationLink.findUnique({ where: { tokenHash: hashToken(token) } });
    expect(link?.sessionId).toBe(res.body.id);
    expect(JSON.stringify(await t.runtime.prisma.identityVerificationLink.findMany({ where: { sessionId: res.body.id } }))).not.toContain(token);
  });

  test('options, provided details and related objects are kept; provided_details only when expanded', async () => {
    const key = newTestKey();
    const connected = await createAccount(t, key, { type: 'custom', business_type: 'individual', individual: { first_name: 'Jenny' }, capabilities: { transfers: { requested: true } } });
    const person = (await t.runtime.prisma.account.findUnique({ where: { id: connected.id } }))!.details as any;
    const res = await post(key, VS, {
      type: 'document',
      options: { document: { allowed_types: ['passport', 'id_card', 'passport'], require_matching_selfie: true, require_live_capture: true } },
      provided_details: { email: 'jenny@example.com', phone: '+14155550123' },
      related_customer: 'cus_123456789',
      related_customer_account: connected.id,
      related_person: { account: connected.id, person: person.individual_id },
      expand: ['provided_details'],
    });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostIdentityVerificationSessions', 200, res.body);
    expect(res.body).toMatchObject({
      options: { document: { allowed_types: ['passport', 'id_card'], require_matching_selfie: true, require_live_capture: true } },
      provided_details: { email: 'jenny@example.com', phone: '+14155550123' },
      related_customer: 'cus_123456789',
      related_customer_account: connected.id,
      related_person: { account: connected.id, person: person.individual_id },
    });
    const plain = await get(key, `${VS}/${res.body.id}`);
    expect(plain.body).not.toHaveProperty('provided_details');
    const expanded = await get(key, `${VS}/${res.body.id}?expand[]=provided_details&expand[]=verified_outputs`);
    expect(expanded.body.provided_details).toEqual({ email: 'jenny@example.com', phone: '+14155550123' });
    expect(expanded.body.verified_outputs).toBeNull();
  });

  test('id_number sessions and verification flows', async () => {
    const key = newTestKey();
    expect((await create(key, { type: 'id_number' })).options).toEqual({ id_number: {} });
    const flow = await create(key, { verification_flow: 'vf_1abc' });
    expect(flow).toMatchObject({ type: 'verification_flow', verification_flow: 'vf_1abc', options: {} });
  });

  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['no type', {}, { code: 'parameter_missing', param: 'type' }],
    ['an unknown type', { type: 'selfie' }, { param: 'type' }],
    ['type and verification_flow', { type: 'document', verification_flow: 'vf_1' }, { code: 'parameters_exclusive' }],
    ['a malformed flow', { verification_flow: 'flow' }, { code: 'resource_missing', param: 'verification_flow' }],
    ['a bad allowed type', { type: 'document', options: { document: { allowed_types: ['visa'] } } }, { param: 'options[document][allowed_types][0]' }],
    ['document options on id_number', { type: 'id_number', options: { document: { require_live_capture: true } } }, { param: 'options[document]' }],
    ['an unknown option', { type: 'document', options: { email: { require_verification: true } } }, { code: 'parameter_unknown' }],
    ['a bad email', { type: 'document', provided_details: { email: 'nope' } }, { code: 'email_invalid', param: 'provided_details[email]' }],
    ['a bad phone', { type: 'document', provided_details: { phone: 'call me' } }, { param: 'provided_details[phone]' }],
    ['a bad customer', { type: 'document', related_customer: 'bob' }, { code: 'resource_missing', param: 'related_customer' }],
    ['an unknown customer account', { type: 'document', related_customer_account: 'acct_0000000000000000' }, { code: 'resource_missing', param: 'related_customer_account' }],
    ['a person without account', { type: 'document', related_person: { person: 'person_1' } }, { param: 'related_person[account]' }],
    ['a bad return_url', { type: 'document', return_url: 'javascript:alert(1)' }, { code: 'url_invalid', param: 'return_url' }],
    ['a long client_reference_id', { type: 'document', client_reference_id: 'x'.repeat(5001) }, { param: 'client_reference_id' }],
  ])('refuses %s with a clear 400', async (_label, params, error) => {
    const res = await post(newTestKey(), VS, params);
    expectError(res, 400, { type: 'invalid_request_error', ...error });
  });

  test("another platform's account can't be a related account or person", async () => {
    const other = newTestKey();
    const theirs = (await createAccount(t, other)).id;
    const key = newTestKey();
    expectError(await post(key, VS, { type: 'document', related_customer_account: theirs }), 400, { code: 'resource_missing', param: 'related_customer_account' });
    expectError(await post(key, VS, { type: 'document', related_person: { account: theirs, person: 'person_1' } }), 400, {
      code: 'resource_missing',
      param: 'related_person[account]',
    });
  });

  test('emits identity.verification_session.created without the url or secret in the stored event', async () => {
    const key = newTestKey();
    const s = await create(key);
    const events = await eventsOf(key, s.id);
    expect(events.map((e) => e.type)).toEqual(['identity.verification_session.created']);
    expect(events[0].object).toMatchObject({ id: s.id, status: 'requires_input', client_secret: null, url: null });
    expect(events[0].requestId).toMatch(/^req_/);
  });
});

describe('retrieve and list', () => {
  test('a retrieve in requires_input hands out a fresh url and client secret', async () => {
    const key = newTestKey();
    const s = await create(key);
    const a = await get(key, `${VS}/${s.id}`);
    const b = await get(key, `${VS}/${s.id}`);
    expectMatchesResponseSchema('GetIdentityVerificationSessionsSession', 200, a.body);
    expect(a.body.url).not.toBe(s.url);
    expect(b.body.url).not.toBe(a.body.url);
    expect(b.body.client_secret).not.toBe(a.body.client_secret);
    expect(a.body.client_secret).toMatch(/_secret_test_/);
  });

  test('unknown ids and other keys get 404', async () => {
    const key = newTestKey();
    const s = await create(key);
    expectError(await get(newTestKey(), `${VS}/${s.id}`), 404, { code: 'resource_missing', param: 'id' });
    expectError(await get(key, `${VS}/vs_nope`), 404, { code: 'resource_missing' });
    expectError(await get(key, `${VS}/nonsense`), 404, { code: 'resource_missing' });
    expectError(await post(newTestKey(), `${VS}/${s.id}/cancel`), 404, { code: 'resource_missing' });
    expectError(await submit(newTestKey(), s.id, 'verified'), 404, { code: 'resource_missing' });
  });

  test('a connected account (Stripe-Account) has its own sessions, events included', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id;
    const asConnected = { 'Stripe-Account': connected };
    const mine = await post(key, VS, { type: 'document' }, asConnected);
    expect(mine.status).toBe(200);
    expectError(await get(key, `${VS}/${mine.body.id}`), 404, { code: 'resource_missing' });
    expect((await get(key, VS)).body.data).toEqual([]);
    const seen = await t.http().get(VS).set(bearer(key)).set(asConnected);
    expect(seen.body.data.map((s: any) => s.id)).toEqual([mine.body.id]);
    const event = await t.runtime.prisma.event.findFirst({ where: { type: 'identity.verification_session.created', accountId: connected } });
    expect((event?.data as any).object.id).toBe(mine.body.id);
  });

  test('list filters by client_reference_id, status, related customer and created; no secrets in lists', async () => {
    const key = newTestKey();
    const connected = (await createAccount(t, key)).id;
    const a = await create(key, { type: 'document', client_reference_id: 'a', related_customer: 'cus_a1' });
    const b = await create(key, { type: 'id_number', client_reference_id: 'b', related_customer_account: connected });
    const c = await create(key, { type: 'document', client_reference_id: 'a' });
    await post(key, `${VS}/${c.id}/cancel`);
    const ids = async (query: string) => {
      const res = await get(key, `${VS}?${query}`);
      expect(res.status).toBe(200);
      expectMatchesResponseSchema('GetIdentityVerificationSessions', 200, res.body);
      return res.body.data.map((s: any) => s.id);
    };
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('client_reference_id=a')).toEqual([c.id, a.id]);
    expect(await ids('status=canceled')).toEqual([c.id]);
    expect(await ids('status=requires_input')).toEqual([b.id, a.id]);
    expect(await ids('related_customer=cus_a1')).toEqual([a.id]);
    expect(await ids(`related_customer_account=${connected}`)).toEqual([b.id]);
    expect(await ids(`created[gte]=${a.created}&limit=2`)).toEqual([c.id, b.id]);
    expect(await ids(`created=${a.created - 1000}`)).toEqual([]);
    const all = await get(key, VS);
    for (const s of all.body.data) expect([s.url, s.client_secret]).toEqual([null, null]);
    expectError(await get(key, `${VS}?status=bogus`), 400, { param: 'status' });
    expectError(await get(newTestKey(), `${VS}?starting_after=${a.id}`), 400, { code: 'resource_missing', param: 'starting_after' });
  });
});

describe('update', () => {
  test('changes type, options, provided details and metadata in requires_input', async () => {
    const key = newTestKey();
    const s = await create(key, { type: 'document', metadata: { a: '1', b: '2' }, options: { document: { require_live_capture: true } } });
    const res = await post(key, `${VS}/${s.id}`, { options: { document: { require_matching_selfie: true } }, metadata: { a: '', c: '3' }, provided_details: { email: 'j@example.com' }, expand: ['provided_details'] });
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostIdentityVerificationSessionsSession', 200, res.body);
    expect(res.body).toMatchObject({
      options: { document: { require_live_capture: true, require_matching_selfie: true } },
      metadata: { b: '2', c: '3' },
      provided_details: { email: 'j@example.com' },
    });
    expect(res.body.url).toMatch(/\/hosted\/identity\/verification_sessions\//);
    const idNumber = await post(key, `${VS}/${s.id}`, { type: 'id_number' });
    expect(idNumber.body).toMatchObject({ type: 'id_number', options: { id_number: {} } });
    const reset = await post(key, `${VS}/${s.id}`, { type: 'document', options: { document: '' } });
    expect(reset.body.options).toEqual({ document: {} });
  });

  test('refused outside requires_input, naming the status', async () => {
    const key = newTestKey();
    const s = await create(key);
    await submit(key, s.id, 'verified');
    expectError(await post(key, `${VS}/${s.id}`, { metadata: { a: '1' } }), 400, {
      code: 'verification_session_unexpected_status',
      message: expect.stringContaining('`processing`'),
    });
    await finishProcessing(t.runtime, s.id);
    expectError(await post(key, `${VS}/${s.id}`, { metadata: { a: '1' } }), 400, { message: expect.stringContaining('`verified`') });
    const c = await create(key);
    await post(key, `${VS}/${c.id}/cancel`);
    expectError(await post(key, `${VS}/${c.id}`, { type: 'id_number' }), 400, { message: expect.stringContaining('`canceled`') });
  });
});

describe('submission and processing', () => {
  test('verified: processing, then verified with a report, verified_outputs, no url or secret', async () => {
    const key = newTestKey();
    const s = await create(key, { type: 'document', client_reference_id: 'ref', options: { document: { require_id_number: true, require_matching_selfie: true } } });
    const done = await submitAndProcess(key, s.id, 'verified');
    expect(done).toMatchObject({ status: 'verified', last_error: null, client_secret: null, url: null });
    expect(done.last_verification_report).toMatch(/^vr_/);
    const expanded = await get(key, `${VS}/${s.id}?expand[]=verified_outputs&expand[]=last_verification_report`);
    expectMatchesResponseSchema('GetIdentityVerificationSessionsSession', 200, expanded.body);
    expect(expanded.body.verified_outputs).toMatchObject({ first_name: 'Jenny', last_name: 'Rosen', id_number_type: 'us_ssn' });
    const report = expanded.body.last_verification_report;
    expect(report).toMatchObject({
      object: 'identity.verification_report',
      type: 'document',
      client_reference_id: 'ref',
      verification_session: s.id,
      document: { status: 'verified', error: null, first_name: 'Jenny' },
      id_number: { status: 'verified', id_number_type: 'us_ssn' },
      selfie: { status: 'verified', error: null },
      options: { document: { require_id_number: true, require_matching_selfie: true } },
    });
    expect((await eventsOf(key, s.id)).map((e) => e.type)).toEqual([
      'identity.verification_session.created',
      'identity.verification_session.processing',
      'identity.verification_session.verified',
    ]);
  });

  test('the sensitive fields are there only when expanded, on sessions and reports', async () => {
    const key = newTestKey();
    const s = await create(key, { type: 'document', options: { document: { require_id_number: true } } });
    const { last_verification_report: reportId } = await submitAndProcess(key, s.id, 'verified');
    const plain = await get(key, `${VS}/${s.id}?expand[]=verified_outputs&expand[]=last_verification_report`);
    expect(plain.body.verified_outputs).not.toHaveProperty('dob');
    expect(plain.body.verified_outputs).not.toHaveProperty('id_number');
    for (const field of ['number', 'dob', 'expiration_date']) expect(plain.body.last_verification_report.document).not.toHaveProperty(field);
    for (const field of ['dob', 'id_number']) expect(plain.body.last_verification_report.id_number).not.toHaveProperty(field);

    // Naming a sensitive field is enough: verified_outputs comes with it.
    const sensitive = await get(key, `${VS}/${s.id}?expand[]=verified_outputs.dob&expand[]=verified_outputs.id_number`);
    expectMatchesResponseSchema('GetIdentityVerificationSessionsSession', 200, sensitive.body);
    expect(sensitive.body.verified_outputs).toMatchObject({ first_name: 'Jenny', dob: { day: 1, month: 1, year: 1901 }, id_number: '000000000' });
    const onlyDob = await get(key, `${VS}/${s.id}?expand[]=verified_outputs.dob`);
    expect(onlyDob.body.verified_outputs.dob).toEqual({ day: 1, month: 1, year: 1901 });
    expect(onlyDob.body.verified_outputs).not.toHaveProperty('id_number');

    const report = await get(
      key,
      `/v1/identity/verification_reports/${reportId}?${['document.number', 'document.dob', 'document.expiration_date', 'id_number.dob', 'id_number.id_number'].map((p) => `expand[]=${p}`).join('&')}`,
    );
    expectMatchesResponseSchema('GetIdentityVerificationReportsReport', 200, report.body);
    expect(report.body.document).toMatchObject({ number: 'D00000000', dob: { day: 1, month: 1, year: 1901 }, expiration_date: { day: 1, month: 12, year: 2034 } });
    expect(report.body.id_number).toMatchObject({ dob: { day: 1, month: 1, year: 1901 }, id_number: '000000000' });
    const throughSession = await get(key, `${VS}/${s.id}?expand[]=last_verification_report.document.number`);
    expect(throughSession.body.last_verification_report.document.number).toBe('D00000000');
    expect(throughSession.body.last_verification_report.document).not.toHaveProperty('dob');
    const listed = await get(key, `/v1/identity/verification_reports?expand[]=data.id_number.id_number`);
    expect(listed.body.data[0].id_number.id_number).toBe('000000000');

    // A report without the check has nothing to expand; the sub-object itself isn't expandable.
    const idOnly = await create(key, { type: 'id_number' });
    const { last_verification_report: idReport } = await submitAndProcess(key, idOnly.id, 'verified');
    expect((await get(key, `/v1/identity/verification_reports/${idReport}?expand[]=document.number`)).body).not.toHaveProperty('document');
    expectError(await get(key, `/v1/identity/verification_reports/${idReport}?expand[]=document`), 400, { message: 'This property cannot be expanded (document).' });
    expectError(await get(key, `${VS}/${s.id}?expand[]=verified_outputs.first_name`), 400, { message: 'This property cannot be expanded (first_name).' });

    // Events and webhooks carry none of them.
    const stored = JSON.stringify(await eventsOf(key, s.id));
    expect(stored).not.toContain('000000000');
    expect(stored).not.toContain('D00000000');

    // Through the SDK, as the public guide does it.
    const stripe = t.stripe(key);
    const viaSdk = await stripe.identity.verificationSessions.retrieve(s.id, { expand: ['verified_outputs.dob', 'verified_outputs.id_number'] });
    expect(viaSdk.verified_outputs?.id_number).toBe('000000000');
    const reportViaSdk = await stripe.identity.verificationReports.retrieve(reportId, { expand: ['document.number'] });
    expect(reportViaSdk.document?.number).toBe('D00000000');
  });

  test('a failure goes back to requires_input with last_error and a report naming the failed check; resubmission works', async () => {
    const key = newTestKey();
    const s = await create(key, { type: 'document', options: { document: { require_matching_selfie: true } } });
    const failed = await submitAndProcess(key, s.id, 'selfie_face_mismatch');
    expect(failed).toMatchObject({ status: 'requires_input', last_error: { code: 'selfie_face_mismatch', reason: expect.any(String) } });
    expect(failed.url).toMatch(/hosted/);
    const report = (await get(key, `/v1/identity/verification_reports/${failed.last_verification_report}`)).body;
    expect(report.selfie).toMatchObject({ status: 'unverified', error: { code: 'selfie_face_mismatch' } });
    expect(report.document.status).toBe('verified');
    const again = await submitAndProcess(key, s.id, 'verified');
    expect(again).toMatchObject({ status: 'verified', last_error: null });
    expect(again.last_verification_report).not.toBe(failed.last_verification_report);
    expect((await eventsOf(key, s.id)).map((e) => e.type.split('.').pop())).toEqual(['created', 'processing', 'requires_input', 'processing', 'verified']);
  });

  test('outcomes must fit the checks the session runs; abandoned leaves the status', async () => {
    const key = newTestKey();
    const s = await create(key, { type: 'id_number' });
    expectError(await submit(key, s.id, 'selfie_face_mismatch'), 400, { param: 'outcome', message: expect.stringContaining('selfie') });
    expectError(await submit(key, s.id, 'document_expired'), 400, { param: 'outcome' });
    expectError(await submit(key, s.id, 'wat'), 400, { param: 'outcome' });
    const left = await submit(key, s.id, 'abandoned');
    expect(left.body).toMatchObject({ status: 'requires_input', last_error: { code: 'abandoned' } });
    const failed = await submitAndProcess(key, s.id, 'id_number_mismatch');
    expect(failed.last_error.code).toBe('id_number_mismatch');
    const consent = await submitAndProcess(key, s.id, 'consent_declined');
    // No check ran, so no new report.
    expect(consent).toMatchObject({ status: 'requires_input', last_error: { code: 'consent_declined' }, last_verification_report: failed.last_verification_report });
  });

  test('a processing step that runs twice or after a cancel does nothing more', async () => {
    const key = newTestKey();
    const s = await create(key);
    await submitAndProcess(key, s.id, 'verified');
    expect(await finishProcessing(t.runtime, s.id)).toEqual([]);
    expect(await t.runtime.prisma.identityVerificationReport.count({ where: { sessionId: s.id } })).toBe(1);
  });
});

describe('cancel', () => {
  test('only from requires_input, and final', async () => {
    const key = newTestKey();
    const s = await create(key);
    const res = await post(key, `${VS}/${s.id}/cancel`);
    expect(res.status).toBe(200);
    expectMatchesResponseSchema('PostIdentityVerificationSessionsSessionCancel', 200, res.body);
    expect(res.body).toMatchObject({ status: 'canceled', client_secret: null, url: null });
    expect((await get(key, `${VS}/${s.id}`)).body).toMatchObject({ status: 'canceled', url: null, client_secret: null });
    expectError(await post(key, `${VS}/${s.id}/cancel`), 400, { code: 'verification_session_unexpected_status', message: expect.stringContaining('`canceled`') });
    expectError(await submit(key, s.id, 'verified'), 400, { message: expect.stringContaining('`canceled`') });
    expect((await eventsOf(key, s.id)).map((e) => e.type)).toEqual(['identity.verification_session.created', 'identity.verification_session.canceled']);

    const p = await create(key);
    await submit(key, p.id, 'verified');
    expectError(await post(key, `${VS}/${p.id}/cancel`), 400, { message: expect.stringContaining('`processing`') });
    await finishProcessing(t.runtime, p.id);
    expectError(await post(key, `${VS}/${p.id}/cancel`), 400, { message: expect.stringContaining('`verified`') });
  });
});

describe('redact (start)', () => {
  test('from requires_input, verified and canceled the status stays and redaction is processing', async () => {
    const key = newTestKey();
    const r = await create(key);
    const v = await create(key);
    await submitAndProcess(key, v.id, 'verified');
    const c = await create(key);
    await post(key, `${VS}/${c.id}/cancel`);
    for (const [s, status] of [[r, 'requires_input'], [v, 'verified'], [c, 'canceled']] as const) {
      const res = await post(key, `${VS}/${s.id}/redact`);
      expect(res.status).toBe(200);
      expectMatchesResponseSchema('PostIdentityVerificationSessionsSessionRedact', 200, res.body);
      expect(res.body).toMatchObject({ status, redaction: { status: 'processing' }, url: null, client_secret: null });
    }
    // Asking again changes nothing.
    const again = await post(key, `${VS}/${r.id}/redact`);
    expect(again.body.redaction).toEqual({ status: 'processing' });
    const row = await t.runtime.prisma.identityVerificationSession.findUnique({ where: { id: r.id } });
    expect(row?.redactionDueAt).not.toBeNull();
  });

  test('from processing the session is canceled first', async () => {
    const key = newTestKey();
    const s = await create(key);
    await submit(key, s.id, 'verified');
    const res = await post(key, `${VS}/${s.id}/redact`);
    expect(res.body).toMatchObject({ status: 'canceled', redaction: { status: 'processing' } });
    // The pending outcome is gone: the processing step finds nothing to do.
    expect(await finishProcessing(t.runtime, s.id)).toEqual([]);
    expect((await get(key, `${VS}/${s.id}`)).body.status).toBe('canceled');
    expect((await eventsOf(key, s.id)).map((e) => e.type.split('.').pop())).toEqual(['created', 'processing', 'canceled']);
  });

  test('a session being redacted cannot be updated, canceled or submitted', async () => {
    const key = newTestKey();
    const s = await create(key);
    await post(key, `${VS}/${s.id}/redact`);
    for (const res of [
      await post(key, `${VS}/${s.id}`, { metadata: { a: '1' } }),
      await post(key, `${VS}/${s.id}/cancel`),
      await submit(key, s.id, 'verified'),
    ]) {
      expectError(res, 400, { code: 'verification_session_redacted', message: expect.stringContaining('being redacted') });
    }
    expect((await get(key, `${VS}/${s.id}`)).body).toMatchObject({ status: 'requires_input', url: null, client_secret: null });
  });
});

describe('the official SDK', () => {
  test('create, retrieve, update, list, cancel, redact and reports', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const created = await stripe.identity.verificationSessions.create({
      type: 'document',
      options: { document: { require_matching_selfie: true } },
      provided_details: { email: 'jenny@example.com' },
      metadata: { user: 'u1' },
      client_reference_id: 'u1',
    });
    expect(created.status).toBe('requires_input');
    expect(created.url).toContain('/hosted/identity/verification_sessions/');
    const retrieved = await stripe.identity.verificationSessions.retrieve(created.id, { expand: ['provided_details'] });
    expect(retrieved.provided_details).toEqual({ email: 'jenny@example.com' });
    const updated = await stripe.identity.verificationSessions.update(created.id, { metadata: { user: 'u2' } });
    expect(updated.metadata).toEqual({ user: 'u2' });
    const ids: string[] = [];
    for await (const s of stripe.identity.verificationSessions.list({ client_reference_id: 'u1', limit: 1 })) ids.push(s.id);
    expect(ids).toEqual([created.id]);

    await submitAndProcess(key, created.id, 'document_expired');
    const reports = await stripe.identity.verificationReports.list({ verification_session: created.id });
    expect(reports.data).toHaveLength(1);
    expect(reports.data[0].document?.error?.code).toBe('document_expired');
    const report = await stripe.identity.verificationReports.retrieve(reports.data[0].id);
    expect(report.verification_session).toBe(created.id);
    expect((await stripe.identity.verificationReports.list({ type: 'id_number' })).data).toEqual([]);

    const canceled = await stripe.identity.verificationSessions.cancel(created.id);
    expect(canceled.status).toBe('canceled');
    await expect(stripe.identity.verificationSessions.cancel(created.id)).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'verification_session_unexpected_status',
    });
    const redacted = await stripe.identity.verificationSessions.redact(created.id);
    expect(redacted.redaction?.status).toBe('processing');
    await expect(stripe.identity.verificationSessions.retrieve('vs_missing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404 });
    await expect(stripe.identity.verificationReports.retrieve('vr_missing')).rejects.toMatchObject({ statusCode: 404 });
  });

  test('an idempotent create replays the same session (its secret sealed at rest)', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const a = await stripe.identity.verificationSessions.create({ type: 'id_number' }, { idempotencyKey: 'idv-1' });
    const b = await stripe.identity.verificationSessions.create({ type: 'id_number' }, { idempotencyKey: 'idv-1' });
    expect(b.id).toBe(a.id);
    expect(b.client_secret).toBe(a.client_secret);
    const stored = await t.runtime.prisma.idempotencyRecord.findMany({ where: { key: 'idv-1' } });
    expect(JSON.stringify(stored)).not.toContain(a.client_secret!);
  });
});

describe('reports', () => {
  test('list filters and isolation', async () => {
    const key = newTestKey();
    const d = await create(key, { type: 'document', client_reference_id: 'x' });
    const n = await create(key, { type: 'id_number', client_reference_id: 'y' });
    await submitAndProcess(key, d.id, 'verified');
    await submitAndProcess(key, n.id, 'verified');
    const list = async (q: string) => {
      const res = await get(key, `/v1/identity/verification_reports?${q}`);
      expect(res.status).toBe(200);
      expectMatchesResponseSchema('GetIdentityVerificationReports', 200, res.body);
      return res.body.data.map((r: any) => r.verification_session);
    };
    expect(await list('')).toEqual([n.id, d.id]);
    expect(await list('type=document')).toEqual([d.id]);
    expect(await list('client_reference_id=y')).toEqual([n.id]);
    expect(await list(`verification_session=${d.id}`)).toEqual([d.id]);
    const reportId = (await get(key, `${VS}/${d.id}`)).body.last_verification_report;
    const one = await get(key, `/v1/identity/verification_reports/${reportId}`);
    expectMatchesResponseSchema('GetIdentityVerificationReportsReport', 200, one.body);
    expectError(await get(newTestKey(), `/v1/identity/verification_reports/${reportId}`), 404, { code: 'resource_missing' });
    expect((await get(newTestKey(), '/v1/identity/verification_reports')).body.data).toEqual([]);
  });
});
