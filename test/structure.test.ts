import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { areas } from '../src/resources';

// The house's import rules (.dependency-cruiser.cjs), checked by `npm run lint:structure`, which
// `npm test` runs first. A copy of the tree with rules broken on purpose must fail the checker,
// and its report must name each file and the import.

const root = path.join(__dirname, '..');
const run = promisify(execFile);
const config = require(path.join(root, '.dependency-cruiser.cjs'));

async function cruise(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(path.join(root, 'node_modules', '.bin', 'depcruise'), ['src', 'workers', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (err: any) {
    return { code: typeof err.code === 'number' ? err.code : -1, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

/** A copy of what the checker reads (Prisma's generated client left out: the checker doesn't follow it). */
function copyTree(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbank-structure-'));
  cpSync(path.join(root, 'src'), path.join(dir, 'src'), { recursive: true, filter: (from) => !from.startsWith(path.join(root, 'src', 'generated')) });
  cpSync(path.join(root, 'workers'), path.join(dir, 'workers'), { recursive: true });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) cpSync(path.join(root, file), path.join(dir, file));
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** The report's findings, one line each: rule, file and import (a circle's whole path). */
function findings(output: string): string[] {
  const found: string[] = [];
  let current: string | undefined;
  for (const line of output.split('\n')) {
    const text = line.trim();
    if (text.startsWith('error ')) found.push((current = text));
    else if (current !== undefined && text !== '' && /^\s/.test(line) && !text.startsWith('x ')) found[found.length - 1] = current = `${current} ${text}`;
    else current = undefined;
  }
  return found;
}

let asItIs: { code: number; output: string };
beforeAll(async () => {
  asItIs = await cruise(root);
}, 120_000);

test('the tree as it is keeps every rule', () => {
  expect(findings(asItIs.output)).toEqual([]);
  expect(asItIs.output).toContain('no dependency violations found');
  expect(asItIs.code).toBe(0);
});

test('a planted circle, a kernel file importing an area, and an area reaching inside another fail the checker, each named with its import', async () => {
  const dir = copyTree();
  try {
    // A circle through a type-only import: `import type` counts.
    writeFileSync(path.join(dir, 'src/lib/plantedA.ts'), "import { b } from './plantedB';\nexport const a = (): number => b;\n");
    writeFileSync(path.join(dir, 'src/lib/plantedB.ts'), "import type { a } from './plantedA';\nexport const b = 1;\nexport type A = typeof a;\n");
    writeFileSync(path.join(dir, 'src/kernel/planted.ts'), "import { area } from '../resources/payments';\nexport const planted = area.name;\n");
    // Billing may use what payments' index exports, not a payments service itself.
    writeFileSync(path.join(dir, 'src/resources/billing/planted.ts'), "export { takeCvc } from '../payments/payment_methods/service';\n");
    const { code, output } = await cruise(dir);
    expect(code).not.toBe(0);
    const found = findings(output);
    expect(found).toContainEqual(expect.stringMatching(/^error no-circular: src\/lib\/planted([AB])\.ts → src\/lib\/planted(?!\1)[AB]\.ts → src\/lib\/planted\1\.ts$/));
    expect(found).toContainEqual('error lower-layers-import-no-area: src/kernel/planted.ts → src/resources/payments/index.ts');
    expect(found).toContainEqual('error areas-through-index: src/resources/billing/planted.ts → src/resources/payments/payment_methods/service.ts');
    // Nothing else: what was planted, besides what the tree as it is reports.
    expect(found.filter((f) => !/planted/.test(f))).toEqual(findings(asItIs.output));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

test("the checker's list of areas is the registry's and the folders under src/resources/", () => {
  const folders = readdirSync(path.join(root, 'src', 'resources'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  expect(areas.map((a) => a.name).sort()).toEqual(folders);
  const rule = config.forbidden.find((r: { name: string }) => r.name === 'areas-through-index');
  for (const name of folders) expect(new RegExp(rule.from.path).test(`src/resources/${name}/index.ts`)).toBe(true);
});
