// `npm run build`: generates the Prisma client, compiles the TypeScript into dist/, then stamps
// dist/.build-stamp. With --if-stale (what `npm start` and the other run scripts use) it builds
// only when a source is newer than the stamp, so a restart doesn't spend half a minute in tsc.
// Where there are no sources (the Docker image ships dist/ only) there is nothing to build.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');
// What the compiled output depends on; src/generated is rebuilt from prisma/schema.prisma.
const inputs = ['src', 'workers', 'prisma/schema.prisma', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function newestMtime(file) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of fs.readdirSync(file)) {
    if (file === path.join(root, 'src') && entry === 'generated') continue;
    newest = Math.max(newest, newestMtime(path.join(file, entry)));
  }
  return newest;
}

function stale() {
  let built;
  try {
    built = fs.statSync(stamp).mtimeMs;
  } catch {
    return true;
  }
  if (!fs.existsSync(path.join(root, 'src', 'generated'))) return true;
  return inputs.some((input) => newestMtime(path.join(root, input)) > built);
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function build() {
  run([path.join(__dirname, 'prisma-generate.js')]);
  run([require.resolve('typescript/bin/tsc', { paths: [root] }), '-p', 'tsconfig.build.json']);
  // Parse openapi/ once now, so a start reads the cached JSON instead (src/kernel/openapi.ts).
  // Only a head start: without it the first start parses (and caches) the YAML itself.
  const cached = spawnSync(process.execPath, ['-e', "require('./dist/src/kernel/openapi').loadOpenApiDocument()"], { cwd: root, stdio: 'inherit' });
  if (cached.status !== 0) console.error('sandbank: could not cache openapi/ (see above); each start parses it');
  fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
}

if (process.argv.includes('--if-stale')) {
  if (!fs.existsSync(path.join(root, 'src'))) process.exit(0);
  if (stale()) {
    console.error('sandbank: no build yet, or sources changed since the last one: building dist/');
    build();
  }
} else {
  build();
}
