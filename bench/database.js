'use strict';
// The bench database of a benchmark that runs the built service (dist/): dropped, created and
// migrated afresh, so every run starts empty. Only a database whose name contains "bench".

const path = require('node:path');
const { Client } = require('pg');

async function resetBenchDatabase(databaseUrl) {
  const admin = new URL(databaseUrl);
  const name = admin.pathname.slice(1);
  if (!/bench/.test(name)) throw new Error(`${databaseUrl}: a bench database's name must contain "bench" (it is dropped)`);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.end();
  const { applyMigrations, ensureDatabase } = require(path.join(__dirname, '..', 'dist', 'src', 'db', 'migrate.js'));
  await ensureDatabase(databaseUrl);
  await applyMigrations(databaseUrl, { log: () => undefined });
}

module.exports = { resetBenchDatabase };
