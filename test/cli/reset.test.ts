import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { privateDatabase, type PrivateDatabase } from '../helpers/isolation';

// `npm run reset -- --yes` wipes the local database (recreated from the migrations); without
// --yes, or in production, it touches nothing.

const ROOT = path.join(__dirname, '..', '..');
let db: PrivateDatabase;
beforeAll(async () => {
  db = await privateDatabase('reset');
});
afterAll(() => db.drop());

const reset = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['-r', path.join(ROOT, 'scripts', 'swc-register.js'), 'src/cli/reset.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: db.url, QUEUE_PREFIX: 'testreset', ...env },
    encoding: 'utf8',
  });

async function accounts(): Promise<number> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) AS n FROM accounts')).rows[0].n);
  } finally {
    await client.end();
  }
}

test('without --yes, or with NODE_ENV=production, nothing is deleted; with --yes everything is', async () => {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  await client.query("INSERT INTO accounts (id, created, default_api_version) VALUES ('acct_resettest', 1, '2026-08-26.dahlia')");
  await client.end();

  const asked = reset([]);
  expect(asked.status).toBe(2);
  expect(asked.stderr).toContain('npm run reset -- --yes');
  expect(await accounts()).toBe(1);

  const production = reset(['--yes'], { NODE_ENV: 'production' });
  expect(production.status).toBe(1);
  expect(production.stderr).toContain('NODE_ENV is production');
  expect(await accounts()).toBe(1);

  const done = reset(['--yes']);
  expect(done.stderr).toMatch(/^reset postgresql:\/\/.*recreated from the migrations/);
  expect(done.status).toBe(0);
  expect(await accounts()).toBe(0);
}, 60_000);
