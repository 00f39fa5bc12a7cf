import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/seed';
import { bearer, freePort, newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { deleteQueueKeys } from '../helpers/isolation';

// `npm run seed -- <file> [--api-key …]`: one line per fixture on stdout, one line on stderr when
// it fails (no stack), and the exit code says which.

const ROOT = path.join(__dirname, '..', '..');
/** The seeds' events go to queues of their own in the shared Redis, deleted at the end. */
const QUEUE_PREFIX = 'testseedcli';
let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(tmpdir(), 'sandbank-seed-cli-'));
});
afterAll(async () => {
  await t.close();
  await deleteQueueKeys(t.config.redisUrl, QUEUE_PREFIX);
  rmSync(dir, { recursive: true, force: true });
});

const FIXTURES = [
  { name: 'cus_alice', path: '/v1/customers', method: 'post', params: { email: 'alice@example.test' } },
  { name: 'prod_basic', path: '/v1/products', method: 'post', params: { name: 'Basic' } },
  { name: 'price_basic', path: '/v1/prices', method: 'post', params: { product: '${prod_basic:id}', currency: 'usd', unit_amount: 900 } },
];

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Runs main() in this process, capturing what it prints. */
async function run(argv: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; out: string[]; err: string[] }> {
  const env = { QUEUE_PREFIX, ...extraEnv };
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
  const error = jest.spyOn(console, 'error').mockImplementation((line: string) => void err.push(line));
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return { code: await main(argv), out, err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    log.mockRestore();
    error.mockRestore();
  }
}

test('prints each fixture with its id, then again marked as seeded before; the objects are the key\'s', async () => {
  const key = newTestKey();
  const file = write('shop.json', JSON.stringify({ _meta: { template_version: 0 }, fixtures: FIXTURES }));
  const first = await run([file, '--api-key', key]);
  expect(first.code).toBe(0);
  expect(first.out).toHaveLength(3);
  const [alice, prod, price] = first.out.map((line) => line.split('\t'));
  expect(alice).toEqual(['cus_alice', expect.stringMatching(/^cus_/)]);
  expect(prod).toEqual(['prod_basic', expect.stringMatching(/^prod_/)]);
  expect(price).toEqual(['price_basic', expect.stringMatching(/^price_/)]);
  expect(first.err).toEqual([expect.stringMatching(new RegExp(`^seeded ${file} into acct_\\w+: 3 created, 0 seeded before$`))]);

  const res = await t.http().get(`/v1/prices/${price[1]}`).set(bearer(key));
  expect(res.body).toMatchObject({ product: prod[1], unit_amount: 900 });

  const again = await run([`--api-key=${key}`, file]);
  expect(again.code).toBe(0);
  expect(again.out).toEqual(first.out.map((line) => `${line}\t(seeded before)`));
  expect(again.err[0]).toMatch(/: 0 created, 3 seeded before$/);
});

test('YAML, with the key from SEED_API_KEY', async () => {
  const key = newTestKey();
  const file = write('one.yaml', 'fixtures:\n  - name: cus_yaml\n    path: /v1/customers\n    method: post\n    params:\n      name: ${.env:SEED_TEST_NAME|Yamlie}\n');
  const { code, out } = await run([file], { SEED_API_KEY: key });
  expect(code).toBe(0);
  const id = out[0].split('\t')[1];
  expect((await t.http().get(`/v1/customers/${id}`).set(bearer(key))).body.name).toBe('Yamlie');
});

test('usage and a missing key are refused before anything runs', async () => {
  expect((await run([])).code).toBe(2);
  expect((await run(['a.json', 'b.json'])).err).toEqual([expect.stringMatching(/^usage: npm run seed -- /)]);
  expect((await run(['a.json', '--bogus'])).code).toBe(2);
  const noKey = await run([write('k.json', '{"fixtures": []}')], { SEED_API_KEY: '' });
  expect(noKey).toMatchObject({ code: 2, out: [] });
  expect(noKey.err).toEqual(["no API key: pass --api-key sk_test_… or set SEED_API_KEY (the seeded objects belong to that key's account)"]);
});

test('a failing fixture: the lines before it, then one line with the API\'s message and no stack, and exit 1', () => {
  const file = write(
    'broken.yaml',
    [
      'fixtures:',
      '  - name: cus_ok',
      '    path: /v1/customers',
      '    method: post',
      '  - name: pm_broken',
      '    path: /v1/payment_methods/pm_card_visa/attach',
      '    method: post',
      '    params: { customer: cus_doesnotexist }',
    ].join('\n'),
  );
  const res = spawnSync(process.execPath, ['-r', path.join(ROOT, 'scripts', 'swc-register.js'), 'src/cli/seed.ts', file, '--api-key', newTestKey()], {
    cwd: ROOT,
    env: { ...process.env, QUEUE_PREFIX },
    encoding: 'utf8',
  });
  expect(res.stdout).toMatch(/^cus_ok\tcus_\w+\n$/);
  expect(res.stderr).toBe("seed failed: fixture pm_broken: POST /v1/payment_methods/pm_card_visa/attach answered 400: No such customer: 'cus_doesnotexist'\n");
  expect(res.status).toBe(1);
}, 60_000);

test('a missing file is its one line and exit 1, even with Redis away: nothing connects first', async () => {
  const port = await freePort();
  const res = spawnSync(process.execPath, ['-r', path.join(ROOT, 'scripts', 'swc-register.js'), 'src/cli/seed.ts', path.join(dir, 'missing.json'), '--api-key', newTestKey()], {
    cwd: ROOT,
    env: { ...process.env, QUEUE_PREFIX, REDIS_URL: `redis://127.0.0.1:${port}` },
    encoding: 'utf8',
  });
  expect(res.stderr).toBe(`seed failed: can't read ${path.join(dir, 'missing.json')}: no such file\n`);
  expect(res.stdout).toBe('');
  expect(res.status).toBe(1);
}, 60_000);
