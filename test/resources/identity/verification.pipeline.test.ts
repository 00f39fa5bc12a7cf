import { identityQueue } from '../../../src/resources/identity/verification/jobs';
import { bearer, newTestKey } from '../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { createVerificationSession, form } from '../../helpers/fixtures';
import { until } from '../../helpers/queues';
import { expectNowhereAtRest } from '../../helpers/atRest';
import { createReceivingEndpoint, verifyAll } from '../../helpers/webhooks';

// The asynchronous half of verification sessions through the real workers: processing after
// IDENTITY_PROCESSING_DELAY_MS, the whole redaction pipeline after REDACTION_DELAY_MS (session,
// reports and stored events redacted, the explicit-only `redacted` event), the events' fan-out,
// and a worker restart with a Redis that lost every identity job.

const PROCESSING_MS = 400;
const REDACTION_MS = 600;

let e: EventsTestApp;
beforeAll(async () => {
  e = await startEventsTestApp('identity', {
    IDENTITY_PROCESSING_DELAY_MS: String(PROCESSING_MS),
    REDACTION_DELAY_MS: String(REDACTION_MS),
    RECONCILE_INTERVAL_MS: '300',
  });
});
afterAll(() => e.close());

const VS = '/v1/identity/verification_sessions';
const post = (key: string, path: string, body: Record<string, unknown> = {}) => e.t.http().post(path).set(bearer(key)).type('form').send(form(body));
const get = (key: string, path: string) => e.t.http().get(path).set(bearer(key));

const session = (id: string) => e.t.runtime.prisma.identityVerificationSession.findUniqueOrThrow({ where: { id } });
const statusBecomes = (id: string, status: string) => until(async () => (await session(id)).status === status, 15000, `${id} ${status}`);
const redacted = (id: string) => until(async () => (await session(id)).redactionStatus === 'redacted', 15000, `${id} redacted`);

test('a submission stays processing for the delay, then the worker verifies it; every event reaches a * endpoint', async () => {
  const key = newTestKey();
  const all = await createReceivingEndpoint(e.t, e.receiver, key, '/idv/all', { enabled_events: ['*'] });
  const s = await createVerificationSession(e.t, key, { type: 'document', options: { document: { require_matching_selfie: true } } });
  const started = Date.now();
  expect((await post(key, `/sandbox${VS}/${s.id}/submit`, { outcome: 'verified' })).body.status).toBe('processing');
  expect((await get(key, `${VS}/${s.id}`)).body.status).toBe('processing');
  await statusBecomes(s.id, 'verified');
  expect(Date.now() - started).toBeGreaterThanOrEqual(PROCESSING_MS - 50);
  const body = (await get(key, `${VS}/${s.id}?expand[]=verified_outputs`)).body;
  expect(body).toMatchObject({ status: 'verified', verified_outputs: { first_name: 'Jenny' }, last_verification_report: expect.stringMatching(/^vr_/) });

  const failing = await createVerificationSession(e.t, key, { type: 'id_number' });
  await post(key, `/sandbox${VS}/${failing.id}/submit`, { outcome: 'id_number_mismatch' });
  await statusBecomes(failing.id, 'requires_input');
  expect((await session(failing.id)).lastError).toMatchObject({ code: 'id_number_mismatch' });
  const canceled = await createVerificationSession(e.t, key, { type: 'id_number' });
  await post(key, `${VS}/${canceled.id}/cancel`);

  const expected = [
    [s.id, 'created'],
    [s.id, 'processing'],
    [s.id, 'verified'],
    [failing.id, 'created'],
    [failing.id, 'processing'],
    [failing.id, 'requires_input'],
    [canceled.id, 'created'],
    [canceled.id, 'canceled'],
  ].map(([id, type]) => `${id} identity.verification_session.${type}`);
  await until(() => e.receiver.on(all.path).length >= expected.length, 15000, 'deliveries');
  const received = verifyAll(e.receiver.on(all.path), all.secret);
  expect(received.map((ev) => `${(ev.data.object as any).id} ${ev.type}`).sort()).toEqual(expected.sort());
  for (const ev of received) {
    expect((ev.data.object as any).client_secret).toBeNull();
    expect((ev.data.object as any).url).toBeNull();
  }
  const verified = received.find((ev) => ev.type === 'identity.verification_session.verified')!;
  expect(verified.request).toEqual({ id: null, idempotency_key: null });
});

test('redaction: personal data of the session, its reports and its events is replaced; redacted reaches only endpoints naming it', async () => {
  const key = newTestKey();
  const all = await createReceivingEndpoint(e.t, e.receiver, key, '/idv/red-all', { enabled_events: ['*'] });
  const named = await createReceivingEndpoint(e.t, e.receiver, key, '/idv/red-named', { enabled_events: ['identity.verification_session.redacted'] });
  const s = await createVerificationSession(e.t, key, {
    type: 'document',
    metadata: { user: 'jenny' },
    client_reference_id: 'cr',
    provided_details: { email: 'jenny@example.com', phone: '+14155550123' },
    options: { document: { require_id_number: true, require_matching_selfie: true } },
  });
  await post(key, `/sandbox${VS}/${s.id}/submit`, { outcome: 'verified' });
  await statusBecomes(s.id, 'verified');
  const reportId = (await session(s.id)).lastVerificationReport!;

  const started = await post(key, `${VS}/${s.id}/redact`);
  expect(started.body).toMatchObject({ status: 'verified', redaction: { status: 'processing' } });
  await redacted(s.id);

  const sensitive = ['verified_outputs.dob', 'verified_outputs.id_number'];
  const after = (await get(key, `${VS}/${s.id}?expand[]=provided_details&${sensitive.map((p) => `expand[]=${p}`).join('&')}`)).body;
  expect(after).toMatchObject({
    status: 'verified',
    redaction: { status: 'redacted' },
    metadata: {},
    provided_details: { email: '[redacted]', phone: '[redacted]' },
    verified_outputs: {
      first_name: '[redacted]',
      last_name: '[redacted]',
      dob: null,
      address: { city: '[redacted]', line1: '[redacted]', line2: null, postal_code: '[redacted]' },
      id_number_type: 'us_ssn',
    },
    url: null,
    client_secret: null,
  });
  const reportFields = ['document.dob', 'document.expiration_date', 'document.number', 'id_number.dob', 'id_number.id_number'];
  const report = (await get(key, `/v1/identity/verification_reports/${reportId}?${reportFields.map((p) => `expand[]=${p}`).join('&')}`)).body;
  expect(report.document).toMatchObject({ first_name: '[redacted]', last_name: '[redacted]', dob: null, expiration_date: null, issued_date: null, files: null, status: 'verified' });
  expect(report.id_number).toMatchObject({ first_name: '[redacted]', dob: null, id_number: '[redacted]' });
  expect(report.document.number).toBe('[redacted]');
  expect(after.verified_outputs.id_number).toBe('[redacted]');
  expect(report.selfie).toMatchObject({ document: '[redacted]', selfie: '[redacted]' });
  expect(JSON.stringify(report)).not.toContain('Jenny');

  // Stored events about the session lost their personal data too.
  const events = (await get(key, '/v1/events?limit=100')).body.data.filter((ev: any) => ev.data.object.id === s.id);
  expect(events.map((ev: any) => ev.type).sort()).toEqual(
    ['created', 'processing', 'verified', 'redacted'].map((x) => `identity.verification_session.${x}`).sort(),
  );
  for (const ev of events) expect(ev.data.object.metadata).toEqual({});
  expect(JSON.stringify(events)).not.toContain('jenny');

  // Redacted objects can't be changed or used.
  for (const res of [await post(key, `${VS}/${s.id}`, { metadata: { a: '1' } }), await post(key, `${VS}/${s.id}/cancel`), await post(key, `/sandbox${VS}/${s.id}/submit`, { outcome: 'verified' })]) {
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'verification_session_redacted', message: expect.stringContaining('has been redacted') });
  }
  expect((await post(key, `${VS}/${s.id}/redact`)).body.redaction).toEqual({ status: 'redacted' });

  await until(() => e.receiver.on(named.path).length >= 1, 15000, 'redacted delivered');
  const toNamed = verifyAll(e.receiver.on(named.path), named.secret);
  expect(toNamed.map((ev) => ev.type)).toEqual(['identity.verification_session.redacted']);
  expect(toNamed[0].data.object).toMatchObject({ id: s.id, metadata: {}, redaction: { status: 'redacted' } });
  await until(() => e.receiver.on(all.path).length >= 3, 15000, 'other deliveries');
  // Wait a little longer than a delivery takes: `*` must never get the explicit-only type.
  await new Promise((r) => setTimeout(r, 500));
  const toAll = verifyAll(e.receiver.on(all.path), all.secret).map((ev) => ev.type);
  expect(toAll).not.toContain('identity.verification_session.redacted');
  expect(toAll.sort()).toEqual(['created', 'processing', 'verified'].map((x) => `identity.verification_session.${x}`).sort());
});

test('redaction reaches every stored copy: idempotent answers replay the redacted session, and neither a pg_dump nor the logs hold the data', async () => {
  const key = newTestKey();
  const marker = `red${Date.now().toString(36)}`;
  const created = () =>
    e.t
      .http()
      .post(VS)
      .set(bearer(key))
      .set('Idempotency-Key', `create-${key}`)
      .type('form')
      .send(form({ type: 'document', metadata: { order: `${marker}-meta` }, provided_details: { email: `${marker}@example.com` }, expand: ['provided_details'] }));
  const first = await created();
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ metadata: { order: `${marker}-meta` }, provided_details: { email: `${marker}@example.com` } });
  const id = first.body.id;
  const updated = await e.t.http().post(`${VS}/${id}`).set(bearer(key)).set('Idempotency-Key', `update-${key}`).type('form').send(form({ metadata: { note: `${marker}-note` } }));
  expect(updated.status).toBe(200);
  await post(key, `/sandbox${VS}/${id}/submit`, { outcome: 'verified' });
  await statusBecomes(id, 'verified');
  await post(key, `${VS}/${id}/redact`);
  await redacted(id);

  // A replay answers the session as it is now: redacted, the same request's other members kept.
  const replay = await created();
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.body).toMatchObject({ id, object: 'identity.verification_session', metadata: {}, provided_details: { email: '[redacted]' }, redaction: { status: 'redacted' }, client_secret: null, url: null });
  const replayedUpdate = await e.t.http().post(`${VS}/${id}`).set(bearer(key)).set('Idempotency-Key', `update-${key}`).type('form').send(form({ metadata: { note: `${marker}-note` } }));
  expect(replayedUpdate.body).toMatchObject({ id, metadata: {} });
  expect(JSON.stringify([replay.body, replayedUpdate.body])).not.toContain(marker);
  await expectNowhereAtRest(e.t, marker, [id]);
});

test('a worker restart with a Redis that lost every identity job still finishes processing and redaction', async () => {
  const key = newTestKey();
  await e.stopWorkers();
  const processing = await createVerificationSession(e.t, key);
  const redacting = await createVerificationSession(e.t, key, { type: 'document', metadata: { a: 'b' } });
  const midFlow = await createVerificationSession(e.t, key);
  await post(key, `/sandbox${VS}/${processing.id}/submit`, { outcome: 'document_unverified_other' });
  await post(key, `${VS}/${redacting.id}/redact`);
  await post(key, `/sandbox${VS}/${midFlow.id}/submit`, { outcome: 'verified' });
  const midFlowRedact = await post(key, `${VS}/${midFlow.id}/redact`);
  expect(midFlowRedact.body).toMatchObject({ status: 'canceled', redaction: { status: 'processing' } });

  const queue = e.t.runtime.queues.of(identityQueue);
  expect(await queue.getJobCountByTypes('delayed', 'waiting')).toBeGreaterThanOrEqual(3);
  await queue.obliterate({ force: true });
  expect(await queue.getJobCountByTypes('delayed', 'waiting', 'active')).toBe(0);

  await e.startWorkers();
  await statusBecomes(processing.id, 'requires_input');
  await redacted(redacting.id);
  await redacted(midFlow.id);
  expect((await session(processing.id)).lastError).toMatchObject({ code: 'document_unverified_other' });
  expect((await session(redacting.id)).metadata).toEqual({});
  // The canceled mid-flow session was never processed.
  expect(await e.t.runtime.prisma.identityVerificationReport.count({ where: { sessionId: midFlow.id } })).toBe(0);
  expect((await session(midFlow.id)).status).toBe('canceled');
});
