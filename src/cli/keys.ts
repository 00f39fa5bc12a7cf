import { loadConfig } from '../config';
import { createPrisma } from '../lib/prisma';
import { systemClock } from '../lib/clock';
import { createPlatformAccount, generateKey, hashKey, maskKey } from '../kernel/auth';
import { prepareDatabase } from '../runtime';
import { createLogger } from '../lib/logger';

// `npm run keys -- create`: makes a platform account with a new secret key and prints the key.
// Only the key's hash is stored, so this is the one time it is shown.
async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  if (command !== 'create') {
    console.error('usage: npm run keys -- create');
    return 2;
  }
  const config = loadConfig();
  await prepareDatabase(config, createLogger('warn'));
  const prisma = createPrisma(config.databaseUrl, 1);
  try {
    const key = generateKey();
    const account = await createPlatformAccount(prisma, systemClock, { keyHash: hashKey(key), hint: maskKey(key), origin: 'registered' });
    console.log(key);
    console.error(`account ${account.id}; the key is shown only now`);
    return 0;
  } finally {
    await prisma.$disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
