import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config } from '../config';
import { pooledRandomBytes } from './ids';
import type { Logger } from './logger';
import type { PrismaClient } from './prisma';

// Secrets at rest (webhook signing secrets, secret payloads, stored responses that carry secrets)
// are sealed with AES-256-GCM. Each sealed value names the key it was written with, so keys can
// rotate: the configured key, or else the newest key of the key file, seals; every known key
// opens. No key is kept in the database, so a dump of it opens nothing.

export const SEALED_PREFIX = 'sealed:v1:';
/** The key file, in DATA_DIR: `{"keys": [{id, material, created}, …]}`, oldest first; the last one seals. */
export const KEY_FILE = 'encryption-keys.json';
/** Advisory lock that serializes moving keys out of `encryption_keys` (earlier versions kept them there). */
const MOVE_LOCK_ID = 72707370;

interface StoredKey {
  id: string;
  /** Base64 of the 32 bytes. */
  material: string;
  created: string;
}

interface KeySet {
  current: string;
  all: Map<string, Buffer>;
}

export type EncryptionSettings = Pick<Config, 'secretsEncryptionKey' | 'dataDir' | 'nodeEnv'>;

export class Encryption {
  readonly keyFile: string;
  private keys: Promise<KeySet> | undefined;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly settings: EncryptionSettings,
    private readonly logger: Logger,
  ) {
    this.keyFile = path.resolve(settings.dataDir, KEY_FILE);
  }

  /**
   * Loads the keys now, at start-up: a process without one stops before it serves anything, and
   * no seal inside an operation's transaction waits for a second pooled connection to load them
   * (with every connection held by such transactions, none would come).
   */
  async ready(): Promise<void> {
    await this.loadKeys();
  }

  async seal(plaintext: string): Promise<string> {
    const { current, all } = await this.loadKeys();
    const iv = pooledRandomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', all.get(current)!, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + [current, iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join(':');
  }

  async open(value: string): Promise<string> {
    if (!Encryption.isSealed(value)) throw new Error('not a sealed value');
    const [keyId, iv, tag, sealed] = value.slice(SEALED_PREFIX.length).split(':');
    const key = (await this.loadKeys()).all.get(keyId);
    if (!key) {
      throw new Error(`unknown encryption key ${keyId} (processes sharing a database must share SECRETS_ENCRYPTION_KEY or the key file)`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64')), decipher.final()]).toString('utf8');
  }

  static isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  /** The id of the key a sealed value was written with (rows record it, to find what a rotation must re-seal). */
  static keyIdOf(sealed: string): string {
    if (!Encryption.isSealed(sealed)) throw new Error('not a sealed value');
    return sealed.slice(SEALED_PREFIX.length).split(':')[0];
  }

  private loadKeys() {
    this.keys ??= this.readKeys().catch((err) => {
      this.keys = undefined; // try again on the next use
      throw err;
    });
    return this.keys;
  }

  private async readKeys(): Promise<KeySet> {
    const configured = this.settings.secretsEncryptionKey;
    let stored = readKeyFile(this.keyFile);
    if (!stored && configured === '' && this.settings.nodeEnv === 'production') {
      throw new ConfigError(
        `NODE_ENV=production needs a key for secrets at rest: set SECRETS_ENCRYPTION_KEY (openssl rand -base64 32), or provide the key file ${this.keyFile}`,
      );
    }
    const legacy = await this.prisma.encryptionKey.findMany({ orderBy: { createdAt: 'asc' } });
    if (!stored && (configured === '' || legacy.length > 0)) {
      // Keys from the database carry on as they were (the newest still seals); else a new one.
      const initial = legacy.length > 0 ? legacy.map(fromRow) : [newKey()];
      const created = createKeyFile(this.keyFile, initial);
      stored = created.keys;
      if (created.won && legacy.length === 0) {
        this.logger.warn(
          { keyFile: this.keyFile },
          'SECRETS_ENCRYPTION_KEY is not set: generated a key into the key file; back it up (losing it loses every sealed value), or set SECRETS_ENCRYPTION_KEY',
        );
      }
    }
    if (legacy.length > 0) stored = await this.moveLegacyKeys();

    const all = new Map((stored ?? []).map((k) => [k.id, Buffer.from(k.material, 'base64')]));
    if (configured !== '') {
      const material = Buffer.from(configured, 'base64');
      const id = `env${createHash('sha256').update(material).digest('hex').slice(0, 12)}`;
      all.set(id, material);
      return { current: id, all };
    }
    return { current: stored![stored!.length - 1].id, all };
  }

  /**
   * Moves the keys earlier versions kept in `encryption_keys` into the key file (it exists by
   * now), then deletes them from the table: one process at a time, the file written before the
   * rows go, so a crash in between leaves a key in both places, never in neither.
   */
  private moveLegacyKeys(): Promise<StoredKey[]> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${MOVE_LOCK_ID})`;
      const rows = await tx.encryptionKey.findMany({ orderBy: { createdAt: 'asc' } });
      let stored = readKeyFile(this.keyFile)!;
      const missing = rows.filter((row) => !stored.some((k) => k.id === row.id));
      if (missing.length > 0) {
        // Older than what the file holds: its newest key keeps sealing.
        stored = [...missing.map(fromRow), ...stored];
        replaceKeyFile(this.keyFile, stored);
      }
      if (rows.length > 0) {
        await tx.encryptionKey.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
        this.logger.warn({ keyFile: this.keyFile, keys: rows.map((r) => r.id) }, 'moved encryption keys out of the database into the key file');
      }
      return stored;
    });
  }
}

const newKey = (): StoredKey => ({
  id: `file${randomBytes(6).toString('hex')}`,
  material: randomBytes(32).toString('base64'),
  created: new Date().toISOString(),
});

const fromRow = (row: { id: string; material: string; createdAt: Date }): StoredKey => ({
  id: row.id,
  material: row.material,
  created: row.createdAt.toISOString(),
});

/** The file's keys, oldest first; undefined when there is no file. */
function readKeyFile(file: string): StoredKey[] | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`can't read the key file ${file}: ${(err as Error).message}`);
  }
  let keys: unknown;
  try {
    keys = JSON.parse(text).keys;
  } catch {
    keys = undefined;
  }
  const valid = (k: any): k is StoredKey =>
    typeof k?.id === 'string' && /^[A-Za-z0-9]+$/.test(k.id) && typeof k.material === 'string' && Buffer.from(k.material, 'base64').length === 32;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every(valid)) {
    throw new ConfigError(`the key file ${file} is not valid: it must be {"keys": [{"id", "material" (base64 of 32 bytes)}, …]}`);
  }
  return keys;
}

/** Writes the keys to a new file next to `file` (mode 0600, durable before it is used), and returns its name. */
function writeTemporary(file: string, keys: StoredKey[]): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = fs.openSync(temporary, 'wx', 0o600);
  try {
    fs.writeFileSync(fd, `${JSON.stringify({ keys }, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return temporary;
}

function syncDirectory(file: string): void {
  const fd = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Creates the key file with `keys` unless another process (the API and the worker start together)
 * created it first, in which case its keys are the ones to use. link() is the exclusive create:
 * it fails if the name exists, and publishes a complete file, so no reader sees a half-written one.
 */
function createKeyFile(file: string, keys: StoredKey[]): { keys: StoredKey[]; won: boolean } {
  let temporary: string;
  try {
    temporary = writeTemporary(file, keys);
  } catch (err) {
    throw new ConfigError(`can't create the key file ${file} (is DATA_DIR writable?): ${(err as Error).message}`);
  }
  try {
    fs.linkSync(temporary, file);
    syncDirectory(file);
    return { keys, won: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { keys: readKeyFile(file)!, won: false };
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Replaces the key file atomically (rename), so readers see the old keys or the new ones. */
function replaceKeyFile(file: string, keys: StoredKey[]): void {
  fs.renameSync(writeTemporary(file, keys), file);
  syncDirectory(file);
}
