import { loadConfig, type Config } from '../config';
import { createPrisma } from '../lib/prisma';
import { systemClock } from '../lib/clock';
import { createPlatformAccount, generateKey, hashKey, maskKey } from '../kernel/auth';
import { prepareDatabase } from '../runtime';
import { createLogger } from '../lib/logger';

// `npm run keys -- create`: makes a platform account with a new secret key and prints the key.
// Only the key's hash is stored, so this is the one time it is shown.

export interface CreatedKey {
  key: string;
  accountId: string;
}

export async function createRegisteredKey(config: Config): Promise<CreatedKey> {
  await prepareDatabase(config, createLogger('warn'));
  const prisma = createPrisma(config.databaseUrl, 1);
  try {
    const key = generateKey();
    const account = await createPlatformAccount(prisma, systemClock, { keyHash: hashKey(key), hint: maskKey(key), origin: 'registered' });
    return { key, accountId: account.id };
  } finally {
    await prisma.$disconnect();
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] !== 'create' || argv.length > 1) {
    console.error('usage: npm run keys -- create');
    return 2;
  }
  const created = await createRegisteredKey(loadConfig());
  console.log(created.key);
  console.error(`account ${created.accountId}; the key is shown only now`);
  return 0;
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
