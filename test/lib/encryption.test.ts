import { randomBytes } from 'node:crypto';
import { Encryption } from '../../src/lib/encryption';
import { createLogger } from '../../src/lib/logger';
import { startTestApp, type TestApp } from '../helpers/app';
import { privateDatabase, type PrivateDatabase } from '../helpers/isolation';

// Each case gets a database of its own: the generated key lives in `encryption_keys`.
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

test('sealing hides the text, opening gives it back, and tampering is detected', async () => {
  const enc = new Encryption(t.runtime.prisma, '', logger);
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

test('without a configured key one is generated once, kept in the database, and shared by every process', async () => {
  const a = new Encryption(t.runtime.prisma, '', logger);
  const sealed = await a.seal('kept');
  const keys = await t.runtime.prisma.encryptionKey.findMany();
  expect(keys).toHaveLength(1);
  expect(Buffer.from(keys[0].material, 'base64')).toHaveLength(32);
  const b = new Encryption(t.runtime.prisma, '', logger); // another process, or a restart
  expect(await b.open(sealed)).toBe('kept');
  await b.seal('again');
  expect(await t.runtime.prisma.encryptionKey.count()).toBe(1);
});

test('a configured key seals from then on, and values sealed under the generated key still open (rotation)', async () => {
  const generated = new Encryption(t.runtime.prisma, '', logger);
  const old = await generated.seal('before rotation');
  const configured = randomBytes(32).toString('base64');
  const rotated = new Encryption(t.runtime.prisma, configured, logger);
  const fresh = await rotated.seal('after rotation');
  expect(fresh.split(':')[2]).not.toBe(old.split(':')[2]); // each value names its key
  expect(Encryption.keyIdOf(fresh)).toBe(fresh.split(':')[2]);
  expect(Encryption.keyIdOf(old)).toBe((await t.runtime.prisma.encryptionKey.findFirstOrThrow()).id);
  expect(() => Encryption.keyIdOf('plain text')).toThrow();
  expect(await rotated.open(old)).toBe('before rotation');
  expect(await rotated.open(fresh)).toBe('after rotation');
  // A process without the configured key can't open what it sealed.
  await expect(new Encryption(t.runtime.prisma, '', logger).open(fresh)).rejects.toThrow(/unknown encryption key/);
});
