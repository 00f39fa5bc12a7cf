import { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { ApiError, invalidRequest, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginateRows, rangeWhere } from '../../../kernel/list';
import { requireOpenedClientSecret } from '../../../kernel/clientSecret';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { Deps, RequestContext } from '../../../kernel/route';
import { prismaDb } from '../../../kernel/writes';
import { prismaOf } from '../../../kernel/transaction';
import { TxSql, type SqlClient } from '../../../lib/sql';
import { accountApiVersion, automaticCause, emit, requestEventOptions, type EmitOptions, type Tx } from '../../../events/emit';
import type { EventType } from '../../../events/types';
import { handOffEvents } from '../../../events/jobs';
import {
  closeAuthentications,
  pendingNextAction,
  startAuthentication,
  type AuthenticationResult,
  type AuthenticationTarget,
} from '../authentications/service';
import {
  createPaymentMethodFromData,
  lockCustomer,
  lockLiveCustomer,
  resolvePaymentMethod,
  type PaymentMethodDataParam,
  type StoredPaymentMethod,
} from '../payment_methods/service';
import { serializePaymentMethod } from '../payment_methods/serializer';
import { attachError, paymentResult, type CardOutcome } from '../payment_methods/testCards';
import { isConnectedAccountOf, lockSetupIntentRow, markOffSessionReady, selectOwnedForUpdate, updateSetupIntentRow } from './queries';
import { CARD_OPTIONS, SETUP_INTENT_OBJECT, serializeSetupIntent, type SetupIntentRow } from './serializer';

// SetupIntents: requires_payment_method → requires_confirmation → (requires_action →) succeeded,
// or canceled. Every change locks the row first, so two concurrent confirmations run one after
// the other and the second meets the first one's outcome. Confirming runs the card as its test
// number says: declining cards fail (402, `last_setup_error`, back to requires_payment_method),
// cards that ask for 3-D Secure start a challenge (payments/authentications: the hosted page, or
// its expiry, comes back through `setupIntentTarget.finish`), the others succeed: the card is
// attached to the intent's customer and, for `usage=off_session`, marked ready for payments made
// without the customer. The client secret is sealed at rest and shown only in the API's answers.

const NAME = 'setupintent';

const ROW = {
  id: true,
  accountId: true,
  created: true,
  status: true,
  customerId: true,
  paymentMethodId: true,
  paymentMethodTypes: true,
  automaticPaymentMethods: true,
  paymentMethodOptions: true,
  usage: true,
  description: true,
  metadata: true,
  onBehalfOf: true,
  lastSetupError: true,
  latestAttempt: true,
  returnUrl: true,
  cancellationReason: true,
  clientSecret: true,
} as const;

/** A row as the service reads it: the public fields, its account and the sealed client secret. */
type Stored = SetupIntentRow & { accountId: string; clientSecret: string };

/** Who a change is made for, and how its events are written (a request's caller, or the system's for the page and the expiry). */
interface Actor {
  readonly deps: Deps;
  readonly accountId: string;
  readonly events: EmitOptions;
}

const requestActor = (ctx: RequestContext): Actor => ({ deps: ctx.deps, accountId: ctx.caller.accountId, events: requestEventOptions(ctx, unixSeconds(ctx.deps.clock)) });

async function systemActor(tx: Tx, deps: Deps, accountId: string): Promise<Actor> {
  const apiVersion = await accountApiVersion(tx, accountId, deps.config.defaultApiVersion);
  return { deps, accountId, events: { accountId, apiVersion, created: unixSeconds(deps.clock), cause: automaticCause } };
}

const emitSetupIntent = (tx: Tx, actor: Actor, type: EventType, row: SetupIntentRow): Promise<string> => emit(tx, type, serializeSetupIntent(row), actor.events);

/** The public object as the API answers it: with its client secret and, while a challenge is open, its `next_action`. */
function present(db: Tx, deps: Pick<Deps, 'config' | 'encryption'>, row: Stored) {
  return presentWith(new TxSql(db), deps, row);
}

/** The same, its challenge read through `sql` (the pool, or a `sqlOnly` update's transaction). */
async function presentWith(sql: SqlClient, deps: Pick<Deps, 'config' | 'encryption'>, row: Stored) {
  const nextAction = row.status === 'requires_action' ? await pendingNextAction(sql, deps, row.id) : null;
  return serializeSetupIntent(row, { clientSecret: await deps.encryption.open(row.clientSecret), nextAction });
}

const unexpectedState = (message: string, row: SetupIntentRow): ApiError =>
  new ApiError({ status: 400, code: 'setup_intent_unexpected_state', message, extra: { setup_intent: serializeSetupIntent(row) } });

/** One of the caller's SetupIntents, locked; 404 `resource_missing` otherwise. */
async function lockOwned(tx: Tx, accountId: string, id: string): Promise<Stored> {
  if (!hasIdShape('seti', id) || !(await lockSetupIntentRow(tx, id, accountId))) throw resourceMissing(NAME, id);
  return (await tx.setupIntent.findUniqueOrThrow({ where: { id }, select: ROW })) as Stored;
}

/**
 * The client secret: a publishable key must send the intent's own, and one a secret key sends must
 * be right too (the kernel's check). A wrong one shows nothing of the intent.
 */
async function checkClientSecret(ctx: RequestContext, row: Stored): Promise<void> {
  if (!ctx.caller.publishable && ctx.params.client_secret === undefined) return;
  requireOpenedClientSecret(ctx, await ctx.deps.encryption.open(row.clientSecret), SETUP_INTENT_OBJECT);
}

async function checkOnBehalfOf(tx: Tx, ctx: RequestContext, id: string | undefined): Promise<string | null> {
  if (id === undefined) return null;
  if (!hasIdShape('acct', id) || !(await isConnectedAccountOf(tx, id, ctx.caller.platformAccountId))) {
    throw resourceMissing('account', id, 'on_behalf_of', 400);
  }
  return id;
}

/** `automatic_payment_methods` as kept: enabled by default unless `allowed_payment_method_types` was given, as the public API does today. */
function automaticPaymentMethodsOf(params: Record<string, any>): Record<string, unknown> | null {
  const given = params.automatic_payment_methods as { enabled: boolean; allow_redirects?: string } | undefined;
  if (given !== undefined) return given.enabled ? { allow_redirects: given.allow_redirects ?? 'always', enabled: true } : { enabled: false };
  return params.allowed_payment_method_types === undefined ? { allow_redirects: 'always', enabled: true } : null;
}

const REDIRECTS_NEED_RETURN_URL =
  'This SetupIntent is configured to accept payment methods enabled in your Dashboard, some of which may require a full page redirect to succeed. ' +
  'If you do not want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and `automatic_payment_methods[allow_redirects]` to `never` when creating Setup Intents and Payment Intents. ' +
  'If you do want to accept redirect-based payment methods, set the `return_url` parameter when confirming Setup Intents and Payment Intents.';

/** The page redirects there after the challenge: an absolute http(s) URL only. */
function checkReturnUrl(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw invalidRequest('Not a valid URL', 'url_invalid', 'return_url');
}

const AUTHENTICATION_FAILURE = {
  code: 'setup_intent_authentication_failure',
  doc_url: 'https://stripe.com/docs/error-codes/setup-intent-authentication-failure',
  message: 'We are unable to authenticate your payment method. Please choose a different payment method and try again.',
  type: 'invalid_request_error',
};

/** A nullable JSON column's value (Prisma writes SQL NULL only as DbNull). */
const json = (value: unknown) => (value === null ? Prisma.DbNull : (value as Prisma.InputJsonValue));

/** Writes the row's changing columns. */
async function save(tx: Tx, row: Stored): Promise<void> {
  await tx.setupIntent.update({
    where: { id: row.id },
    data: {
      status: row.status,
      customerId: row.customerId,
      paymentMethodId: row.paymentMethodId,
      paymentMethodTypes: row.paymentMethodTypes,
      automaticPaymentMethods: json(row.automaticPaymentMethods),
      description: row.description,
      metadata: row.metadata as Prisma.InputJsonValue,
      lastSetupError: json(row.lastSetupError),
      latestAttempt: row.latestAttempt,
      returnUrl: row.returnUrl,
      cancellationReason: row.cancellationReason,
    },
    select: { id: true },
  });
}

/** The intent's payment method, locked (after its customer: the order attaching and detaching take). */
async function readPaymentMethod(tx: Tx, id: string): Promise<StoredPaymentMethod> {
  await tx.$queryRaw`SELECT id FROM payment_methods WHERE id = ${id} FOR UPDATE`;
  return (await tx.paymentMethod.findUniqueOrThrow({
    where: { id },
    select: {
      id: true, created: true, customerId: true, billingDetails: true, metadata: true, brand: true, funding: true, country: true,
      last4: true, expMonth: true, expYear: true, fingerprint: true, cvcCheck: true, outcome: true, allowRedisplay: true,
    },
  })) as StoredPaymentMethod;
}

/**
 * The intent succeeded with `pm`: attached to its customer (`payment_method.attached`; the caller
 * locked the customer, then the card), ready off-session for `usage=off_session`, `setup_intent.succeeded`.
 */
async function succeed(tx: Tx, actor: Actor, row: Stored, pm: StoredPaymentMethod): Promise<{ row: Stored; eventIds: string[] }> {
  const eventIds: string[] = [];
  if (row.customerId !== null && pm.customerId !== row.customerId) {
    await tx.paymentMethod.update({ where: { id: pm.id }, data: { customerId: row.customerId }, select: { id: true } });
    eventIds.push(await emit(tx, 'payment_method.attached', serializePaymentMethod({ ...pm, customerId: row.customerId }), actor.events));
  }
  if (row.usage === 'off_session') await markOffSessionReady(tx, pm.id);
  const done: Stored = { ...row, status: 'succeeded', paymentMethodId: pm.id, lastSetupError: null };
  await save(tx, done);
  eventIds.push(await emitSetupIntent(tx, actor, 'setup_intent.succeeded', done));
  return { row: done, eventIds };
}

/** The intent failed with `pm` (`error`: the public error body): back to requires_payment_method, `setup_intent.setup_failed`. */
async function fail(tx: Tx, actor: Actor, row: Stored, pm: StoredPaymentMethod, error: Record<string, unknown>): Promise<{ row: Stored; eventIds: string[] }> {
  const failed: Stored = {
    ...row,
    status: 'requires_payment_method',
    paymentMethodId: null,
    lastSetupError: { ...error, payment_method: serializePaymentMethod(pm) } as Prisma.JsonValue,
  };
  await save(tx, failed);
  return { row: failed, eventIds: [await emitSetupIntent(tx, actor, 'setup_intent.setup_failed', failed)] };
}

/** What a create, update or confirmation gives as its card: `payment_method`, or `payment_method_data` (made now). */
interface GivenCard {
  readonly payment_method?: string;
  readonly payment_method_data?: PaymentMethodDataParam;
}

/** The card `given` names or describes (made now, in `tx`); undefined when it gives neither. */
async function givenPaymentMethod(tx: Tx, ctx: RequestContext, given: GivenCard): Promise<StoredPaymentMethod | undefined> {
  if (given.payment_method_data === undefined) {
    return given.payment_method === undefined ? undefined : resolvePaymentMethod(prismaDb(tx), ctx, given.payment_method, 'payment_method');
  }
  if (given.payment_method !== undefined) throw parametersExclusive('payment_method', 'payment_method_data');
  return createPaymentMethodFromData(prismaDb(tx), ctx, given.payment_method_data, 'setup_intent_invalid_parameter');
}

interface Confirmation {
  readonly card?: GivenCard;
  readonly returnUrl?: string;
  readonly useStripeSdk?: boolean;
}

interface Attempted {
  readonly row: Stored;
  readonly eventIds: string[];
  /** The decline to answer with (402), the attempt's writes kept. */
  readonly declined?: ApiError;
}

const CONFIRMABLE = new Set(['requires_payment_method', 'requires_confirmation', 'requires_action']);

/** Confirms a locked intent: the card's test outcome decides what happens (see the top of this file). */
async function attempt(tx: Tx, ctx: RequestContext, before: Stored, confirmation: Confirmation): Promise<Attempted> {
  const actor = requestActor(ctx);
  if (before.status === 'succeeded') throw unexpectedState('You cannot confirm this SetupIntent because it has already succeeded after being previously confirmed.', before);
  if (!CONFIRMABLE.has(before.status)) throw unexpectedState(`You cannot confirm this SetupIntent because it has a status of ${before.status}.`, before);
  // The customer before the card, as attaching locks them.
  if (before.customerId !== null) await lockCustomer(new TxSql(tx), before.accountId, before.customerId, 'customer');
  const pm =
    (confirmation.card && (await givenPaymentMethod(tx, ctx, confirmation.card))) ??
    (before.paymentMethodId !== null ? await readPaymentMethod(tx, before.paymentMethodId) : undefined);
  if (!pm) {
    throw unexpectedState(
      "You cannot confirm this SetupIntent because it's missing a payment method. Update the SetupIntent with a payment method and then confirm it again.",
      before,
    );
  }
  if (pm.customerId !== null && pm.customerId !== before.customerId) {
    throw invalidRequest(
      before.customerId === null
        ? 'The provided PaymentMethod belongs to a Customer; pass that Customer as `customer` on the SetupIntent to use it.'
        : `The provided PaymentMethod is attached to another Customer than this SetupIntent's (${before.customerId}).`,
      undefined,
      'payment_method',
    );
  }
  if (confirmation.returnUrl !== undefined) checkReturnUrl(confirmation.returnUrl);
  const returnUrl = confirmation.returnUrl ?? before.returnUrl;
  const apm = before.automaticPaymentMethods as { enabled?: boolean; allow_redirects?: string } | null;
  if (apm?.enabled && apm.allow_redirects !== 'never' && returnUrl === null && !confirmation.useStripeSdk) throw invalidRequest(REDIRECTS_NEED_RETURN_URL);
  // A confirmation starts afresh: an open challenge's page stops working.
  await closeAuthentications(prismaDb(tx), before.id, unixSeconds(ctx.deps.clock));
  const row: Stored = { ...before, paymentMethodId: pm.id, returnUrl, latestAttempt: newId('setatt'), lastSetupError: null };
  const outcome = pm.outcome as CardOutcome;
  const declined = attachError(outcome);
  if (declined) {
    const failed = await fail(tx, actor, row, pm, declined.toBody().error);
    const error = new ApiError({
      status: declined.status,
      type: declined.type,
      code: declined.code,
      message: declined.message,
      extra: { ...declined.extra, payment_method: serializePaymentMethod(pm), setup_intent: serializeSetupIntent(failed.row) },
      keepsWrites: true,
    });
    return { ...failed, declined: error };
  }
  if (paymentResult(outcome).status === 'requires_action') {
    await startAuthentication(prismaDb(tx), ctx, { intentType: 'setup_intent', intentId: row.id, returnUrl });
    const waiting: Stored = { ...row, status: 'requires_action' };
    await save(tx, waiting);
    return { row: waiting, eventIds: [await emitSetupIntent(tx, actor, 'setup_intent.requires_action', waiting)] };
  }
  return succeed(tx, actor, row, pm);
}

/** The answer: its events handed to fan-out (added once the operation commits), then the decline if the attempt was one. */
async function answer(ctx: RequestContext, done: Attempted, tx: Tx = ctx.deps.prisma) {
  await handOffEvents(ctx.deps.queues, done.eventIds);
  if (done.declined) throw done.declined;
  return present(tx, ctx.deps, done.row);
}

export async function createSetupIntent(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  if (params.automatic_payment_methods !== undefined && params.allowed_payment_method_types !== undefined) {
    throw parametersExclusive('automatic_payment_methods', 'allowed_payment_method_types');
  }
  if (params.attach_to_self === true && params.customer !== undefined) {
    throw invalidRequest('`attach_to_self` cannot be true when setting up a PaymentMethod for a Customer.', undefined, 'attach_to_self');
  }
  if (params.return_url !== undefined && params.confirm !== true) {
    throw invalidRequest('You can only pass `return_url` when `confirm` is true.', undefined, 'return_url');
  }
  const done = await deps.prisma.$transaction(async (tx): Promise<Attempted> => {
    const customerId = params.customer === undefined ? null : await lockCustomer(new TxSql(tx), caller.accountId, params.customer, 'customer');
    const onBehalfOf = await checkOnBehalfOf(tx, ctx, params.on_behalf_of);
    const pm = await givenPaymentMethod(tx, ctx, params);
    const id = newId('seti');
    const clientSecret = `${id}_secret_${randomBase62(25)}`;
    const row: Stored = {
      id,
      accountId: caller.accountId,
      created: unixSeconds(deps.clock),
      status: pm ? 'requires_confirmation' : 'requires_payment_method',
      customerId,
      paymentMethodId: pm?.id ?? null,
      paymentMethodTypes: (params.allowed_payment_method_types as string[] | undefined) ?? ['card'],
      automaticPaymentMethods: automaticPaymentMethodsOf(params) as Prisma.JsonValue,
      paymentMethodOptions: CARD_OPTIONS as Prisma.JsonValue,
      usage: params.usage ?? 'off_session',
      description: params.description ?? null,
      metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      onBehalfOf,
      lastSetupError: null,
      latestAttempt: null,
      returnUrl: null,
      cancellationReason: null,
      clientSecret: await deps.encryption.seal(clientSecret),
    };
    await tx.setupIntent.create({
      data: {
        ...row,
        automaticPaymentMethods: json(row.automaticPaymentMethods),
        paymentMethodOptions: row.paymentMethodOptions as Prisma.InputJsonValue,
        metadata: row.metadata as Prisma.InputJsonValue,
        lastSetupError: Prisma.DbNull,
      },
      select: { id: true },
    });
    const created = await emitSetupIntent(tx, requestActor(ctx), 'setup_intent.created', row);
    if (params.confirm !== true) return { row, eventIds: [created] };
    const confirmed = await attempt(tx, ctx, row, { returnUrl: params.return_url, useStripeSdk: params.use_stripe_sdk });
    return { ...confirmed, eventIds: [created, ...confirmed.eventIds] };
  });
  return answer(ctx, done);
}

export async function retrieveSetupIntent(ctx: RequestContext) {
  const id = ctx.pathParams.setup_intent;
  const row = hasIdShape('seti', id) ? ((await ctx.deps.prisma.setupIntent.findFirst({ where: { id, accountId: ctx.caller.accountId }, select: ROW })) as Stored | null) : null;
  if (!row) throw resourceMissing(NAME, id);
  await checkClientSecret(ctx, row);
  return present(ctx.deps.prisma, ctx.deps, row);
}

/** The public object of one of the caller's SetupIntents (for expansion), or null. */
export async function retrieveSetupIntentObject(ctx: RequestContext, id: string) {
  const row = (await ctx.deps.prisma.setupIntent.findFirst({ where: { id, accountId: ctx.caller.accountId }, select: ROW })) as Stored | null;
  return row ? present(ctx.deps.prisma, ctx.deps, row) : null;
}

const EDITABLE = new Set(['requires_payment_method', 'requires_confirmation', 'requires_action']);

export async function updateSetupIntent(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  if (params.attach_to_self === true && params.customer !== undefined) {
    throw invalidRequest('`attach_to_self` cannot be true when setting up a PaymentMethod for a Customer.', undefined, 'attach_to_self');
  }
  if (updatesAlone(params)) return updateWithoutCard(ctx);
  // A card (found or made through Prisma) and its challenge closed: the ordinary path.
  prismaOf(deps);
  const done = await deps.prisma.$transaction(async (tx): Promise<Attempted> => {
    const before = await lockOwned(tx, caller.accountId, ctx.pathParams.setup_intent);
    const updated = await updatedRow(new TxSql(tx), ctx, before);
    const pm = await givenPaymentMethod(tx, ctx, params);
    // A new payment method waits for a new confirmation: an open challenge is over.
    if (pm !== undefined) await closeAuthentications(prismaDb(tx), before.id, unixSeconds(deps.clock));
    const row: Stored = pm === undefined ? updated : { ...updated, paymentMethodId: pm.id, status: 'requires_confirmation' };
    await save(tx, row);
    // The public API has no setup_intent.updated event.
    return { row, eventIds: [] };
  });
  return answer(ctx, done);
}

/** An update that names no card: the route's one-statement path (sqlOnly), 4 round trips and 1 commit. */
export const updatesAlone = (params: Record<string, any>): boolean => params.payment_method === undefined && params.payment_method_data === undefined;

/** The locked read, then the change as a held write (`deps.write`); no event (the public API has none). */
async function updateWithoutCard(ctx: RequestContext) {
  const { deps, caller } = ctx;
  const id = ctx.pathParams.setup_intent;
  const [before] = hasIdShape('seti', id) ? await deps.sql.query<Stored>(selectOwnedForUpdate(id, caller.accountId)) : [];
  if (!before) throw resourceMissing(NAME, id);
  const row = await updatedRow(deps.sql, ctx, before);
  await deps.write(updateSetupIntentRow(row));
  return presentWith(deps.sql, deps, row);
}

/** The locked intent with what an update changes besides its card: description, metadata, customer, allowed types. */
async function updatedRow(sql: SqlClient, ctx: RequestContext, before: Stored): Promise<Stored> {
  const { params, caller } = ctx;
  const setup = ['customer', 'payment_method', 'payment_method_data', 'allowed_payment_method_types'].filter((p) => params[p] !== undefined);
  // Only its description and metadata change once it succeeded or was canceled.
  if (setup.length > 0 && !EDITABLE.has(before.status)) {
    throw unexpectedState(`You cannot update this SetupIntent's ${setup[0]} because it has a status of ${before.status}.`, before);
  }
  let row: Stored = {
    ...before,
    description: params.description === undefined ? before.description : params.description === '' ? null : params.description,
    metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
  };
  if (params.customer !== undefined) {
    if (before.customerId !== null && before.customerId !== params.customer) {
      throw invalidRequest('You cannot change the customer of a SetupIntent once it has one.', undefined, 'customer');
    }
    row.customerId = await lockCustomer(sql, caller.accountId, params.customer, 'customer');
  }
  if (params.allowed_payment_method_types !== undefined) row = { ...row, paymentMethodTypes: params.allowed_payment_method_types, automaticPaymentMethods: null };
  return row;
}

export async function confirmSetupIntent(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const done = await deps.prisma.$transaction(async (tx) => {
    const before = await lockOwned(tx, caller.accountId, ctx.pathParams.setup_intent);
    await checkClientSecret(ctx, before);
    return attempt(tx, ctx, before, { card: params, returnUrl: params.return_url, useStripeSdk: params.use_stripe_sdk });
  });
  return answer(ctx, done);
}

export async function cancelSetupIntent(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  const done = await deps.prisma.$transaction(async (tx): Promise<Attempted> => {
    const before = await lockOwned(tx, caller.accountId, ctx.pathParams.setup_intent);
    if (!EDITABLE.has(before.status)) {
      throw unexpectedState(
        `You cannot cancel this SetupIntent because it has a status of ${before.status}. Only a SetupIntent with one of the following statuses may be canceled: requires_payment_method, requires_confirmation, requires_action.`,
        before,
      );
    }
    await closeAuthentications(prismaDb(tx), before.id, unixSeconds(deps.clock));
    const row: Stored = { ...before, status: 'canceled', cancellationReason: params.cancellation_reason ?? null };
    await save(tx, row);
    return { row, eventIds: [await emitSetupIntent(tx, requestActor(ctx), 'setup_intent.canceled', row)] };
  });
  return answer(ctx, done);
}

export async function listSetupIntents(ctx: RequestContext) {
  const { params, caller, deps } = ctx;
  const where: Record<string, unknown> = { accountId: caller.accountId };
  if (params.customer !== undefined) where.customerId = params.customer;
  if (params.payment_method !== undefined) where.paymentMethodId = params.payment_method;
  const created = rangeWhere(params.created);
  if (created !== undefined) where.created = created;
  return paginateRows<Stored & { seq: bigint }>({
    params,
    url: '/v1/setup_intents',
    where,
    model: deps.prisma.setupIntent as any,
    objectName: NAME,
    serializeAll: (rows) => Promise.all(rows.map((row) => present(deps.prisma, deps, row))),
  });
}

/**
 * What the challenge's end does to a SetupIntent (the hosted page answered, or it expired): it
 * succeeds with its card (attached, ready off-session) or fails with
 * `setup_intent_authentication_failure`. The redirect back carries `setup_intent`,
 * `setup_intent_client_secret` and `redirect_status`.
 */
export const setupIntentTarget: AuthenticationTarget = {
  async finish(tx, deps, accountId, intentId, result: AuthenticationResult) {
    const before = await lockOwned(tx, accountId, intentId);
    const redirectParams = async (row: Stored) => ({
      setup_intent: row.id,
      setup_intent_client_secret: await deps.encryption.open(row.clientSecret),
      redirect_status: row.status === 'succeeded' ? 'succeeded' : 'failed',
    });
    // Moved on meanwhile (canceled, confirmed again): nothing left to finish.
    if (before.status !== 'requires_action' || before.paymentMethodId === null) return { eventIds: [], redirectParams: await redirectParams(before) };
    const actor = await systemActor(tx, deps, accountId);
    // The customer before the card, as attaching locks them; either may have changed while the challenge was open.
    const customerGone = before.customerId !== null && !(await lockLiveCustomer(new TxSql(tx), accountId, before.customerId));
    const pm = await readPaymentMethod(tx, before.paymentMethodId);
    const failure =
      result !== 'succeeded'
        ? AUTHENTICATION_FAILURE
        : customerGone
          ? { code: 'resource_missing', message: `No such customer: '${before.customerId}'`, type: 'invalid_request_error' }
          : pm.customerId !== null && pm.customerId !== before.customerId
            ? { message: 'The payment method was attached to another customer meanwhile.', type: 'invalid_request_error' }
            : undefined;
    const done = failure ? await fail(tx, actor, before, pm, failure) : await succeed(tx, actor, before, pm);
    return { eventIds: done.eventIds, redirectParams: await redirectParams(done.row) };
  },
};
