import { emit, automaticCause } from '../../src/events/emit';
import { handOffEvents } from '../../src/events/jobs';
import type { EventType } from '../../src/events/types';
import { hashKey } from '../../src/kernel/auth';
import { unixSeconds } from '../../src/lib/clock';
import { newId } from '../../src/lib/ids';
import { LATEST_API_VERSION } from '../../src/kernel/versions';
import type { Runtime } from '../../src/runtime';

/** The platform account behind a key that has made at least one request. */
export async function accountOfKey(runtime: Runtime, key: string): Promise<string> {
  const row = await runtime.prisma.apiKey.findUnique({ where: { keyHash: hashKey(key) }, select: { accountId: true } });
  if (!row) throw new Error('this key has not been used yet');
  return row.accountId;
}

/** Emits an event the way a service does (in a transaction), then hands it to the workers. */
export async function emitTestEvent(
  runtime: Runtime,
  accountId: string,
  type: EventType = 'account.updated',
  object: Record<string, unknown> = { id: accountId, object: 'account' },
  options: { handOff?: boolean; previousAttributes?: Record<string, unknown>; apiVersion?: string } = {},
): Promise<string> {
  const id = await runtime.prisma.$transaction((tx) =>
    emit(tx, type, object, {
      accountId,
      apiVersion: options.apiVersion ?? LATEST_API_VERSION,
      created: unixSeconds(runtime.clock),
      cause: automaticCause,
      previousAttributes: options.previousAttributes,
    }),
  );
  if (options.handOff !== false) await handOffEvents(runtime.queues, [id]);
  return id;
}

/** A connected account of `platformAccountId`, as the accounts area will create them. */
export async function createConnectedAccount(runtime: Runtime, platformAccountId: string): Promise<string> {
  const id = newId('acct', 16);
  await runtime.prisma.account.create({
    data: { id, parentAccountId: platformAccountId, created: unixSeconds(runtime.clock) },
  });
  return id;
}
