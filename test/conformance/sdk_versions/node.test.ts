import { bearer, newTestKey } from '../../helpers/app';
import { startEventsTestApp, type EventsTestApp } from '../../helpers/eventsApp';
import { releaseSdkTypes, sdkVersionProblems, type SdkPackage } from '../../helpers/sdkTypes';
import { routes } from '../../../src/resources';
import { callsFor, customer, OPERATIONS, subscription } from './calls';
import { client, MAJORS, type Client, type Major } from './majors';

// The proof with the real clients: each stripe-node major an integration may pin, constructed
// as its users construct it, makes every operation's call and gets, parsed by that major, what
// its own types declare (the answer, every nested, listed and expanded object in it); fails into
// its own error classes; and receives webhooks its `constructEvent` verifies, rendered at its
// version, with every member its types declare. The first request of each key pins the key's
// account to the major's version, as it does for a real integration.

let app: EventsTestApp;
beforeAll(async () => {
  app = await startEventsTestApp('sdk_versions');
  // As src/server.ts: idle connections outlive the SDKs' (keep-alive agents reuse them), else a
  // request on a connection the server is closing fails as a connection error.
  app.t.server.keepAliveTimeout = 65_000;
}, 60_000);
afterAll(() => app.close());

/**
 * How many calls run at once: the app is CPU-bound in this process, so more buys nothing, and its
 * pool of 5 connections (shared with the workers and the fixtures' own transactions) must not run dry.
 */
const CONCURRENCY = 4;

async function pool<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await run(item);
  }));
}

/** The body as served: JSON without what the SDK adds (`lastResponse`, auto-paging methods). */
const served = (result: unknown): any => JSON.parse(JSON.stringify(result));

/** Problems against the major's types (sdkVersionProblems: newer objects and the types' errata aside). */
const problemsOf = sdkVersionProblems;

function describeError(err: any): string {
  const raw = err?.raw ?? {};
  return `${err?.type ?? err?.name ?? 'Error'} ${err?.statusCode ?? ''} ${raw.code ?? ''} ${raw.param ?? ''}: ${err?.message ?? String(err)}`.replace(/\s+/g, ' ');
}

/** A fresh key of this major, its account pinned by a first request as an integration's is. */
async function newClient(major: Major): Promise<Client> {
  const c = client(app.t, major, newTestKey());
  await c.stripe.webhookEndpoints.list({ limit: 1 });
  return c;
}

const returns = new Map(routes.map((r) => [r.operationId, r.returns]));

test('every operation has a call', () => {
  expect([...OPERATIONS].sort()).toEqual(routes.map((r) => r.operationId).sort());
});

/** A failing call per error class, and the status it comes with. */
const FAILURES: readonly (readonly [string, string, number, (c: Client) => Promise<unknown>])[] = [
  ['an unknown object (404)', 'StripeInvalidRequestError', 404, (c) => c.stripe.customers.retrieve('cus_nope')],
  ['an invalid parameter (400)', 'StripeInvalidRequestError', 400, (c) => c.stripe.customers.list({ limit: 0 })],
  ['a declined card (402)', 'StripeCardError', 402, async (c) => c.stripe.paymentMethods.attach('pm_card_chargeDeclined', { customer: await customer(c) })],
  ['an account that is not connected (403)', 'StripePermissionError', 403, (c) => c.stripe.customers.list({ limit: 1 }, { stripeAccount: 'acct_0000000000000000' })],
];

describe.each(MAJORS.map((m) => [m.pkg, m.version, m] as const))('%s (%s)', (pkg, version, major) => {
  const outcomes = new Map<string, { result?: unknown; error?: unknown }>();
  beforeAll(async () => {
    const calls = callsFor(pkg);
    // One integration's key for every call, but for the one that deletes the account's data.
    const c = await newClient(major);
    await pool(OPERATIONS, async (operationId) => {
      try {
        outcomes.set(operationId, { result: await calls[operationId](operationId === 'DeleteSandboxData' ? await newClient(major) : c) });
      } catch (error) {
        outcomes.set(operationId, { error });
      }
    });
  }, 120_000);
  // One major's types in memory at a time: seven would make every collection of the heap slow.
  afterAll(() => releaseSdkTypes(pkg));

  test.each(OPERATIONS.map((o) => [o]))(`%s: ${pkg} parses the answer, and it has every member ${pkg}'s types declare`, (operationId) => {
    const outcome = outcomes.get(operationId)!;
    if (outcome.error) throw new Error(`the call failed: ${describeError(outcome.error)}`);
    const body = served(outcome.result);
    const declared = returns.get(operationId)!;
    if (declared.list || declared.search) {
      expect(body.object).toBe(declared.search ? 'search_result' : 'list');
      for (const item of body.data) expect(item.object).toBe(declared.object);
    } else {
      expect(body.object).toBe(declared.object);
    }
    expect(problemsOf(body, pkg)).toEqual([]);
  });

  test.each(FAILURES.map((f) => [f[0], f[1], f[2], f[3]] as const))(`%s: ${pkg} raises its own %s`, async (_label, errorClass, status, call) => {
    const c = await newClient(major);
    const err: any = await call(c).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof c.S.errors[errorClass])) throw new Error(`expected a ${errorClass}, got ${err ? describeError(err) : 'a success'}`);
    expect(err.type).toBe(errorClass);
    expect(err.statusCode).toBe(status);
    expect(err.requestId).toMatch(/^req_/);
    expect(err.message.length).toBeGreaterThan(0);
    if (errorClass === 'StripeCardError') expect([err.code, err.decline_code]).toEqual(['card_declined', 'generic_decline']);
  });

  describe('webhooks', () => {
    let c: Client;
    let secrets: Record<'account' | 'connect', string>;
    /** Every event of the account and its connected account, as delivered, by path. */
    let delivered: { path: string; body: string; signature: string; secret: string }[] = [];
    let missing: string[] = [];

    beforeAll(async () => {
      c = await newClient(major);
      const path = (kind: string) => `/${pkg}/${kind}`;
      const endpoints = await Promise.all(
        (['account', 'connect'] as const).map((kind) =>
          c.stripe.webhookEndpoints.create({ url: app.receiver.url(path(kind)), enabled_events: ['*'], api_version: version, ...(kind === 'connect' ? { connect: true } : {}) }),
        ),
      );
      secrets = { account: endpoints[0].secret, connect: endpoints[1].secret };
      // What integrations see most: a connected account updated and a person added, a customer,
      // a subscription (its customer, card, product, price, invoice and their events), an
      // identity session created and canceled.
      const account = (await c.stripe.accounts.create({ business_type: 'individual' })).id;
      await c.stripe.accounts.update(account, { metadata: { a: '1' } });
      await c.stripe.accounts.createPerson(account, { first_name: 'Jane', relationship: { owner: true } });
      await subscription(c);
      const session = await c.stripe.identity.verificationSessions.create({ type: 'document' });
      await c.stripe.identity.verificationSessions.cancel(session.id);

      const eventIds = async (headers: Record<string, string>) =>
        ((await app.t.http().get('/v1/events?limit=100').set(bearer(c.key)).set(headers)).body.data as { id: string }[]).map((e) => e.id);
      const expected = [
        ...(await eventIds({})).map((id) => ({ id, kind: 'account' as const })),
        ...(await eventIds({ 'Stripe-Account': account })).map((id) => ({ id, kind: 'connect' as const })),
      ];
      const isDelivered = (e: { id: string; kind: string }) => app.receiver.on(path(e.kind)).some((r) => JSON.parse(r.body).id === e.id);
      for (let tries = 0; tries < 300 && !expected.every(isDelivered); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
      missing = expected.filter((e) => !isDelivered(e)).map((e) => `${e.kind}: ${e.id}`);
      delivered = (['account', 'connect'] as const).flatMap((kind) =>
        app.receiver.on(path(kind)).map((r) => ({ path: r.path, body: r.body, signature: String(r.headers['stripe-signature']), secret: secrets[kind] })),
      );
    }, 60_000);

    test(`every event reaches ${pkg}'s endpoints, signed so that its constructEvent verifies it, at ${version}`, () => {
      expect(missing).toEqual([]);
      expect(delivered.length).toBeGreaterThan(0);
      const unverified = delivered.flatMap((d) => {
        try {
          const event = c.stripe.webhooks.constructEvent(d.body, d.signature, d.secret);
          return event.api_version === version ? [] : [`${event.type} ${event.id}: api_version ${event.api_version}`];
        } catch (err) {
          return [`${d.path}: ${(err as Error).message}`];
        }
      });
      expect(unverified).toEqual([]);
    });

    test(`every delivered payload has every member ${pkg}'s types declare`, () => {
      const problems = delivered.flatMap((d) => {
        const event = JSON.parse(d.body);
        return problemsOf(event, pkg).map((p) => `${event.type}: ${p}`);
      });
      expect([...new Set(problems)]).toEqual([]);
    });
  });
});
