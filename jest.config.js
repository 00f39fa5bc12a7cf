/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  // The generated Prisma client imports its own TypeScript files with .js extensions.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/test/helpers/globalSetup.ts',
  globalTeardown: '<rootDir>/test/helpers/globalTeardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
  // A worker that grew past this after a test file is replaced: the SDK type checks load whole
  // TypeScript programs, and a bloated worker slows every later file with garbage collection.
  workerIdleMemoryLimit: '1GB',
};
