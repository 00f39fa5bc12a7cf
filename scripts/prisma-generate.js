// `prisma generate` only needs the schema engine's path to exist, not the engine itself, and the
// CLI otherwise tries to download it (install scripts are denied in package.json, and offline
// machines cannot fetch it). Point it at a file that exists unless the caller chose an engine.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const env = { ...process.env };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = '1';
const cli = path.join(__dirname, '..', 'node_modules', 'prisma', 'build', 'index.js');
const result = spawnSync(process.execPath, [cli, 'generate'], { stdio: ['ignore', 'ignore', 'inherit'], env });
process.exit(result.status ?? 1);
