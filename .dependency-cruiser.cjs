// The house's import rules, checked by dependency-cruiser (`npm run lint:structure`, run first by
// `npm test`, so CI runs it). A broken rule prints its name, the importing file and the import.
//
// Layers, lowest first: config, lib, db → kernel → events, hosted → the areas (src/resources/<area>/)
// and their registry (src/resources/index.ts) → the console (src/console/, which names no area: it
// reads the route table it is given and calls the API) → the processes (app, runtime, server, cluster, main,
// cli, seed, workers/). Each layer imports only layers below it; areas reach each other only
// through an area's index (or the object registry, at run time through the kernel).

/** The areas of the public API, one folder each under src/resources/ (test/structure.test.ts keeps this list true). */
const AREAS = ['connect', 'payments', 'billing', 'webhooks', 'identity', 'financial_connections', 'forwarding', 'apps', 'sandbox'];
const AREA = `^src/resources/(${AREAS.join('|')})/`;
const PROCESSES = '^src/(app|runtime|server|cluster|main)\\.ts$|^src/(cli|seed)/|^workers/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No circle of imports (import type included): a circle means two files must be loaded and understood together.',
      from: { path: '^(src|workers)/' },
      to: { circular: true },
    },
    {
      name: 'lower-layers-import-no-area',
      severity: 'error',
      comment: 'kernel, lib, events, hosted, db and config import no area, no registry and no process: what they need from areas comes in through the registry or the dependencies (deps).',
      from: { path: '^src/(kernel|lib|events|hosted|db)/|^src/config\\.ts$' },
      to: { path: `^src/resources/|${PROCESSES}` },
    },
    {
      name: 'kernel-below-events-and-hosted',
      severity: 'error',
      comment: 'The kernel (and config, lib, db below it) import neither events nor hosted pages: a page the kernel serves comes in through its dependencies.',
      from: { path: '^src/(kernel|lib|db)/|^src/config\\.ts$' },
      to: { path: '^src/(events|hosted)/' },
    },
    {
      name: 'areas-through-index',
      severity: 'error',
      comment: "An area imports another area only through that area's index.ts (what it exports for others); expansion reads across areas through the object registry.",
      from: { path: AREA },
      to: { path: AREA, pathNot: ['^src/resources/$1/', '^src/resources/[^/]+/index\\.ts$'] },
    },
    {
      name: 'areas-import-no-process',
      severity: 'error',
      comment: 'Areas import neither the registry that collects them nor the processes that run them.',
      from: { path: '^src/resources/' },
      to: { path: `^src/resources/index\\.ts$|${PROCESSES}` },
    },
    {
      name: 'nothing-below-imports-the-console',
      severity: 'error',
      comment: 'The console sits above the areas: the kernel, the lower layers and the areas never import it (app.ts mounts it).',
      from: { path: '^src/(kernel|lib|events|hosted|db|resources)/|^src/config\\.ts$' },
      to: { path: '^src/console/' },
    },
    {
      name: 'console-names-no-area',
      severity: 'error',
      comment: "The console knows areas only through the route table and OpenAPI document app.ts hands it, and acts only through the API's pipeline: it imports no area, no registry and no process.",
      from: { path: '^src/console/' },
      to: { path: `^src/resources/|${PROCESSES}` },
    },
    {
      name: 'processes-through-registry',
      severity: 'error',
      comment: "The processes take areas from the registry (src/resources/index.ts) or an area's index, never from inside a resource.",
      from: { path: PROCESSES },
      to: { path: '^src/resources/', pathNot: '^src/resources/(index|area)\\.ts$|^src/resources/[^/]+/index\\.ts$' },
    },
  ],
  options: {
    // `import type` counts: a circle of types is a circle of ideas.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Prisma's generated client has circles of its own; it is code we don't write.
    doNotFollow: { path: ['node_modules', '^src/generated/'] },
    exclude: { path: '^src/generated/' },
  },
};
