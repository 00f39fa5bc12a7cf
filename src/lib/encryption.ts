import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Logger } from './logger';
import type { PrismaClient } from './prisma';

// Secrets at rest (secret payloads, stored responses that carry client secrets) are sealed with
// AES-256-GCM. Each sealed value names the key it was written with, so keys can rotate: the
// configured key, or else the newest generated one, seals; every known key opens.

const PREFIX = 'sealed:v1';

export class Encryption {
  private keys: Promise<{ current: string; all: Map<string, Buffer> }> | undefined;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly configuredKey: string,
    private readonly logger: Logger,
  ) {}

  async seal(plaintext: string): Promise<string> {
    const { current, all } = await this.loadKeys();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', all.get(current)!, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [PREFIX, current, iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join(':');
  }

  async open(value: string): Promise<string> {
    const [p1, p2, keyId, iv, tag, sealed] = value.split(':');
    if (`${p1}:${p2}` !== PREFIX || !sealed) throw new Error('not a sealed value');
    const key = (await this.loadKeys()).all.get(keyId);
    if (!key) throw new Error(`unknown encryption key ${keyId}`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64')), decipher.final()]).toString('utf8');
  }

  static isSealed(value: string): boolean {
    return value.startsWith(`${PREFIX}:`);
  }

  /** The id of the key a sealed value was written with (rows record it, to find what a rotation must re-seal). */
  static keyIdOf(sealed: string): string {
    if (!Encryption.isSealed(sealed)) throw new Error('not a sealed value');
    return sealed.split(':')[2];
  }

  private loadKeys() {
    this.keys ??= this.readKeys().catch((err) => {
      this.keys = undefined; // try again on the next use
      throw err;
    });
    return this.keys;
  }

  private async readKeys(): Promise<{ current: string; all: Map<string, Buffer> }> {
    const all = new Map<string, Buffer>();
    let rows = await this.prisma.encryptionKey.findMany({ orderBy: { createdAt: 'asc' } });
    for (const row of rows) all.set(row.id, Buffer.from(row.material, 'base64'));
    if (this.configuredKey !== '') {
      const material = Buffer.from(this.configuredKey, 'base64');
      const id = `env${createHash('sha256').update(material).digest('hex').slice(0, 12)}`;
      all.set(id, material);
      return { current: id, all };
    }
    if (rows.length === 0) {
      this.logger.warn('SECRETS_ENCRYPTION_KEY is not set: generated a key and kept it in the database (set one in production)');
      const id = `db${randomBytes(6).toString('hex')}`;
      await this.prisma.encryptionKey.create({ data: { id, material: randomBytes(32).toString('base64') } });
      // Processes starting together may each create one; every key opens everything, so any may seal.
      rows = await this.prisma.encryptionKey.findMany({ orderBy: { createdAt: 'asc' } });
      for (const row of rows) all.set(row.id, Buffer.from(row.material, 'base64'));
    }
    return { current: rows[rows.length - 1].id, all };
  }
}
