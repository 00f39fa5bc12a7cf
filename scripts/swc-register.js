'use strict';
// Runs the TypeScript sources directly (`node -r ./scripts/swc-register.js src/server.ts`), compiled
// file by file with swc as jest does, so the fault suite can start the API and the worker as
// processes without a build. Like jest's moduleNameMapper, a `./x.js` import finds `./x.ts`.
const Module = require('node:module');
const fs = require('node:fs');
const { transformSync } = require('@swc/core');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  try {
    return resolve.call(this, request, parent, ...rest);
  } catch (err) {
    if (request.startsWith('.') && request.endsWith('.js')) return resolve.call(this, request.slice(0, -3) + '.ts', parent, ...rest);
    throw err;
  }
};

Module._extensions['.ts'] = function (module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
