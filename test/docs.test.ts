import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { parse as parseYaml } from 'yaml';
import { newTestKey, startTestApp, type TestApp } from './helpers/app';
import { pathFixtures } from './helpers/fixtures';
import { browserTest, launchBrowser } from './helpers/browser';

// Every snippet the README and docs/ show, run against a started Sandbank so they stay true:
// curl lines through curl, stripe-node scripts through node, stripe-python through Debian's
// python3-stripe, HTML's inline scripts parsed as the classic scripts a browser runs (a top-level
// `await` there is a SyntaxError), their script URLs fetched, and each HTML block run in Debian's
// chromium (no page error, no failed request, its functions defined), JSON and YAML parsed. The port
// is the test app's; each `sk_test_123` a fresh key; an id shown as `we_…` the id of a real
// object of that key (made here, or answered by an earlier snippet). Commands that start a
// service (`npm start`, `docker compose up`, `npm test`, the fault suite) are not run here: their
// own tests run them (test/runtime.test.ts, test/faults/).

const ROOT = path.join(__dirname, '..');
const PYTHON = '/usr/bin/python3';
const hasPythonStripe = spawnSync(PYTHON, ['-c', 'import stripe'], { encoding: 'utf8' }).status === 0;

interface Snippet {
  readonly file: string;
  readonly lang: string;
  readonly body: string;
}

function snippetsOf(file: string): Snippet[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/^[ \t]*```(\w+)\n([\s\S]*?)^[ \t]*```/gm)].map((m) => ({ file, lang: m[1], body: m[2] }));
}

const files = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const snippets = files.flatMap(snippetsOf);

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(tmpdir(), 'sandbank-docs-'));
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `…` placeholders the docs use, and the path fixture that makes a real object of that kind. */
const PLACEHOLDER_FIXTURES: Record<string, string> = {
  we: 'webhook_endpoint',
  evt: 'id',
  vs: 'session',
  fcsess: 'fc_session',
  payatt: 'payment_authentication',
};

/** The snippet's text as run: this app's port, a fresh key, real ids in place of `prefix_…`. */
async function localized(body: string, key: string, ids: Map<string, string>): Promise<string> {
  let out = body
    .replaceAll('localhost:12111', `127.0.0.1:${t.port}`)
    .replace(/host: 'localhost', port: 12111/g, `host: '127.0.0.1', port: ${t.port}`).replace(/\bsk_test_123\b/g, key).replace(/\bpk_test_123\b/g, key.replace('sk_', 'pk_'));
  for (const [, prefix] of out.matchAll(/\b([a-z]+)_…/g)) {
    if (!ids.has(prefix)) {
      const fixture = PLACEHOLDER_FIXTURES[prefix];
      if (!fixture || !pathFixtures[fixture]) throw new Error(`no object to stand for ${prefix}_… (add it to PLACEHOLDER_FIXTURES)`);
      if (prefix === 'evt') {
        // Any event of the key's: the webhook endpoint made for `we_…` wrote none, so make a customer.
        await t.http().post('/v1/customers').set({ Authorization: `Bearer ${key}` }).type('form').send('name=docs');
        const events = await t.http().get('/v1/events?limit=1').set({ Authorization: `Bearer ${key}` });
        ids.set(prefix, events.body.data[0].id);
      } else ids.set(prefix, await pathFixtures[fixture](t, key, {}));
    }
    out = out.replaceAll(`${prefix}_…`, ids.get(prefix)!);
  }
  return out;
}

/** Shell lines that call the API: `curl …`, continuation lines joined, comments dropped. */
function curlCommands(body: string): string[] {
  return body
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '));
}

const run = promisify(execFile);

test('the docs show snippets of every kind this test runs', () => {
  const langs = new Set(snippets.map((s) => s.lang));
  for (const lang of ['sh', 'js', 'python', 'html']) expect(langs).toContain(lang);
  expect(snippets.filter((s) => s.lang === 'sh').flatMap((s) => curlCommands(s.body)).length).toBeGreaterThan(10);
});

test('every curl line answers a 2xx', async () => {
  const failures: string[] = [];
  for (const snippet of snippets.filter((s) => s.lang === 'sh')) {
    // Each snippet on a key of its own: its ids (`we_…`) are the ones it made or its fixtures.
    const key = newTestKey();
    const ids = new Map<string, string>();
    for (const command of curlCommands(snippet.body)) {
      const line = await localized(command, key, ids);
      const { stdout } = await run('sh', ['-c', `${line} -s -w '\\n%{http_code}'`], { cwd: dir });
      const status = Number(stdout.slice(stdout.lastIndexOf('\n') + 1));
      const body = stdout.slice(0, stdout.lastIndexOf('\n'));
      // What a snippet made stands for the `…` of the lines after it.
      const made = /^\{\s*"id":\s*"([a-z]+)_[^"]+"/.exec(body);
      if (made) ids.set(made[1], JSON.parse(body).id);
      if (status < 200 || status >= 300) failures.push(`${snippet.file}: ${command}\n  → ${status} ${body.slice(0, 300)}`);
    }
  }
  expect(failures).toEqual([]);
}, 120_000);

test('every stripe-node snippet runs as a script and exits 0', async () => {
  const js = snippets.filter((s) => s.lang === 'js');
  expect(js.length).toBeGreaterThan(0);
  for (const [i, snippet] of js.entries()) {
    const file = path.join(ROOT, 'node_modules', '.cache', `docs-snippet-${process.pid}-${i}.js`);
    writeFileSync(file, await localized(snippet.body, newTestKey(), new Map()));
    try {
      const res = await run(process.execPath, [file], { cwd: ROOT, env: { ...process.env } }).catch((err: { stderr?: string; code?: number }) => ({ stdout: '', stderr: err.stderr ?? String(err), code: err.code }));
      expect({ file: snippet.file, stderr: res.stderr }).toEqual({ file: snippet.file, stderr: '' });
    } finally {
      rmSync(file, { force: true });
    }
  }
}, 60_000);

(hasPythonStripe ? test : test.skip)('every stripe-python snippet runs and exits 0', async () => {
  for (const snippet of snippets.filter((s) => s.lang === 'python')) {
    const code = await localized(snippet.body, newTestKey(), new Map());
    // Not spawnSync: the app answering it runs in this process.
    const res = await run(PYTHON, ['-c', code], { timeout: 30_000 }).catch((err: { stderr?: string }) => ({ stdout: '', stderr: err.stderr ?? String(err) }));
    expect({ file: snippet.file, stderr: res.stderr }).toEqual({ file: snippet.file, stderr: '' });
  }
}, 60_000);

test('every HTML snippet: its inline scripts parse as classic scripts, and its script URLs answer 200', async () => {
  const html = snippets.filter((s) => s.lang === 'html');
  expect(html.length).toBeGreaterThan(0);
  for (const snippet of html) {
    // The commented-out Stripe.js tag is what the snippet replaces, not part of it.
    const text = (await localized(snippet.body, newTestKey(), new Map())).replace(/<!--[\s\S]*?-->/g, '');
    for (const [, src] of text.matchAll(/<script src="([^"]+)"><\/script>/g)) {
      // Only Sandbank's own scripts are fetched (the commented-out Stripe.js line is not a tag).
      expect(src.startsWith(`http://127.0.0.1:${t.port}/`)).toBe(true);
      expect({ src, status: (await fetch(src)).status }).toEqual({ src, status: 200 });
    }
    const inline = [...text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    expect(inline.length).toBeGreaterThan(0);
    // A classic script: `await` outside a function is a SyntaxError when pasted.
    for (const code of inline) expect(() => new vm.Script(code, { filename: snippet.file })).not.toThrow();
  }
});

browserTest()('every HTML snippet runs in chromium: no page error, no failed request, its scripts define what it calls', async () => {
  const html = snippets.filter((s) => s.lang === 'html');
  const browser = await launchBrowser();
  try {
    for (const snippet of html) {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
      page.on('response', (res) => void (res.status() >= 400 && problems.push(`${res.status()}: ${res.url()}`)));
      // A page of the app's origin, as a developer's page on localhost would be.
      await page.goto(`http://127.0.0.1:${t.port}/hosted/`).catch(() => undefined);
      problems.length = 0;
      await page.setContent(await localized(snippet.body, newTestKey(), new Map()), { waitUntil: 'load' });
      // The functions a snippet declares are there to be called (a SyntaxError would leave none).
      const declared = [...snippet.body.matchAll(/(?:async )?function (\w+)\(/g)].map((m) => m[1]);
      expect(declared.length).toBeGreaterThan(0);
      const types = await page.evaluate((names) => names.map((n) => typeof (globalThis as Record<string, unknown>)[n]), declared);
      expect({ file: snippet.file, problems, types }).toEqual({ file: snippet.file, problems: [], types: declared.map(() => 'function') });
      await page.close();
    }
  } finally {
    await browser.close();
  }
}, 60_000);

test('every JSON and YAML snippet parses', () => {
  for (const snippet of snippets.filter((s) => s.lang === 'json')) expect(() => JSON.parse(snippet.body)).not.toThrow();
  for (const snippet of snippets.filter((s) => s.lang === 'yaml')) expect(() => parseYaml(snippet.body)).not.toThrow();
});
