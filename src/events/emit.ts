import type { Prisma } from '../generated/prisma/client';
import { newId } from '../lib/ids';
import { eventsEmitted } from '../lib/metrics';
import type { RequestContext } from '../kernel/route';
import type { EventType } from './types';

export type Tx = Prisma.TransactionClient;

/** The request that caused an event, or none for events the system raised itself. */
export interface EventCause {
  readonly requestId: string | null;
  readonly idempotencyKey: string | null;
}

export const automaticCause: EventCause = { requestId: null, idempotencyKey: null };

export const causeOf = (ctx: RequestContext): EventCause => ({ requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey ?? null });

export interface EmitOptions {
  /** The account the event belongs to (a connected account's events go to its platform's connect endpoints). */
  readonly accountId: string;
  /** The version `data.object` was rendered at: the account's default. */
  readonly apiVersion: string;
  readonly created: number;
  readonly cause: EventCause;
  /** On `*.updated`: the old values of the fields that changed. */
  readonly previousAttributes?: Record<string, unknown>;
}

/**
 * Writes the event in the caller's transaction, so it exists exactly when the change it reports
 * does (the outbox). Returns its id; hand it to the relay after the transaction commits.
 */
export async function emit(tx: Tx, type: EventType, object: Record<string, unknown>, options: EmitOptions): Promise<string> {
  const id = newId('evt');
  const data: Record<string, unknown> = { object };
  if (options.previousAttributes) data.previous_attributes = options.previousAttributes;
  await tx.event.create({
    data: {
      id,
      accountId: options.accountId,
      created: options.created,
      type,
      apiVersion: options.apiVersion,
      data: data as Prisma.InputJsonValue,
      requestId: options.cause.requestId,
      idempotencyKey: options.cause.idempotencyKey,
    },
    select: { id: true },
  });
  eventsEmitted.inc({ type });
  return id;
}

/** The old values of top-level fields that differ between two renderings of an object. */
export function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(before)) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) out[key] = before[key];
  }
  return out;
}
