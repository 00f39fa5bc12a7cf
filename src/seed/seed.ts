import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Express } from 'express';
import { Client as PgClient } from 'pg';
import type { ProcessDeps } from '../kernel/route';
import { environment } from '../config';
import { Encryption } from '../lib/encryption';
import { formEncode, LoopbackServer, type LoopbackMethod } from '../lib/loopback';
import { StartupError } from '../runtime';
import { parseFixtures, resolvePath, resolveText, resolveValue, SeedError, type Fixture, type Method } from './fixtures';

// Applies a fixtures file as requests to the app's own pipeline, in-process, so a seeded object
// is made exactly as an API call makes it: validation, idempotency, events and webhooks included.
// The requests go over a loopback port of their own, so the API needn't be listening yet.

export { SeedError };

export interface SeedOptions {
  readonly file: string;
  /** The file's text, when the caller read it already (readFixturesFile). */
  readonly text?: string;
  readonly apiKey: string;
  /** What `${.env:VAR}` reads. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Told of each fixture as it is applied, or found applied by an earlier run. */
  readonly onFixture?: (outcome: FixtureOutcome) => void;
}

export interface FixtureOutcome {
  readonly name: string;
  /** The answer's `id`, when it has one. */
  readonly id: string | null;
  /**
   * created: applied now. existing: applied by an earlier run, so left alone; changed: the same,
   * but the fixture was edited since. fetched: a `get`, which runs every time. expected_error: it
   * failed with its `expected_error_type`.
   */
  readonly outcome: 'created' | 'existing' | 'changed' | 'fetched' | 'expected_error';
}

export interface SeedResult {
  /** The platform account of the key: the seeded objects are its own (or its connected accounts'). */
  readonly accountId: string;
  readonly fixtures: readonly FixtureOutcome[];
}

export type SeedDeps = Pick<ProcessDeps, 'config' | 'prisma' | 'encryption'>;

/** Separates the seed's advisory locks (two-key form: this, and a hash of the account) from others. */
const SEED_LOCK_CLASS = 72707371;
const RETRIES = 4;

/** The fixtures file's text, or a SeedError that says why it can't be read. */
export function readFixturesFile(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new SeedError(`can't read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
}

export async function seedFromFile(app: Express, deps: SeedDeps, options: SeedOptions): Promise<SeedResult> {
  const text = options.text ?? (await readFixturesFile(options.file));
  const fixtures = parseFixtures(text, options.file);
  const api = await LoopbackApi.open(app, options.apiKey);
  try {
    const account = await api.call('get', '/v1/account', {}, {});
    if (account.status !== 200) throw new SeedError(`the API refused the key: ${errorMessage(account)}`);
    const accountId = (account.body as { id: string }).id;
    // Several processes may start with one SEED_FILE: one applies it, the others then find it applied.
    const applied = await withSeedLock(deps.config.databaseUrl, accountId, () => applyFixtures(api, deps, accountId, fixtures, options));
    return { accountId, fixtures: applied };
  } finally {
    await api.close();
  }
}

/**
 * SEED_FILE: the API applies it before it listens, so its clients never see half of it. A seed
 * that fails stops the start, in one line, as a bad setting does.
 */
export async function seedAtStart(app: Express, deps: SeedDeps & Pick<ProcessDeps, 'logger'>): Promise<void> {
  const { seedFile: file, seedApiKey: apiKey } = deps.config;
  try {
    const result = await seedFromFile(app, deps, {
      file,
      apiKey,
      env: environment(),
      onFixture: ({ name, id, outcome }) => deps.logger.info({ fixture: name, id, outcome }, 'seed fixture'),
    });
    const created = result.fixtures.filter((f) => f.outcome === 'created').length;
    deps.logger.info({ file, account: result.accountId, fixtures: result.fixtures.length, created }, 'seeded');
  } catch (err) {
    if (err instanceof SeedError) throw new StartupError(`SEED_FILE ${file}: ${err.message}`);
    throw err;
  }
}

async function applyFixtures(api: LoopbackApi, deps: SeedDeps, accountId: string, fixtures: Fixture[], options: SeedOptions): Promise<FixtureOutcome[]> {
  const names = fixtures.map((f) => f.name);
  // Applied fixtures are recorded rather than left to idempotency keys: those expire
  // (IDEMPOTENCY_TTL_HOURS), and a staging backend restarted a week later must not seed twice.
  const records = new Map((await deps.prisma.seedRun.findMany({ where: { accountId, name: { in: names } } })).map((r) => [r.name, r]));
  const answers = new Map<string, unknown>();
  const scope = { answers, names, env: options.env };
  const outcomes: FixtureOutcome[] = [];
  const report = (outcome: FixtureOutcome) => {
    outcomes.push(outcome);
    options.onFixture?.(outcome);
  };

  for (const fixture of fixtures) {
    const record = fixture.method === 'get' ? undefined : records.get(fixture.name);
    if (record) {
      answers.set(fixture.name, JSON.parse(await deps.encryption.open(record.response)));
      report({ name: fixture.name, id: record.objectId, outcome: record.fingerprint === fixture.fingerprint ? 'existing' : 'changed' });
      continue;
    }
    const path = resolvePath(fixture.path, scope, fixture.name);
    const params = resolveValue(fixture.params, scope, fixture.name) as Record<string, unknown>;
    const headers = Object.fromEntries(Object.entries(fixture.headers).map(([h, v]) => [h, resolveText(v, scope, fixture.name)]));
    if (fixture.idempotencyKey !== undefined) headers['Idempotency-Key'] = resolveText(fixture.idempotencyKey, scope, fixture.name);
    // A crash between the API's commit and the record below would otherwise create it again:
    // with a key derived from the request, the next run's request replays the first one's answer.
    if (fixture.method === 'post' && headers['Idempotency-Key'] === undefined) {
      headers['Idempotency-Key'] = `seed-${createHash('sha256').update(`${fixture.name}\n${path}\n${formEncode(params)}`).digest('hex')}`;
    }

    const answer = await api.call(fixture.method, path, params, headers);
    const id = idOf(answer.body);
    if (answer.status >= 300) {
      const type = (answer.body as { error?: { type?: string } } | undefined)?.error?.type;
      if (fixture.expectedErrorType === undefined || type !== fixture.expectedErrorType) {
        throw new SeedError(`fixture ${fixture.name}: ${fixture.method.toUpperCase()} ${path} answered ${answer.status}: ${errorMessage(answer)}`);
      }
      answers.set(fixture.name, answer.body);
      report({ name: fixture.name, id, outcome: 'expected_error' });
      continue;
    }
    answers.set(fixture.name, answer.body);
    if (fixture.method !== 'get') {
      const sealed = await deps.encryption.seal(JSON.stringify(answer.body));
      await deps.prisma.seedRun.createMany({
        data: [{ accountId, name: fixture.name, fingerprint: fixture.fingerprint, objectId: id, response: sealed, keyId: Encryption.keyIdOf(sealed) }],
        skipDuplicates: true,
      });
    }
    report({ name: fixture.name, id, outcome: fixture.method === 'get' ? 'fetched' : 'created' });
  }
  return outcomes;
}

const idOf = (body: unknown): string | null => {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : null;
};


interface Answer {
  readonly status: number;
  readonly body: unknown;
}

function errorMessage(answer: Answer): string {
  const message = (answer.body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : `status ${answer.status}`;
}

/** The app on a loopback port of its own (src/lib/loopback.ts), called with the seed's key. */
class LoopbackApi {
  private constructor(
    private readonly loopback: LoopbackServer,
    private readonly apiKey: string,
  ) {}

  static async open(app: Express, apiKey: string): Promise<LoopbackApi> {
    return new LoopbackApi(await LoopbackServer.open(app), apiKey);
  }

  /** One request, retried as the SDKs retry (Stripe-Should-Retry, rate limits); its key makes a retried POST safe. */
  async call(method: Method, path: string, params: Record<string, unknown>, headers: Record<string, string>): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const res = await this.loopback.request(method.toUpperCase() as LoopbackMethod, path, params, {
        authorization: `Bearer ${this.apiKey}`,
        'user-agent': 'Sandbank-Seed',
        ...headers,
      });
      const retry = res.headers['stripe-should-retry'] === 'true' || res.status === 429;
      if (retry && attempt < RETRIES) {
        await sleep(500 * 2 ** attempt);
        continue;
      }
      let body: unknown;
      try {
        body = JSON.parse(res.text);
      } catch {
        throw new SeedError(`${method.toUpperCase()} ${path} answered ${res.status} with a body that is not JSON`);
      }
      return { status: res.status, body };
    }
  }

  close(): Promise<void> {
    return this.loopback.close();
  }
}

/** Runs `work` holding the account's seed lock (a session advisory lock on a connection of its own). */
async function withSeedLock<T>(databaseUrl: string, accountId: string, work: () => Promise<T>): Promise<T> {
  const client = new PgClient({ connectionString: databaseUrl });
  client.on('error', () => undefined); // a dropped connection frees the lock; the work's own queries report the outage
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [SEED_LOCK_CLASS, accountId]);
    return await work();
  } finally {
    await client.end().catch(() => undefined); // ending the session releases the lock
  }
}
