import { Client } from 'pg';
import request from 'supertest';
import Stripe from 'stripe';
import { bearer, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { CLOSED_ORIGIN } from '../helpers/fixtures';
import { accountOf, CREATE_BODY, createEndpoint, ENDPOINTS, endpointCount, expectError, mustCreate } from './util';
import { until } from '../helpers/queues';
import { answeredObjectId, fingerprintOf, IdempotencyStore } from '../../src/kernel/idempotency';
import { answerJson } from '../../src/kernel/json';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());
afterEach(() => jest.restoreAllMocks());

let counter = 0;
const newIdemKey = () => `idem-${process.pid}-${Date.now()}-${++counter}`;

const records = (key: string) => t.runtime.prisma.idempotencyRecord.findMany({ where: { key } });

const mismatchMessage = (key: string) =>
  `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`;

describe('replay', () => {
  test('the same request again returns the same status and body, marked as replayed, and creates nothing new', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    const first = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.body.secret).toBe(first.body.secret);
    expect(second.headers['request-id']).not.toBe(first.headers['request-id']);
    expect(second.headers['idempotency-key']).toBe(idem);
    expect(await endpointCount(t, await accountOf(t, key))).toBe(1);
  });

  test('the SDK retrying with its key gets the same object', async () => {
    const key = newTestKey();
    const stripe = t.stripe(key);
    const params = { url: `${CLOSED_ORIGIN}/sdk`, enabled_events: ['*'] as Stripe.WebhookEndpointCreateParams.EnabledEvent[] };
    const a = await stripe.webhookEndpoints.create(params, { idempotencyKey: 'sdk-key-1' });
    const b = await stripe.webhookEndpoints.create(params, { idempotencyKey: 'sdk-key-1' });
    expect(b.id).toBe(a.id);
    expect(b.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(await endpointCount(t, await accountOf(t, key))).toBe(1);
  });

  test('an update replays too', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const idem = newIdemKey();
    const update = () => t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).set('Idempotency-Key', idem).type('form').send('description=v1');
    const first = await update();
    expect(first.body.description).toBe('v1');
    // Change the object behind the key's back: the replay still answers with the first result.
    await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).type('form').send('description=v2');
    const again = await update();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.description).toBe('v1');
  });
});

describe('mismatches', () => {
  test('the same key with other parameters is an idempotency_error', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    await mustCreate(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    const res = await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/other&enabled_events[]=*`, { 'Idempotency-Key': idem });
    expectError(res, 400, { type: 'idempotency_error', message: mismatchMessage(idem) });
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await endpointCount(t, await accountOf(t, key))).toBe(1);
  });

  test('the same key on another path is an idempotency_error', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    const created = await mustCreate(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    const res = await t.http().post(`${ENDPOINTS}/${created.id}`).set(bearer(key)).set('Idempotency-Key', idem).type('form').send(CREATE_BODY);
    expectError(res, 400, { type: 'idempotency_error', message: mismatchMessage(idem) });
  });

  test('the SDK raises StripeIdempotencyError for a mismatch', async () => {
    const stripe = t.stripe(newTestKey());
    await stripe.webhookEndpoints.create({ url: `${CLOSED_ORIGIN}/a`, enabled_events: ['*'] }, { idempotencyKey: 'sdk-mismatch' });
    const err = await stripe.webhookEndpoints
      .create({ url: `${CLOSED_ORIGIN}/b`, enabled_events: ['*'] }, { idempotencyKey: 'sdk-mismatch' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect((err as Stripe.errors.StripeError).message).toBe(mismatchMessage('sdk-mismatch'));
  });
});

/**
 * Holds the account's row locked, so a create that has claimed its idempotency key waits on it;
 * `release` lets it go on, and `end` releases it in any case.
 */
async function holdAccountRow(account: string): Promise<{ release(): Promise<void>; end(): Promise<void> }> {
  const client = new Client({ connectionString: t.config.databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [account]);
  return {
    release: async () => {
      await client.query('COMMIT');
    },
    end: async () => {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}

/** Waits until the key's record exists (the request has claimed it). */
async function claimed(idem: string): Promise<void> {
  for (let i = 0; i < 200 && (await records(idem)).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
}

/**
 * Runs the block's tests with webhook endpoint creates on the ordinary path (claim, then the
 * operation's transaction), the path of every operation without `oneStatement`.
 */
function onTheOrdinaryPath(): void {
  beforeEach(() => {
    t.kernel.oneStatementWrites = false;
  });
  afterEach(() => {
    t.kernel.oneStatementWrites = true;
  });
}

describe('a request still running', () => {
  onTheOrdinaryPath();
  test('another request with its key gets 409 idempotency_key_in_use; the first one then completes', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const account = await accountOf(t, key);
    const idem = newIdemKey();
    // Hold the account row: the create waits on it after claiming the key.
    const held = await holdAccountRow(account);
    try {
      const firstDone = createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem }).then((r) => r);
      await claimed(idem);
      expect((await records(idem))[0]).toMatchObject({ status: null, responseBody: null });

      const second = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
      expectError(second, 409, { code: 'idempotency_key_in_use' });
      expect(second.body.error.message).toContain(idem);
      expect(second.headers['stripe-should-retry']).toBe('true');

      await held.release();
      const first = await firstDone;
      expect(first.status).toBe(200);
      const third = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
      expect(third.headers['idempotent-replayed']).toBe('true');
      expect(third.body.id).toBe(first.body.id);
      expect(await endpointCount(t, account)).toBe(2);
    } finally {
      await held.end();
    }
  });

  test('a long request keeps its claim alive with heartbeats, so a retry still gets 409 after a minute', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const account = await accountOf(t, key);
    const idem = newIdemKey();
    const kernel = t.kernel as { idempotency: IdempotencyStore };
    const original = kernel.idempotency;
    kernel.idempotency = new IdempotencyStore(t.runtime.prisma, t.runtime.sql, t.config.idempotencyTtlHours, t.runtime.encryption, 50);
    const held = await holdAccountRow(account);
    try {
      const firstDone = createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem }).then((r) => r);
      await claimed(idem);
      // As if the request had been running for two minutes: only its heartbeat says it lives.
      await t.runtime.prisma.$executeRaw`
        UPDATE idempotency_records SET created_at = created_at - interval '2 minutes', heartbeat_at = heartbeat_at - interval '2 minutes' WHERE key = ${idem}`;
      await until(async () => Date.now() - (await records(idem))[0].heartbeatAt!.getTime() < 1000, 5000, 'a heartbeat');
      expectError(await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem }), 409, { code: 'idempotency_key_in_use' });
      await held.release();
      expect((await firstDone).status).toBe(200);
      expect(await endpointCount(t, account)).toBe(2);
    } finally {
      kernel.idempotency = original;
      await held.end();
    }
  });

  test("a claim whose process died (no heartbeat for 8 seconds) is taken over, and the dead claim can't overwrite the result", async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const account = await accountOf(t, key);
    const idem = newIdemKey();
    const store = t.kernel.idempotency;
    const fingerprint = fingerprintOf('post', ENDPOINTS, { url: `${CLOSED_ORIGIN}/hook`, enabled_events: ['*'] });
    const dead = await store.claim(account, idem, fingerprint);
    expect(dead.kind).toBe('claimed');
    await t.runtime.prisma.$executeRaw`
      UPDATE idempotency_records SET created_at = created_at - interval '11 seconds', heartbeat_at = heartbeat_at - interval '11 seconds' WHERE key = ${idem}`;
    const retry = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(retry.status).toBe(200);
    // The dead request, finishing late after all, stores nothing.
    expect(await store.complete({ accountId: account, key: idem, claimId: (dead as { claimId: string }).claimId }, 400, '{"error":{}}')).toBe(false);
    const replay = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(retry.body.id);
  });

  test('20 concurrent requests with one key (and a brand-new API key) create exactly one object', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    const agent = request(`http://127.0.0.1:${t.port}`);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => agent.post(ENDPOINTS).set(bearer(key)).set('Idempotency-Key', idem).type('form').send(CREATE_BODY)),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const r of responses.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('idempotency_key_in_use');

    const account = await accountOf(t, key);
    expect(await endpointCount(t, account)).toBe(1);
    expect(await t.runtime.prisma.apiKey.count({ where: { accountId: account } })).toBe(1);
    expect(await records(idem)).toHaveLength(1);
  });
});

describe('errors are results too', () => {
  test('the endpoint limit error is replayed even after a slot frees up', async () => {
    const key = newTestKey();
    const ids: string[] = [];
    for (let i = 0; i < t.config.maxWebhookEndpoints; i++) ids.push((await mustCreate(t, key)).id);
    const idem = newIdemKey();
    const refused = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expectError(refused, 400, { code: 'webhook_endpoint_limit_reached' });

    expect((await t.http().delete(`${ENDPOINTS}/${ids[0]}`).set(bearer(key))).status).toBe(200);
    const replay = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(replay.status).toBe(400);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(refused.text);
    // A fresh key does get the freed slot.
    expect((await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': newIdemKey() })).status).toBe(200);
  });

  test('a 404 on update is replayed as that 404', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    const send = () => t.http().post(`${ENDPOINTS}/we_missing`).set(bearer(key)).set('Idempotency-Key', idem).type('form').send('description=x');
    const first = await send();
    expectError(first, 404, { code: 'resource_missing' });
    const again = await send();
    expect(again.status).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
  });
});

describe('a failure on the ordinary path', () => {
  onTheOrdinaryPath();

  test('a 500 stores nothing (its transaction rolled back): the key is free, and the retry runs and succeeds once', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const idem = newIdemKey();
    const spy = jest.spyOn(t.runtime.prisma, '$transaction').mockRejectedValueOnce(new Error('database went away'));
    const first = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expectError(first, 500, { type: 'api_error' });
    expect(first.headers['stripe-should-retry']).toBe('true');
    spy.mockRestore();
    expect(await records(idem)).toEqual([]);
    const again = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await endpointCount(t, await accountOf(t, key))).toBe(2);
  });
});

describe('an operation sent as one statement (webhook endpoint create)', () => {
  test('its change, its claim and its answer go to PostgreSQL together, in one statement', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const idem = newIdemKey();
    const statements = jest.spyOn(t.runtime.sql, 'query');
    const transactions = jest.spyOn(t.runtime.prisma, '$transaction');
    try {
      const first = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
      expect(first.status).toBe(200);
      expect(statements).toHaveBeenCalledTimes(1);
      expect(transactions).not.toHaveBeenCalled();
      const [record] = await records(idem);
      expect(record).toMatchObject({ status: 200 });
      expect(record.completedAt).not.toBeNull();
      // The answer carries the signing secret: the stored copy is sealed.
      expect(record.responseBody).not.toContain(first.body.secret);
      const again = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
    } finally {
      statements.mockRestore();
      transactions.mockRestore();
    }
    expect(await endpointCount(t, await accountOf(t, key))).toBe(2);
  });

  test('two requests with one key while the first waits: one creates, the other replays its answer', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const account = await accountOf(t, key);
    const idem = newIdemKey();
    const held = await holdAccountRow(account);
    try {
      const firstDone = createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem }).then((r) => r);
      const secondDone = createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem }).then((r) => r);
      await new Promise((r) => setTimeout(r, 200));
      await held.release();
      const answers = await Promise.all([firstDone, secondDone]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(answers[0].body.id).toBe(answers[1].body.id);
      expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
    } finally {
      await held.end();
    }
    expect(await endpointCount(t, account)).toBe(2);
    expect(await records(idem)).toHaveLength(1);
  });

  test('a statement that fails stores nothing: the key is free, and the retry runs once', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const idem = newIdemKey();
    const spy = jest.spyOn(t.runtime.sql, 'query').mockRejectedValueOnce(new Error('the statement failed'));
    try {
      const first = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
      expectError(first, 500, { type: 'api_error' });
    } finally {
      spy.mockRestore();
    }
    expect(await records(idem)).toEqual([]);
    const again = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await endpointCount(t, await accountOf(t, key))).toBe(2);
  });

  test('without a key it is one statement too, and stores no record', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const statements = jest.spyOn(t.runtime.sql, 'query');
    try {
      expect((await createEndpoint(t, key)).status).toBe(200);
      expect(statements).toHaveBeenCalledTimes(1);
    } finally {
      statements.mockRestore();
    }
    const account = await accountOf(t, key);
    expect(await endpointCount(t, account)).toBe(2);
    expect(await t.runtime.prisma.idempotencyRecord.count({ where: { accountId: account } })).toBe(0);
  });
});

describe('an operation that locks, sent as one statement (connected account update)', () => {
  const createConnected = async (key: string) =>
    (await t.http().post('/v1/accounts').set(bearer(key)).type('form').send('type=custom&country=US&capabilities[transfers][requested]=true')).body.id as string;
  const update = (key: string, id: string, body: string, idem: string) =>
    t.http().post(`/v1/accounts/${id}`).set(bearer(key)).set('Idempotency-Key', idem).type('form').send(body);
  const updatedEvents = (id: string) => t.runtime.prisma.event.count({ where: { accountId: id, type: 'account.updated' } });

  test('it reads under a lock in its own transaction; the change, its event, the claim and the answer go as one statement', async () => {
    const key = newTestKey();
    const id = await createConnected(key);
    const idem = newIdemKey();
    // Every statement of the operation's transaction, as sent.
    const texts: string[] = [];
    const transaction = t.runtime.sql.transactionEndingWith.bind(t.runtime.sql);
    const transactions = jest.spyOn(t.runtime.sql, 'transactionEndingWith').mockImplementation((work) =>
      transaction(async (sql) => {
        const done = await work({ ...sql, query: (statement) => (texts.push(statement.text), sql.query(statement)) });
        if (done.last) texts.push(done.last.text);
        return done;
      }),
    );
    const prismaTransactions = jest.spyOn(t.runtime.prisma, '$transaction');
    try {
      const first = await update(key, id, 'metadata[a]=1', idem);
      expect(first.status).toBe(200);
      expect(transactions).toHaveBeenCalledTimes(1);
      expect(prismaTransactions).not.toHaveBeenCalled();
      // The locked read, then one statement with the update, its event and the completed claim.
      expect(texts).toHaveLength(2);
      expect(texts[0]).toContain('FOR UPDATE');
      for (const part of ['UPDATE accounts', 'INSERT INTO events', 'INSERT INTO idempotency_records']) expect(texts[1]).toContain(part);
    } finally {
      transactions.mockRestore();
      prismaTransactions.mockRestore();
    }
    const [record] = await records(idem);
    expect(record).toMatchObject({ status: 200 });
    expect(record.completedAt).not.toBeNull();
    expect(await updatedEvents(id)).toBe(1);
    const again = await update(key, id, 'metadata[a]=1', idem);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await updatedEvents(id)).toBe(1);
    const mismatch = await update(key, id, 'metadata[a]=2', idem);
    expectError(mismatch, 400, { type: 'idempotency_error' });
    expect(await updatedEvents(id)).toBe(1);
  });

  test('a key held by a running request: the statement does not apply, nothing is written, and the answer is 409', async () => {
    const key = newTestKey();
    const id = await createConnected(key);
    const idem = newIdemKey();
    // The key claimed by a request still running (a fresh heartbeat) with these very parameters.
    await t.runtime.prisma.idempotencyRecord.create({
      data: { accountId: await accountOf(t, key), key: idem, fingerprint: fingerprintOf('post', `/v1/accounts/${id}`, { metadata: { a: '1' } }), claimId: 'held', heartbeatAt: new Date() },
    });
    expectError(await update(key, id, 'metadata[a]=1', idem), 409, { code: 'idempotency_key_in_use' });
    expect(await updatedEvents(id)).toBe(0);
    const other = await update(key, id, 'metadata[b]=1', newIdemKey());
    expect(other.body.metadata).toEqual({ b: '1' });
    expect(await updatedEvents(id)).toBe(1);
  });
});

describe('the result commits with the change', () => {
  test('once the change committed, a retry replays it even if the first answer never left the process', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const account = await accountOf(t, key);
    const idem = newIdemKey();
    // After the commit the operation hands its jobs to Redis; make that hang, as a process that
    // froze (or died) right after its commit would.
    let unblock!: () => void;
    const hang = new Promise<boolean>((resolve) => (unblock = () => resolve(true)));
    const spy = jest.spyOn(t.runtime.queues, 'add').mockReturnValue(hang);
    const first = t.http().post(`/v1/accounts`).set(bearer(key)).set('Idempotency-Key', idem).type('form').send('type=custom&country=US&capabilities[transfers][requested]=true').then((r) => r);
    await until(async () => (await records(idem))[0]?.completedAt != null, 5000, 'the result stored');
    const record = (await records(idem))[0];
    expect(record.status).toBe(200);
    const retry = await t.http().post(`/v1/accounts`).set(bearer(key)).set('Idempotency-Key', idem).type('form').send('type=custom&country=US&capabilities[transfers][requested]=true');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    unblock();
    spy.mockRestore();
    const answered = await first;
    expect(answered.body.id).toBe(retry.body.id);
    expect(await t.runtime.prisma.account.count({ where: { parentAccountId: account } })).toBe(1);
  });

  test('a request whose claim was taken over while it ran rolls back: one of the two runs, never both', async () => {
    t.kernel.oneStatementWrites = false;
    const key = newTestKey();
    await mustCreate(t, key);
    const account = await accountOf(t, key);
    const idem = newIdemKey();
    const kernel = t.kernel as { idempotency: IdempotencyStore };
    const original = kernel.idempotency;
    // A first request that sends no heartbeats, as if its process had stalled.
    kernel.idempotency = new IdempotencyStore(t.runtime.prisma, t.runtime.sql, t.config.idempotencyTtlHours, t.runtime.encryption, 3_600_000);
    const held = await holdAccountRow(account);
    try {
      const firstDone = createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem }).then((r) => r);
      await claimed(idem);
      await t.runtime.prisma.$executeRaw`
        UPDATE idempotency_records SET heartbeat_at = heartbeat_at - interval '11 seconds' WHERE key = ${idem}`;
      const secondDone = createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem }).then((r) => r);
      await until(async () => (await records(idem))[0]?.heartbeatAt!.getTime() > Date.now() - 5000, 5000, 'the takeover');
      await held.release();
      const [first, second] = await Promise.all([firstDone, secondDone]);
      expectError(first, 409, { code: 'idempotency_key_in_use' });
      expect(second.status).toBe(200);
      expect(await endpointCount(t, account)).toBe(2);
      const replay = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
      expect(replay.body.id).toBe(second.body.id);
    } finally {
      t.kernel.oneStatementWrites = true;
      kernel.idempotency = original;
      await held.end();
    }
  });
});

describe('what stores nothing', () => {
  test('requests rejected by auth store nothing', async () => {
    const idem = newIdemKey();
    const live = await t.http().post(ENDPOINTS).set(bearer(`sk_live_${'a'.repeat(24)}`)).set('Idempotency-Key', idem).type('form').send(CREATE_BODY);
    expect(live.status).toBe(401);
    const none = await t.http().post(ENDPOINTS).set('Idempotency-Key', idem).type('form').send(CREATE_BODY);
    expect(none.status).toBe(401);
    expect(await records(idem)).toHaveLength(0);
  });

  test('requests rejected by validation, expand or version checks store nothing, and the key stays usable', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    expect((await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/h`, { 'Idempotency-Key': idem })).status).toBe(400);
    expect((await createEndpoint(t, key, `${CREATE_BODY}&expand[]=nope`, { 'Idempotency-Key': idem })).status).toBe(400);
    expect((await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem, 'Stripe-Version': '1999-01-01' })).status).toBe(400);
    const json = await t.http().post(ENDPOINTS).set(bearer(key)).set('Idempotency-Key', idem).set('Content-Type', 'application/json').send('{"url":"x"}');
    expect(json.status).toBe(400);
    expect(await records(idem)).toHaveLength(0);
    const ok = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(ok.status).toBe(200);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
    expect(await records(idem)).toHaveLength(1);
  });

  test('GET and DELETE ignore keys', async () => {
    const key = newTestKey();
    const created = await mustCreate(t, key);
    const idem = newIdemKey();
    const get = await t.http().get(ENDPOINTS).set(bearer(key)).set('Idempotency-Key', idem);
    expect(get.status).toBe(200);
    const del = await t.http().delete(`${ENDPOINTS}/${created.id}`).set(bearer(key)).set('Idempotency-Key', idem);
    expect(del.status).toBe(200);
    const delAgain = await t.http().delete(`${ENDPOINTS}/${created.id}`).set(bearer(key)).set('Idempotency-Key', idem);
    expect(delAgain.status).toBe(404);
    expect(delAgain.headers['idempotent-replayed']).toBeUndefined();
    expect(await records(idem)).toHaveLength(0);
    // The key is still free for a POST.
    expect((await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem })).status).toBe(200);
  });
});

describe('key rules', () => {
  test('keys longer than 255 characters are a 400; 255 is fine', async () => {
    const key = newTestKey();
    await mustCreate(t, key);
    const long = 'k'.repeat(256);
    const res = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': long });
    expectError(res, 400, { code: 'idempotency_key_too_long', message: 'Idempotency keys can be at most 255 characters long.' });
    expect(await records(long)).toHaveLength(0);
    expect(await endpointCount(t, await accountOf(t, key))).toBe(1);
    const max = `${newIdemKey()}-`.padEnd(255, 'x');
    expect((await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': max })).status).toBe(200);
    expect(await records(max)).toHaveLength(1);
  });

  test('an empty key is no key: nothing is stored and distinct requests both go through', async () => {
    const key = newTestKey();
    const a = await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/a&enabled_events[]=*`, { 'Idempotency-Key': '' });
    const b = await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/b&enabled_events[]=*`, { 'Idempotency-Key': '' });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.id).not.toBe(a.body.id);
    expect(await records('')).toHaveLength(0);
  });

  test('keys are scoped per account', async () => {
    const idem = newIdemKey();
    const a = await createEndpoint(t, newTestKey(), `url=${CLOSED_ORIGIN}/a&enabled_events[]=*`, { 'Idempotency-Key': idem });
    const b = await createEndpoint(t, newTestKey(), `url=${CLOSED_ORIGIN}/b&enabled_events[]=*`, { 'Idempotency-Key': idem });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body.url).toBe(`${CLOSED_ORIGIN}/b`);
    expect(await records(idem)).toHaveLength(2);
  });
});

describe('expiry', () => {
  const age = (key: string, hours: number) =>
    t.runtime.prisma.$executeRaw`UPDATE idempotency_records SET created_at = CURRENT_TIMESTAMP - make_interval(hours => ${hours}) WHERE key = ${key}`;

  test('prune() deletes records past the TTL, keeps fresh ones, and a pruned key can be reused', async () => {
    const key = newTestKey();
    const old = newIdemKey();
    const fresh = newIdemKey();
    await mustCreate(t, key, CREATE_BODY, { 'Idempotency-Key': old });
    await mustCreate(t, key, CREATE_BODY, { 'Idempotency-Key': fresh });
    await age(old, t.config.idempotencyTtlHours + 1);
    await age(fresh, t.config.idempotencyTtlHours - 1);

    expect(await t.kernel.idempotency.prune()).toBeGreaterThanOrEqual(1);
    expect(await records(old)).toHaveLength(0);
    expect(await records(fresh)).toHaveLength(1);

    const reused = await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/new&enabled_events[]=*`, { 'Idempotency-Key': old });
    expect(reused.status).toBe(200);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(reused.body.url).toBe(`${CLOSED_ORIGIN}/new`);
    expect(await endpointCount(t, await accountOf(t, key))).toBe(3);
  });

  test('prune() works in batches until none is left past the TTL', async () => {
    const key = newTestKey();
    const keys = [newIdemKey(), newIdemKey(), newIdemKey(), newIdemKey(), newIdemKey()];
    for (const k of keys) await mustCreate(t, key, CREATE_BODY, { 'Idempotency-Key': k });
    for (const k of keys) await age(k, t.config.idempotencyTtlHours + 2);
    expect(await t.kernel.idempotency.prune(2)).toBeGreaterThanOrEqual(5);
    for (const k of keys) expect(await records(k)).toHaveLength(0);
  });

  test('an expired record that was not pruned yet does not block its key either', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    const first = await mustCreate(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    await age(idem, t.config.idempotencyTtlHours + 1);
    const res = await createEndpoint(t, key, `url=${CLOSED_ORIGIN}/other&enabled_events[]=*`, { 'Idempotency-Key': idem });
    expect(res.status).toBe(200);
    expect(res.body.id).not.toBe(first.id);
  });

  test('a record just inside the TTL still replays', async () => {
    const key = newTestKey();
    const idem = newIdemKey();
    const first = await mustCreate(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    await age(idem, t.config.idempotencyTtlHours - 1);
    const res = await createEndpoint(t, key, CREATE_BODY, { 'Idempotency-Key': idem });
    expect(res.headers['idempotent-replayed']).toBe('true');
    expect(res.body.id).toBe(first.id);
  });
});

test('a stored answer names its object (answers are indented), a list none', () => {
  expect(answeredObjectId(answerJson({ id: 'vs_123', object: 'identity.verification_session' }))).toBe('vs_123');
  expect(answeredObjectId(JSON.stringify({ id: 'cus_1' }))).toBe('cus_1');
  expect(answeredObjectId(answerJson({ object: 'list', data: [{ id: 'cus_1' }] }))).toBeNull();
});
