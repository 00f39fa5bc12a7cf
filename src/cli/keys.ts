import { loadConfig, type Config } from '../config';
import { createPrisma } from '../lib/prisma';
import { systemClock } from '../lib/clock';
import { createPlatformAccount, generateKey, generatePublishableKey, hashKey, maskKey } from '../kernel/auth';
import { prepareDatabase } from '../runtime';
import { createLogger } from '../lib/logger';

// `npm run keys -- create [--restricted]`: makes a platform account with a new secret key (or a
// restricted key, `rk_test_…`, whose permissions are not modelled) and its publishable key
// (`pk_test_…`, for Stripe.js), and prints both, the secret key first. Only the keys' hashes are
// stored, so this is the one time they are shown. Each key is revoked on its own.
// `npm run keys -- list`: the keys, masked, with their accounts.
// `npm run keys -- revoke <key>`: the key stops working (within API_KEY_CACHE_SECONDS in
// running API processes); its account and everything in it stay.

export interface CreatedKey {
  key: string;
  /** The account's publishable key: random on its own, so it tells nothing of `key`. */
  publishableKey: string;
  accountId: string;
}

export function createRegisteredKey(config: Config, options: { restricted?: boolean } = {}): Promise<CreatedKey> {
  return withPrisma(config, async (prisma) => {
    const key = generateKey(options.restricted);
    const publishableKey = generatePublishableKey();
    const account = await createPlatformAccount(
      prisma,
      systemClock,
      [key, publishableKey].map((k) => ({ keyHash: hashKey(k), hint: maskKey(k), origin: 'registered' as const })),
    );
    return { key, publishableKey, accountId: account.id };
  });
}

export interface ListedKey {
  hint: string;
  accountId: string;
  origin: string;
  createdAt: Date;
}

async function withPrisma<T>(config: Config, work: (prisma: ReturnType<typeof createPrisma>) => Promise<T>): Promise<T> {
  await prepareDatabase(config, createLogger('warn'));
  const prisma = createPrisma(config.databaseUrl, 1);
  try {
    return await work(prisma);
  } finally {
    await prisma.$disconnect();
  }
}

export function listKeys(config: Config): Promise<ListedKey[]> {
  return withPrisma(config, (prisma) =>
    prisma.apiKey.findMany({ select: { hint: true, accountId: true, origin: true, createdAt: true }, orderBy: { createdAt: 'asc' } }),
  );
}

/** Deletes the key's row; the account the key owned is the account of none of the remaining keys. */
export function revokeKey(config: Config, key: string): Promise<{ accountId: string } | null> {
  return withPrisma(config, async (prisma) => {
    const deleted = await prisma.$queryRaw<{ account_id: string }[]>`DELETE FROM api_keys WHERE key_hash = ${hashKey(key)} RETURNING account_id`;
    return deleted.length > 0 ? { accountId: deleted[0].account_id } : null;
  });
}

const USAGE = 'usage: npm run keys -- create [--restricted] | list | revoke <key>';

export async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  const [command, ...rest] = argv;
  if (command === 'create' && (rest.length === 0 || (rest.length === 1 && rest[0] === '--restricted'))) {
    const created = await createRegisteredKey(config, { restricted: rest.length === 1 });
    console.log(created.key);
    console.log(created.publishableKey);
    console.error(`account ${created.accountId}: its secret key, then its publishable key (for Stripe.js); the keys are shown only now`);
    return 0;
  }
  if (command === 'list' && rest.length === 0) {
    for (const k of await listKeys(config)) console.log(`${k.hint}\t${k.accountId}\t${k.origin}\t${k.createdAt.toISOString()}`);
    return 0;
  }
  if (command === 'revoke' && rest.length === 1) {
    const revoked = await revokeKey(config, rest[0]);
    if (!revoked) {
      console.error(`no such key: ${maskKey(rest[0])}`);
      return 1;
    }
    console.error(`revoked ${maskKey(rest[0])} (account ${revoked.accountId}); API processes forget it within ${config.apiKeyCacheSeconds}s`);
    if (config.authMode === 'open') console.error('AUTH_MODE is open: the same key used again would start a new, empty account');
    return 0;
  }
  console.error(USAGE);
  return 2;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
