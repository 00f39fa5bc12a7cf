import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { Encryption, KEY_FILE, type EncryptionSettings } from '../../src/lib/encryption';
import { createLogger } from '../../src/lib/logger';
import type { PrismaClient } from '../../src/lib/prisma';
import { failStartup, openRuntime, prepareSecrets } from '../../src/runtime';
import { startTestApp, type TestApp } from '../helpers/app';
import { expectNowhereAtRest } from '../helpers/atRest';
import { privateDatabase, type PrivateDatabase } from '../helpers/isolation';

// The keys of secrets at rest: a key file in a data directory (each case makes its own, in a
// temporary folder), never the database. A database of its own, for the keys earlier versions
// kept in `encryption_keys`.

let db: PrivateDatabase;
let t: TestApp;
beforeAll(async () => {
  db = await privateDatabase('encryption');
  t = await startTestApp({ DATABASE_URL: db.url });
});
afterAll(async () => {
  await t.close();
  await db.drop();
});

const logger = createLogger('silent');
const dirs: string[] = [];
const newDataDir = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbank-encryption-'));
  dirs.push(dir);
  return path.join(dir, 'data'); // not there yet: the first key makes it
};
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await t.runtime.prisma.encryptionKey.deleteMany();
});

const settings = (dataDir: string, more: Partial<EncryptionSettings> = {}): EncryptionSettings => ({
  secretsEncryptionKey: '',
  dataDir,
  nodeEnv: 'test',
  ...more,
});
const encryption = (dataDir: string, more: Partial<EncryptionSettings> = {}) => new Encryption(t.runtime.prisma, settings(dataDir, more), logger);
const keysIn = (dataDir: string): { id: string; material: string }[] => JSON.parse(readFileSync(path.join(dataDir, KEY_FILE), 'utf8')).keys;

test('sealing hides the text, opening gives it back, and tampering is detected', async () => {
  const enc = encryption(newDataDir());
  const sealed = await enc.seal('{"client_secret":"accs_secret__plain"}');
  expect(Encryption.isSealed(sealed)).toBe(true);
  expect(sealed).not.toContain('plain');
  expect(await enc.open(sealed)).toBe('{"client_secret":"accs_secret__plain"}');
  expect(await enc.seal('same')).not.toBe(await enc.seal('same')); // a fresh IV every time

  const parts = sealed.split(':');
  const body = Buffer.from(parts[5], 'base64');
  body[0] ^= 1;
  parts[5] = body.toString('base64');
  await expect(enc.open(parts.join(':'))).rejects.toThrow();
});

test('without a configured key, processes starting together generate one key into a 0600 key file, outside the database', async () => {
  const dataDir = newDataDir();
  // The API and the worker: both find no file, both try to create it; one wins, the other reads its key.
  const [a, b] = [encryption(dataDir), encryption(dataDir)];
  const [fromA, fromB] = await Promise.all([a.seal('from a'), b.seal('from b')]);
  expect(Encryption.keyIdOf(fromA)).toBe(Encryption.keyIdOf(fromB));
  expect(await a.open(fromB)).toBe('from b');
  expect(await b.open(fromA)).toBe('from a');

  const keys = keysIn(dataDir);
  expect(keys).toHaveLength(1);
  expect(keys[0].id).toBe(Encryption.keyIdOf(fromA));
  expect(Buffer.from(keys[0].material, 'base64')).toHaveLength(32);
  expect(statSync(path.join(dataDir, KEY_FILE)).mode & 0o777).toBe(0o600);
  expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  expect(readdirSync(dataDir)).toEqual([KEY_FILE]); // no temporary file left behind
  expect(await t.runtime.prisma.encryptionKey.count()).toBe(0);

  const restarted = encryption(dataDir);
  expect(await restarted.open(fromA)).toBe('from a');
  expect(Encryption.keyIdOf(await restarted.seal('again'))).toBe(keys[0].id);
  expect(keysIn(dataDir)).toEqual(keys);
});

test('many processes racing for the key file all end up with the same key', async () => {
  const dataDir = newDataDir();
  const instances = Array.from({ length: 8 }, () => encryption(dataDir));
  const sealed = await Promise.all(instances.map((enc, i) => enc.seal(`value ${i}`)));
  expect(new Set(sealed.map(Encryption.keyIdOf)).size).toBe(1);
  expect(keysIn(dataDir)).toHaveLength(1);
  for (const enc of instances) expect(await enc.open(sealed[0])).toBe('value 0');
});

test('a configured key seals from then on, and values sealed under the key file still open (rotation)', async () => {
  const dataDir = newDataDir();
  const old = await encryption(dataDir).seal('before rotation');
  const configured = randomBytes(32).toString('base64');
  const rotated = encryption(dataDir, { secretsEncryptionKey: configured });
  const fresh = await rotated.seal('after rotation');
  expect(Encryption.keyIdOf(fresh)).not.toBe(Encryption.keyIdOf(old)); // each value names its key
  expect(Encryption.keyIdOf(old)).toBe(keysIn(dataDir)[0].id);
  expect(() => Encryption.keyIdOf('plain text')).toThrow();
  expect(await rotated.open(old)).toBe('before rotation');
  expect(await rotated.open(fresh)).toBe('after rotation');
  // A process without the configured key can't open what it sealed.
  await expect(encryption(dataDir).open(fresh)).rejects.toThrow(/unknown encryption key/);
});

test('a configured key alone writes no key file', async () => {
  const dataDir = newDataDir();
  const enc = encryption(dataDir, { secretsEncryptionKey: randomBytes(32).toString('base64') });
  expect(await enc.open(await enc.seal('x'))).toBe('x');
  expect(existsSync(dataDir)).toBe(false);
});

/** A value as an earlier version sealed it: under a key it generated and kept in `encryption_keys`. */
async function sealedUnderLegacyKey(text: string, createdAt: Date) {
  const scratch = newDataDir();
  // Sealed by a process that sees no database (this one's keys must not join its own file).
  const noDatabase = { encryptionKey: { findMany: async () => [] } } as unknown as PrismaClient;
  const sealed = await new Encryption(noDatabase, settings(scratch), logger).seal(text);
  const [key] = keysIn(scratch);
  rmSync(scratch, { recursive: true });
  await t.runtime.prisma.encryptionKey.create({ data: { id: key.id, material: key.material, createdAt } });
  return { sealed, ...key };
}

test('keys an earlier version kept in the database move into the key file, still open their values, and leave the database', async () => {
  const older = await sealedUnderLegacyKey('sealed long ago', new Date(Date.now() - 60_000));
  const newer = await sealedUnderLegacyKey('sealed lately', new Date());
  const dataDir = newDataDir();
  // The API and the worker of the new version start together (logging where the test can read).
  const [a, b] = [1, 2].map(() => new Encryption(t.runtime.prisma, settings(dataDir), t.runtime.logger));
  await Promise.all([a.ready(), b.ready()]);
  for (const enc of [a, b]) {
    expect(await enc.open(older.sealed)).toBe('sealed long ago');
    expect(await enc.open(newer.sealed)).toBe('sealed lately');
    // The newest of them keeps sealing: no new key was needed.
    expect(Encryption.keyIdOf(await enc.seal('now'))).toBe(newer.id);
  }
  expect(keysIn(dataDir).map((k) => k.id)).toEqual([older.id, newer.id]);
  expect(statSync(path.join(dataDir, KEY_FILE)).mode & 0o777).toBe(0o600);
  expect(await t.runtime.prisma.encryptionKey.count()).toBe(0);
  // Nothing in the database opens a sealed value any more.
  await expectNowhereAtRest(t, older.material);
  await expectNowhereAtRest(t, newer.material);
  // One of them moved the keys, and said so.
  expect(t.logs.filter((line) => line.msg === 'moved encryption keys out of the database into the key file')).toHaveLength(1);

  // A key file that exists already (generated meanwhile) takes them in too, before its own key.
  const legacy = await sealedUnderLegacyKey('sealed by an old process', new Date());
  const current = keysIn(dataDir);
  const restarted = encryption(dataDir);
  expect(await restarted.open(legacy.sealed)).toBe('sealed by an old process');
  expect(keysIn(dataDir).map((k) => k.id)).toEqual([legacy.id, ...current.map((k) => k.id)]);
  expect(Encryption.keyIdOf(await restarted.seal('now'))).toBe(newer.id);
  expect(await t.runtime.prisma.encryptionKey.count()).toBe(0);
});

test('with a configured key, keys from the database still move into a key file', async () => {
  const legacy = await sealedUnderLegacyKey('legacy', new Date());
  const dataDir = newDataDir();
  const enc = encryption(dataDir, { secretsEncryptionKey: randomBytes(32).toString('base64') });
  expect(await enc.open(legacy.sealed)).toBe('legacy');
  expect(Encryption.keyIdOf(await enc.seal('x'))).toMatch(/^env/);
  expect(keysIn(dataDir).map((k) => k.id)).toEqual([legacy.id]);
  expect(await t.runtime.prisma.encryptionKey.count()).toBe(0);
});

describe('NODE_ENV=production', () => {
  test('without SECRETS_ENCRYPTION_KEY or a key file, refuses to start with one line', async () => {
    const dataDir = newDataDir();
    const runtime = openRuntime(
      loadConfig({ ...process.env, DATABASE_URL: db.url, NODE_ENV: 'production', SECRETS_ENCRYPTION_KEY: '', DATA_DIR: dataDir }),
      { logger },
    );
    try {
      const err = await prepareSecrets(runtime).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain('SECRETS_ENCRYPTION_KEY');
      expect((err as Error).message).toContain(path.join(dataDir, KEY_FILE));
      expect(existsSync(dataDir)).toBe(false); // no key was generated

      const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
      const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
      try {
        failStartup(err);
        expect(printed.mock.calls).toEqual([[(err as Error).message]]);
        expect((err as Error).message).not.toContain('\n');
        expect(exit).toHaveBeenCalledWith(1);
      } finally {
        printed.mockRestore();
        exit.mockRestore();
      }
    } finally {
      await runtime.close();
    }
  });

  test('starts with an existing key file, or with SECRETS_ENCRYPTION_KEY', async () => {
    const dataDir = newDataDir();
    const sealed = await encryption(dataDir).seal('made before'); // e.g. copied from a backup
    expect(await encryption(dataDir, { nodeEnv: 'production' }).open(sealed)).toBe('made before');
    const configured = encryption(newDataDir(), { nodeEnv: 'production', secretsEncryptionKey: randomBytes(32).toString('base64') });
    await expect(configured.ready()).resolves.toBeUndefined();
  });
});

test('a damaged key file stops start-up with a message naming it', async () => {
  const dataDir = newDataDir();
  await encryption(dataDir).ready();
  writeFileSync(path.join(dataDir, KEY_FILE), '{"keys": [{"id": "x", "material": "short"}]}');
  const err = await encryption(dataDir).ready().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as Error).message).toContain(path.join(dataDir, KEY_FILE));
});
