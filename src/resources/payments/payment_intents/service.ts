import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId, randomBase62 } from '../../../lib/ids';
import { ApiError, invalidRequest, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import { searchRequest } from '../../../kernel/search';
import { requireOpenedClientSecret } from '../../../kernel/clientSecret';
import type { SqlClient } from '../../../lib/sql';
import { prismaDb, readsItsWrites, type Db } from '../../../kernel/writes';
import { prismaOf } from '../../../kernel/transaction';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { Deps, RequestContext } from '../../../kernel/route';
import { accountApiVersion, automaticCause, emitIn, previousAttributes, requestEventOptions, type EmitOptions, type Tx } from '../../../events/emit';
import type { EventType } from '../../../events/types';
import { handOffEvents } from '../../../events/jobs';
import type { JobSpec } from '../../../lib/queue';
import {
  closeAuthentications,
  pendingNextAction,
  startAuthentication,
  type AuthenticationResult,
  type AuthenticationTarget,
  type ChallengeStarter,
} from '../authentications/service';
import { lockCharge, newBalanceTransactionId, recordCharge, saveCharge, shippingOf, type ChargeAttempt } from '../charges/service';
import { serializeCharge, type ChargeRow } from '../charges/serializer';
import { withChargeHistory, withIntentHistory, type WrittenCharges } from '../charges/history';
import {
  createPaymentMethodFromData,
  loadPaymentMethod,
  lockCustomer,
  resolvePaymentMethod,
  savePaymentMethodSetup,
  type PaymentMethodDataParam,
  type StoredPaymentMethod,
} from '../payment_methods/service';
import { serializePaymentMethod } from '../payment_methods/serializer';
import { authenticationRequiredError, insufficientFundsError, paymentResult, type CardOutcome } from '../payment_methods/testCards';
import { paymentIntentsQueue, settleJob, type PaymentIntentJob } from './jobs';
import { SEARCH, insertIntent, listedRows, searchedRows, selectConnected, selectInvoiceIntentForUpdate, selectOwned, selectOwnedForUpdate, updateIntent } from './queries';
import { serializePaymentIntent, type PaymentIntentObject, type PaymentIntentRow } from './serializer';

// PaymentIntents: the status machine (requires_payment_method → requires_confirmation →
// requires_action → requires_capture / succeeded, or canceled), its charges, 3-D Secure through
// payments/authentications, and the `automatic_async` capture's settlement by the worker
// (pipeline.ts). Every operation that moves an intent locks its row first, so two concurrent
// confirmations of one intent run one after the other: the second meets the first's result.

const NAME = 'payment_intent';

/** The statuses from which each move is allowed, in the public API's order (its error messages list them). */
const CONFIRMABLE = ['requires_confirmation', 'requires_payment_method', 'requires_action'];
const CANCELABLE = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
const UPDATABLE = ['requires_payment_method', 'requires_confirmation', 'requires_action'];
/** What an intent past its payment still lets an update change. */
const ALWAYS_UPDATABLE = new Set(['description', 'metadata', 'expand', 'receipt_email', 'shipping']);

/** The version from which a PaymentIntent created without payment method types takes the Dashboard's (automatic_payment_methods). */
const AUTOMATIC_PAYMENT_METHODS_FROM = '2023-08-16';

/** Where a change's events, jobs and time come from: a request, or a challenge's answer. */
interface Scope {
  /** Its reads and writes: the operation's (held on the one-statement path), or a challenge page's transaction. */
  readonly db: Db;
  readonly deps: Pick<Deps, 'config' | 'encryption' | 'clock'>;
  readonly accountId: string;
  readonly now: number;
  readonly events: EmitOptions;
  readonly eventIds: string[];
  readonly jobs: JobSpec<PaymentIntentJob>[];
  /** Intents made by this request and not written yet: their first save inserts them (one write for create and confirm). */
  readonly unsaved: Set<string>;
  /** The payment methods this request read or made, by id. */
  readonly paymentMethods: Map<string, Stored>;
  /** The payment methods this request made (from a public test id): not written yet on the one-statement path. */
  readonly madePaymentMethods: Set<string>;
  /** The `next_action` of challenges this request started, by intent: shown without reading them back. */
  readonly startedChallenges: Map<string, Record<string, unknown>>;
  /** Intents this request made: every charge of theirs is in `charges`. */
  readonly created: Set<string>;
  /** The charges this request wrote, by intent: older versions' `charges` list is built from them, not read back. */
  readonly charges: Map<string, Map<string, ChargeRow>>;
}

const newScope = (db: Db, deps: Scope['deps'], accountId: string, now: number, events: EmitOptions): Scope => ({
  db,
  deps,
  accountId,
  now,
  events,
  eventIds: [],
  jobs: [],
  unsaved: new Set(),
  paymentMethods: new Map(),
  madePaymentMethods: new Set(),
  startedChallenges: new Map(),
  created: new Set(),
  charges: new Map(),
});

/** Keeps a charge as this request wrote it (see Scope.charges). */
function wroteCharge(scope: Scope, row: ChargeRow): void {
  if (row.paymentIntentId === null) return;
  let mine = scope.charges.get(row.paymentIntentId);
  if (!mine) scope.charges.set(row.paymentIntentId, (mine = new Map()));
  mine.set(row.id, row);
}

const writtenCharges = (scope: Scope, intentId: string): WrittenCharges => ({ rows: scope.charges.get(intentId) ?? new Map(), all: scope.created.has(intentId) });


const requestScope = (ctx: RequestContext): Scope => {
  const now = unixSeconds(ctx.deps.clock);
  return newScope(ctx.deps, ctx.deps, ctx.caller.accountId, now, requestEventOptions(ctx, now));
};

type Stored = StoredPaymentMethod;

/**
 * The object as an operation answers it: the client secret opened, an open challenge's
 * `next_action`; at a `version` before 2022-11-15, its charges for the older shape (charges/history.ts).
 */
export async function presentPaymentIntent(
  sql: SqlClient,
  deps: Pick<Deps, 'config' | 'encryption'>,
  row: PaymentIntentRow,
  version?: string,
  started?: ReadonlyMap<string, Record<string, unknown>>,
  written?: WrittenCharges,
): Promise<PaymentIntentObject> {
  const nextAction = row.status === 'requires_action' ? (started?.get(row.id) ?? (await pendingNextAction(sql, deps, row.id))) : null;
  const object = serializePaymentIntent(row, { clientSecret: await deps.encryption.open(row.clientSecret), nextAction });
  return version === undefined ? object : withIntentHistory(sql, row.accountId, object, version, written);
}

/** The intent's charges for a `version` that shows them: the ones this request wrote as it holds them, earlier ones read. */
function intentHistory(scope: Scope, object: PaymentIntentObject, version: string): Promise<PaymentIntentObject> {
  return withIntentHistory(scope.db.sql, scope.accountId, object, version, writtenCharges(scope, object.id));
}

/**
 * The object as an error body carries it: without the client secret, since failed requests are
 * kept in the clear for their log page (kernel/requestLog.ts).
 */
const errorObject = async (scope: Scope, row: PaymentIntentRow): Promise<PaymentIntentObject> => ({
  ...(await presentPaymentIntent(scope.db.sql, scope.deps, row, undefined, scope.startedChallenges)),
  client_secret: null,
});

/** The object as events carry it: stored in the clear, so without the client secret or the challenge page's URL. */
const eventObject = (row: PaymentIntentRow): PaymentIntentObject => serializePaymentIntent(row, { clientSecret: null, nextAction: null });

async function emitIntent(scope: Scope, type: EventType, row: PaymentIntentRow): Promise<void> {
  const object = await intentHistory(scope, eventObject(row), scope.events.apiVersion);
  scope.eventIds.push(await emitIn(scope.db, type, object, scope.events));
}

// A charge's refunds are read for older versions; a charge this request made has none yet, so held writes read the same.
async function emitCharge(scope: Scope, type: EventType, row: ChargeRow, previous?: Record<string, unknown>): Promise<void> {
  const fresh = row.paymentIntentId !== null && scope.created.has(row.paymentIntentId);
  const object = await withChargeHistory(scope.db.sql, row.accountId, serializeCharge(row), scope.events.apiVersion, fresh);
  scope.eventIds.push(await emitIn(scope.db, type, object, previous ? { ...scope.events, previousAttributes: previous } : scope.events));
}

/**
 * Locks one of the account's intents for the rest of the transaction; null when it has none. An
 * invoice's intent is locked after its invoice (`tx`: the transaction billing writes through, asked
 * for only then), as billing locks them when it charges one.
 */
async function lockIntent(sql: SqlClient, accountId: string, id: string, tx?: () => Tx): Promise<PaymentIntentRow | null> {
  if (!hasIdShape('pi', id)) return null;
  if (tx && invoiceTarget) {
    const [owned] = await sql.query<PaymentIntentRow>(selectOwned(id, accountId));
    if (owned?.invoiceId) await invoiceTarget.lock(tx(), accountId, owned.invoiceId);
  }
  const [row] = await sql.query<PaymentIntentRow & { seq?: bigint }>(selectOwnedForUpdate(id, accountId));
  return row ? withoutSeq(row) : null;
}

const withoutSeq = ({ seq: _seq, ...row }: PaymentIntentRow & { seq?: bigint }): PaymentIntentRow => row;

async function lockOrMissing(ctx: RequestContext, scope: Scope, tx?: () => Tx): Promise<PaymentIntentRow> {
  const id = ctx.pathParams.intent;
  const row = await lockIntent(scope.db.sql, ctx.caller.accountId, id, tx);
  if (!row) throw resourceMissing(NAME, id);
  return row;
}

/** Writes the intent: inserted by its first save when this request made it, else its changed columns (all but its identity and secret). */
async function saveIntent(scope: Pick<Scope, 'db' | 'unsaved'>, row: PaymentIntentRow): Promise<void> {
  await scope.db.write(scope.unsaved.delete(row.id) ? insertIntent(row) : updateIntent(row));
}

/** The public error of an intent in the wrong status for `action`, with the intent in its body. */
async function unexpectedState(scope: Scope, row: PaymentIntentRow, message: string): Promise<ApiError> {
  return new ApiError({
    status: 400,
    code: 'payment_intent_unexpected_state',
    message,
    extra: { payment_intent: await errorObject(scope, row) },
  });
}

const statusList = (statuses: readonly string[]) => statuses.join(', ');

// --- parameters -------------------------------------------------------------------------------

/** The public rules of a statement descriptor (suffix): at most 22 characters, a letter, none of <>\'". */
function checkDescriptor(value: string | undefined, param: string): void {
  if (value === undefined || value === '') return;
  if (value.length > 22) throw invalidRequest('The statement descriptor must be at most 22 characters.', undefined, param);
  if (!/[A-Za-z]/.test(value)) throw invalidRequest('The statement descriptor must contain at least one letter.', undefined, param);
  if (/[<>\\'"*]/.test(value)) throw invalidRequest('The statement descriptor contains one of these invalid characters: < > \\ \' " *', undefined, param);
}

/** Only cards here; the public API refuses `statement_descriptor` for card payments (since 2024-02-01). */
function checkCardDescriptor(params: Record<string, any>): void {
  if (params.statement_descriptor !== undefined && params.statement_descriptor !== '') {
    throw invalidRequest(
      'The `statement_descriptor` parameter is not supported for card charges. For card charges, set `statement_descriptor_suffix` instead.',
      undefined,
      'statement_descriptor',
    );
  }
  checkDescriptor(params.statement_descriptor_suffix, 'statement_descriptor_suffix');
}

function checkAmount(amount: number, currency: string): void {
  if (currency === 'usd' && amount < 50) throw invalidRequest('Amount must be at least $0.50 usd', 'amount_too_small', 'amount');
  if (amount > 99999999) throw invalidRequest('Amount must be no more than 99999999.', 'amount_too_large', 'amount');
}

/** The payment method types that exist here: cards. */
const SUPPORTED_TYPES: readonly string[] = ['card'];

/** A connected account of the caller's own (a connected account has none): `on_behalf_of`, `transfer_data[destination]`. */
async function checkConnected(sql: SqlClient, ctx: RequestContext, id: string, param: string, kind: string): Promise<void> {
  const missing = resourceMissing(kind, id, param, 400);
  if (!hasIdShape('acct', id)) throw missing;
  if ((await sql.query(selectConnected(id, ctx.caller.accountId))).length === 0) throw missing;
}

/** The Connect fields: validated against the caller's connected accounts and the amount. */
async function checkConnect(sql: SqlClient, ctx: RequestContext, row: PaymentIntentRow): Promise<void> {
  const { params } = ctx;
  if (params.on_behalf_of !== undefined) await checkConnected(sql, ctx, params.on_behalf_of, 'on_behalf_of', 'account');
  const transfer = row.transferData as { destination: string; amount?: number } | null;
  if (params.transfer_data?.destination !== undefined) await checkConnected(sql, ctx, params.transfer_data.destination, 'transfer_data[destination]', 'destination');
  if (transfer?.amount !== undefined && transfer.amount > row.amount) {
    throw invalidRequest('The transfer amount cannot be greater than the amount of the PaymentIntent.', undefined, 'transfer_data[amount]');
  }
  if (row.applicationFeeAmount !== null) {
    const direct = ctx.caller.accountId !== ctx.caller.platformAccountId;
    if (!direct && !transfer) {
      throw invalidRequest(
        'Can only apply an application_fee_amount when the PaymentIntent is attempting a direct payment (using an OAuth key or Stripe-Account header) or destination payment (using `transfer_data[destination]`).',
        undefined,
        'application_fee_amount',
      );
    }
    if (row.applicationFeeAmount > row.amount) {
      throw invalidRequest('The application fee amount cannot be greater than the amount of the PaymentIntent.', undefined, 'application_fee_amount');
    }
  }
}

/** A payment method the intent may charge: attached to its customer, or to no one. */
async function usablePaymentMethod(scope: Scope, ctx: RequestContext, id: string, customerId: string | null): Promise<Stored> {
  const pm = await resolvePaymentMethod(scope.db, ctx, id, 'payment_method');
  if (pm.customerId !== null && pm.customerId !== customerId) {
    throw invalidRequest(
      customerId === null
        ? `The provided PaymentMethod (${pm.id}) is attached to a Customer. Please provide that Customer as the PaymentIntent's customer.`
        : `The PaymentMethod provided (${pm.id}) does not belong to the Customer (${customerId}). Please use a PaymentMethod attached to this Customer.`,
      undefined,
      'payment_method',
    );
  }
  // A public test id made a fresh card just now.
  if (pm.id !== id) scope.madePaymentMethods.add(pm.id);
  scope.paymentMethods.set(pm.id, pm);
  return pm;
}

/**
 * The card a change names (`payment_method`) or describes (`payment_method_data`, made now, in the
 * request's writes as a `pm_card_…` id's card is); undefined when it gives neither.
 */
async function givenPaymentMethod(scope: Scope, ctx: RequestContext, params: Record<string, any>, customerId: string | null): Promise<Stored | undefined> {
  const data = params.payment_method_data as PaymentMethodDataParam | undefined;
  if (data === undefined) return params.payment_method === undefined ? undefined : usablePaymentMethod(scope, ctx, params.payment_method, customerId);
  if (params.payment_method !== undefined) throw parametersExclusive('payment_method', 'payment_method_data');
  const pm = await createPaymentMethodFromData(scope.db, ctx, data, 'payment_intent_invalid_parameter');
  scope.madePaymentMethods.add(pm.id);
  scope.paymentMethods.set(pm.id, pm);
  return pm;
}

// --- card options -----------------------------------------------------------------------------

/**
 * What `payment_method_options` keeps: `card` as shown (`request_incremental_authorization`, the
 * only option read here), and the count of incremental authorizations made, which isn't shown.
 */
interface StoredOptions {
  card?: { request_incremental_authorization?: string };
  incrementalAuthorizations?: number;
}

const optionsOf = (row: Pick<PaymentIntentRow, 'paymentMethodOptions'>): StoredOptions => (row.paymentMethodOptions ?? {}) as StoredOptions;

const incrementalOption = (row: Pick<PaymentIntentRow, 'paymentMethodOptions'>): string | undefined => optionsOf(row).card?.request_incremental_authorization;

/** `payment_method_options[card][request_incremental_authorization]` applied to what the intent keeps. */
function withCardOptions(current: Prisma.JsonValue, param: { card?: { request_incremental_authorization?: string } } | undefined): Prisma.JsonValue {
  const asked = param?.card?.request_incremental_authorization;
  if (asked === undefined) return current;
  const stored = (current ?? {}) as StoredOptions;
  return { ...stored, card: { ...stored.card, request_incremental_authorization: asked } } as Prisma.JsonValue;
}

/** The public API's limit of incremental authorization attempts per PaymentIntent. */
const MAX_INCREMENTAL_AUTHORIZATIONS = 10;

// --- the payment attempt ----------------------------------------------------------------------

/** What a confirmation asks of the attempt. */
interface AttemptOptions {
  readonly offSession: boolean;
  readonly errorOnRequiresAction: boolean;
  /** An invoice's off-session payment asks its customer to authenticate rather than failing (invoice.payment_action_required). */
  readonly challengeOffSession?: boolean;
}

/** How a payment goes once the customer authenticated it: 4000008260003178 declines then. */
const authenticatedResult = (pm: Stored): 'succeeds' | ApiError =>
  pm.outcome === 'authentication_then_insufficient_funds' ? insufficientFundsError() : 'succeeds';

/** How a payment with this card goes before any authentication. */
function attemptResult(pm: Pick<Stored, 'outcome' | 'offSessionReady'>, options: AttemptOptions): 'succeeds' | 'authenticate' | ApiError {
  const outcome = pm.outcome as CardOutcome;
  const needsAuthentication =
    outcome === 'authentication_required' ||
    outcome === 'authentication_then_insufficient_funds' ||
    (outcome === 'authentication_unless_setup' && !(options.offSession && pm.offSessionReady));
  if (needsAuthentication) return !options.challengeOffSession && (options.offSession || options.errorOnRequiresAction) ? authenticationRequiredError() : 'authenticate';
  const result = paymentResult(outcome === 'authentication_unless_setup' ? 'succeeds' : outcome);
  return result.status === 'declined' ? result.error : 'succeeds';
}

/** Saves the card to the intent's customer for later payments (`setup_future_usage`), as the public API does on success. */
async function setUpForFuture(scope: Scope, row: PaymentIntentRow, pm: Stored): Promise<void> {
  if (row.setupFutureUsage === null || row.customerId === null) return;
  const offSession = row.setupFutureUsage === 'off_session';
  // A card made by this request is only inserted with the rest on the one-statement path: an update can't reach it there.
  if (scope.madePaymentMethods.has(pm.id)) readsItsWrites(scope.db);
  if (pm.customerId === null) {
    await savePaymentMethodSetup(scope.db, pm, row.customerId, offSession || pm.offSessionReady);
    scope.eventIds.push(await emitIn(scope.db, 'payment_method.attached', serializePaymentMethod({ ...pm, customerId: row.customerId }), scope.events));
  } else if (offSession && !pm.offSessionReady) {
    await savePaymentMethodSetup(scope.db, pm, pm.customerId, true);
  }
}

/** Due time (unix seconds) and delay of an `automatic_async` capture's settlement. */
function settlementDue(scope: Scope): { dueAt: number; delayMs: number } {
  const nowMs = scope.deps.clock.nowMs();
  const dueAt = Math.ceil((nowMs + scope.deps.config.asyncCaptureDelayMs) / 1000);
  return { dueAt, delayMs: Math.max(0, dueAt * 1000 - nowMs) };
}

/**
 * Charges the intent's card (its challenge passed, or none was needed): an approved charge
 * leaves the intent succeeded (requires_capture for manual captures), a decline sends it back
 * to requires_payment_method with `last_payment_error`; answers the decline's 402 to throw.
 */
async function charge(scope: Scope, row: PaymentIntentRow, pm: Stored, result: 'succeeds' | ApiError, authenticated: boolean): Promise<{ row: PaymentIntentRow; error?: ApiError }> {
  const declined = result instanceof ApiError ? result : null;
  const manual = row.captureMethod === 'manual';
  const asynchronous = row.captureMethod === 'automatic_async';
  const attempt: ChargeAttempt = {
    accountId: scope.accountId,
    created: scope.now,
    amount: row.amount,
    currency: row.currency,
    paymentIntentId: row.id,
    customerId: row.customerId,
    description: row.description,
    receiptEmail: row.receiptEmail,
    statementDescriptorSuffix: row.statementDescriptorSuffix,
    shipping: row.shipping,
    metadata: row.metadata as Metadata,
    onBehalfOf: row.onBehalfOf,
    transferData: row.transferData,
    transferGroup: row.transferGroup,
    applicationFeeAmount: row.applicationFeeAmount,
    invoiceId: row.invoiceId,
    paymentMethod: pm,
    authenticated,
    decline: declined
      ? { code: declined.code ?? 'card_declined', declineCode: String(declined.extra?.decline_code ?? declined.code), message: declined.message }
      : null,
    capture: !manual,
    settleNow: !asynchronous,
    incrementalAuthorization: incrementalOption(row) === undefined ? undefined : incrementalOption(row) === 'if_available',
  };
  const chargeRow = await recordCharge(scope.db, attempt);
  wroteCharge(scope, chargeRow);
  if (declined) {
    const error = {
      charge: chargeRow.id,
      code: declined.code,
      decline_code: declined.extra?.decline_code,
      doc_url: declined.toBody().error.doc_url,
      message: declined.message,
      payment_method: serializePaymentMethod(pm),
      type: 'card_error',
    };
    const failed: PaymentIntentRow = { ...row, status: 'requires_payment_method', paymentMethodId: null, latestChargeId: chargeRow.id, lastPaymentError: error as unknown as Prisma.JsonValue, dueAt: null };
    await saveIntent(scope, failed);
    await emitCharge(scope, 'charge.failed', chargeRow);
    await emitIntent(scope, 'payment_intent.payment_failed', failed);
    const body = { charge: chargeRow.id, decline_code: declined.extra?.decline_code, payment_intent: await errorObject(scope, failed), payment_method: serializePaymentMethod(pm) };
    return {
      row: failed,
      error: new ApiError({ status: 402, type: 'card_error', code: declined.code, message: declined.message, extra: body, keepsWrites: true }),
    };
  }
  let after: PaymentIntentRow = { ...row, latestChargeId: chargeRow.id, lastPaymentError: null, paymentMethodId: pm.id };
  if (manual) {
    after = { ...after, status: 'requires_capture', amountCapturable: row.amount };
  } else {
    after = { ...after, status: 'succeeded', amountReceived: row.amount, amountCapturable: 0 };
    if (asynchronous) {
      const { dueAt, delayMs } = settlementDue(scope);
      after = { ...after, dueAt };
      scope.jobs.push(settleJob(row.id, dueAt, delayMs));
    }
  }
  await saveIntent(scope, after);
  await setUpForFuture(scope, after, pm);
  await emitCharge(scope, 'charge.succeeded', chargeRow);
  await emitIntent(scope, manual ? 'payment_intent.amount_capturable_updated' : 'payment_intent.succeeded', after);
  return { row: after };
}

/** The confirmation itself, on a locked intent whose parameters are applied. */
async function attempt(scope: Scope, ctx: ChallengeStarter, row: PaymentIntentRow, options: AttemptOptions): Promise<{ row: PaymentIntentRow; error?: ApiError }> {
  const pm = scope.paymentMethods.get(row.paymentMethodId!) ?? (await loadPaymentMethod(scope.db.sql, row.paymentMethodId!));
  // A manually confirmed intent whose customer authenticated this card: charged without asking again.
  if ((row.nextAction as { authenticated?: string } | null)?.authenticated === pm.id) {
    return charge(scope, { ...row, nextAction: null }, pm, authenticatedResult(pm), true);
  }
  const result = attemptResult(pm, options);
  if (result === 'authenticate') {
    // The page's URL is shown from the challenge's sealed token (pendingNextAction), never stored in the clear.
    scope.startedChallenges.set(row.id, await startAuthentication(scope.db, ctx, { intentType: 'payment_intent', intentId: row.id, returnUrl: row.returnUrl }));
    const after: PaymentIntentRow = { ...row, status: 'requires_action', lastPaymentError: null, nextAction: null };
    await saveIntent(scope, after);
    await emitIntent(scope, 'payment_intent.requires_action', after);
    return { row: after };
  }
  // An intent this request made has no challenge to end.
  if (!scope.unsaved.has(row.id)) await closeAuthentications(scope.db, row.id, scope.now);
  return charge(scope, { ...row, nextAction: null }, pm, result, false);
}

const REDIRECT_URL_REQUIRED =
  'A `return_url` must be specified because this Payment Intent is configured to automatically accept the payment methods enabled in the Dashboard, some of which may require a full page redirect to succeed. If you do not want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and `automatic_payment_methods[allow_redirects]` to `never` when creating Setup Intents and Payment Intents.';

/** Confirms a locked intent with the confirmation's parameters (`confirm` and `create(confirm=true)` alike). */
async function confirmLocked(scope: Scope, ctx: RequestContext, before: PaymentIntentRow, params: Record<string, any>): Promise<{ row: PaymentIntentRow; error?: ApiError }> {
  if (before.status === 'succeeded') {
    throw await unexpectedState(scope, before, 'You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.');
  }
  if (!CONFIRMABLE.includes(before.status)) {
    throw await unexpectedState(
      scope,
      before,
      `You cannot confirm this PaymentIntent because it has a status of ${before.status}. Only a PaymentIntent with one of the following statuses may be confirmed: ${statusList(CONFIRMABLE)}.`,
    );
  }
  let row: PaymentIntentRow = { ...before };
  const given = await givenPaymentMethod(scope, ctx, params, row.customerId);
  if (given !== undefined) row.paymentMethodId = given.id;
  if (params.return_url !== undefined) row.returnUrl = params.return_url;
  if (params.receipt_email !== undefined) row.receiptEmail = params.receipt_email === '' ? null : params.receipt_email;
  if (params.shipping !== undefined) row.shipping = shippingOf(params.shipping, row.shipping) as Prisma.JsonValue;
  if (params.setup_future_usage !== undefined) row.setupFutureUsage = params.setup_future_usage === '' ? null : params.setup_future_usage;
  if (params.capture_method !== undefined) row.captureMethod = params.capture_method;
  row.paymentMethodOptions = withCardOptions(row.paymentMethodOptions, params.payment_method_options);
  if (row.paymentMethodId === null) {
    throw await unexpectedState(
      scope,
      before,
      "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.",
    );
  }
  const automatic = row.automaticPaymentMethods as { enabled?: boolean; allow_redirects?: string } | null;
  // Stripe.js (`use_stripe_sdk`) handles the next action itself: no return_url needed.
  if (automatic?.enabled && automatic.allow_redirects !== 'never' && !row.returnUrl && params.use_stripe_sdk !== true) throw invalidRequest(REDIRECT_URL_REQUIRED, undefined, 'return_url');
  return attempt(scope, ctx, row, { offSession: params.off_session === true || params.off_session === 'one_off' || params.off_session === 'recurring', errorOnRequiresAction: params.error_on_requires_action === true });
}

/** After the transaction: the events to fan-out and the settlement jobs. */
async function afterCommit(deps: Pick<Deps, 'queues'>, scope: Pick<Scope, 'eventIds' | 'jobs'>): Promise<void> {
  if (scope.eventIds.length > 0) await handOffEvents(deps.queues, scope.eventIds);
  if (scope.jobs.length > 0) await deps.queues.add(paymentIntentsQueue, scope.jobs);
}

/** Runs a locked change; a decline's writes stand (`keepsWrites`) and its 402 is the answer. */
async function run(ctx: RequestContext, work: (scope: Scope) => Promise<{ row: PaymentIntentRow; error?: ApiError }>): Promise<PaymentIntentObject> {
  const scope = requestScope(ctx);
  const { row, error } = await work(scope);
  // Within the operation's transaction (every route here is `sqlOnly`): jobs are added once it committed.
  await afterCommit(ctx.deps, scope);
  if (error) throw error;
  return presentPaymentIntent(scope.db.sql, ctx.deps, row, ctx.apiVersion, scope.startedChallenges, writtenCharges(scope, row.id));
}

// --- operations -------------------------------------------------------------------------------

/** The PaymentIntent's payment method types as sent and as worked out: `allowed` (filtered to the ones here, cards), or the Dashboard's less `excluded`. */
function paymentMethodTypesOf(allowed: readonly string[] | null, excluded: readonly string[] | null): string[] {
  const types = (allowed ?? SUPPORTED_TYPES).filter((type) => SUPPORTED_TYPES.includes(type) && !(excluded ?? []).includes(type));
  if (types.length === 0) {
    const param = allowed ? 'allowed_payment_method_types' : 'excluded_payment_method_types';
    throw invalidRequest(`None of the payment method types this PaymentIntent allows are available: only card payments are supported here.`, 'payment_intent_invalid_parameter', param);
  }
  return types;
}

/** Today's API takes no `payment_method_types` (its request change maps the older versions' onto `allowed_payment_method_types`). */
function refuseExplicitTypes(params: Record<string, any>): void {
  if (params.payment_method_types !== undefined) {
    throw invalidRequest(
      'The `payment_method_types` parameter is no longer supported on this API version. Use dynamic payment methods, `excluded_payment_method_types` or `allowed_payment_method_types` instead.',
      'payment_method_types_no_longer_supported',
      'payment_method_types',
    );
  }
}

export async function createPaymentIntent(ctx: RequestContext) {
  const { params } = ctx;
  const currency = String(params.currency).toLowerCase();
  refuseExplicitTypes(params);
  checkAmount(params.amount, currency);
  checkCardDescriptor(params);
  if (params.allowed_payment_method_types !== undefined) {
    for (const other of ['automatic_payment_methods', 'excluded_payment_method_types'] as const) {
      if (params[other] !== undefined) throw parametersExclusive('allowed_payment_method_types', other);
    }
  }
  if (params.confirm !== true) {
    // `off_session` and `error_on_requires_action` are read only by a confirmation; a return URL would be kept for one.
    if (params.return_url !== undefined) throw invalidRequest('You may only specify `return_url` when `confirm` is `true`.', undefined, 'return_url');
  }
  const allowed: string[] | null = params.allowed_payment_method_types ?? null;
  const excluded: string[] | null = params.excluded_payment_method_types ?? null;
  const paymentMethodTypes = paymentMethodTypesOf(allowed, excluded);
  const automatic = params.automatic_payment_methods as { enabled: boolean; allow_redirects?: string } | undefined;
  // Without `allowed_payment_method_types`, the Dashboard's payment methods (cards here; elsewhere
  // some redirect); before 2023-08-16, cards only unless automatic_payment_methods said otherwise.
  const dynamic = allowed === null && automatic === undefined && ctx.apiVersion >= AUTOMATIC_PAYMENT_METHODS_FROM;
  const automaticPaymentMethods = automatic?.enabled || dynamic ? { allow_redirects: automatic?.allow_redirects ?? 'always', enabled: true } : null;
  return run(ctx, async (scope) => {
    if (params.customer !== undefined) await lockCustomer(scope.db.sql, ctx.caller.accountId, params.customer, 'customer');
    const id = newId('pi');
    const clientSecret = `${id}_secret_${randomBase62(25)}`;
    const transferData = params.transfer_data
      ? { ...(params.transfer_data.amount !== undefined ? { amount: params.transfer_data.amount } : {}), destination: params.transfer_data.destination }
      : null;
    let row: PaymentIntentRow = {
      id,
      accountId: ctx.caller.accountId,
      created: scope.now,
      amount: params.amount,
      currency,
      status: 'requires_payment_method',
      captureMethod: params.capture_method ?? 'automatic_async',
      confirmationMethod: params.confirmation_method ?? 'automatic',
      customerId: params.customer ?? null,
      paymentMethodId: null,
      paymentMethodTypes,
      allowedPaymentMethodTypes: allowed,
      excludedPaymentMethodTypes: excluded,
      automaticPaymentMethods: automaticPaymentMethods,
      paymentMethodOptions: withCardOptions({}, params.payment_method_options),
      setupFutureUsage: params.setup_future_usage ?? null,
      description: params.description ?? null,
      receiptEmail: params.receipt_email ?? null,
      statementDescriptor: null,
      statementDescriptorSuffix: params.statement_descriptor_suffix || null,
      shipping: shippingOf(params.shipping, null) as Prisma.JsonValue,
      metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
      onBehalfOf: params.on_behalf_of ?? null,
      transferData,
      transferGroup: params.transfer_group ?? null,
      applicationFeeAmount: params.application_fee_amount ?? null,
      amountCapturable: 0,
      amountReceived: 0,
      latestChargeId: null,
      lastPaymentError: null,
      nextAction: null,
      returnUrl: null,
      cancellationReason: null,
      canceledAt: null,
      clientSecret: await ctx.deps.encryption.seal(clientSecret),
      invoiceId: null,
      dueAt: null,
    };
    await checkConnect(scope.db.sql, ctx, row);
    const given = await givenPaymentMethod(scope, ctx, params, row.customerId);
    if (given !== undefined) {
      row.paymentMethodId = given.id;
      row.status = 'requires_confirmation';
    }
    // Written by its first save: now, or once confirmed (the intent and its charge in one write each).
    scope.unsaved.add(id);
    scope.created.add(id);
    await emitIntent(scope, 'payment_intent.created', row);
    if (params.confirm !== true) {
      await saveIntent(scope, row);
      return { row };
    }
    return confirmLocked(scope, ctx, row, { ...params, payment_method: undefined, payment_method_data: undefined });
  });
}

const PAYMENT_INTENT = 'payment_intent';

export async function retrievePaymentIntent(ctx: RequestContext) {
  const id = ctx.pathParams.intent;
  const object = await retrievePaymentIntentObject(ctx, id);
  if (!object) throw resourceMissing(NAME, id);
  requireOpenedClientSecret(ctx, object.client_secret, PAYMENT_INTENT);
  return object;
}

/** The public object of one of the caller's intents (for expansion), or null. */
export async function retrievePaymentIntentObject(ctx: RequestContext, id: string) {
  if (!hasIdShape('pi', id)) return null;
  const [row] = await ctx.deps.sql.query<PaymentIntentRow & { seq: bigint }>(selectOwned(id, ctx.caller.accountId));
  return row ? presentPaymentIntent(ctx.deps.sql, ctx.deps, withoutSeq(row), ctx.apiVersion) : null;
}

export async function updatePaymentIntent(ctx: RequestContext) {
  const { params } = ctx;
  return run(ctx, async (scope) => {
    const before = await lockOrMissing(ctx, scope);
    // An invoice's intent follows its invoice (amount, card, customer): only what never moves the payment changes.
    const fixed = before.invoiceId === null ? undefined : Object.keys(params).find((k) => !ALWAYS_UPDATABLE.has(k));
    if (fixed !== undefined) throw invalidRequest(`This PaymentIntent pays invoice ${before.invoiceId}: \`${fixed}\` can't be updated directly. Pay or void the invoice instead.`, undefined, fixed);
    if (!UPDATABLE.includes(before.status)) {
      const refused = Object.keys(params).find((k) => !ALWAYS_UPDATABLE.has(k));
      if (refused !== undefined) {
        throw await unexpectedState(
          scope,
          before,
          `You cannot update this PaymentIntent because it has a status of ${before.status}. Updates are only allowed when the PaymentIntent has one of the following statuses: ${statusList(UPDATABLE)}.`,
        );
      }
    }
    refuseExplicitTypes(params);
    checkCardDescriptor(params);
    const row: PaymentIntentRow = { ...before };
    const text = (value: string | undefined, current: string | null) => (value === undefined ? current : value === '' ? null : value);
    if (params.amount !== undefined) row.amount = params.amount;
    if (params.currency !== undefined) row.currency = String(params.currency).toLowerCase();
    if (params.amount !== undefined || params.currency !== undefined) checkAmount(row.amount, row.currency);
    if (params.customer !== undefined) {
      await lockCustomer(scope.db.sql, ctx.caller.accountId, params.customer, 'customer');
      row.customerId = params.customer;
    }
    row.description = text(params.description, row.description);
    row.receiptEmail = text(params.receipt_email, row.receiptEmail);
    row.statementDescriptorSuffix = text(params.statement_descriptor_suffix, row.statementDescriptorSuffix);
    row.transferGroup = text(params.transfer_group, row.transferGroup);
    if (params.setup_future_usage !== undefined) row.setupFutureUsage = params.setup_future_usage === '' ? null : params.setup_future_usage;
    if (params.capture_method !== undefined) row.captureMethod = params.capture_method;
    row.paymentMethodOptions = withCardOptions(row.paymentMethodOptions, params.payment_method_options);
    if (params.allowed_payment_method_types !== undefined || params.excluded_payment_method_types !== undefined) {
      if (params.allowed_payment_method_types !== undefined) row.allowedPaymentMethodTypes = params.allowed_payment_method_types;
      if (params.excluded_payment_method_types !== undefined) row.excludedPaymentMethodTypes = params.excluded_payment_method_types;
      if (row.allowedPaymentMethodTypes !== null && row.excludedPaymentMethodTypes !== null) throw parametersExclusive('allowed_payment_method_types', 'excluded_payment_method_types');
      row.paymentMethodTypes = paymentMethodTypesOf(row.allowedPaymentMethodTypes, row.excludedPaymentMethodTypes);
      if (row.allowedPaymentMethodTypes !== null) row.automaticPaymentMethods = null;
    }
    if (params.shipping !== undefined) row.shipping = shippingOf(params.shipping, row.shipping) as Prisma.JsonValue;
    if (params.application_fee_amount !== undefined) row.applicationFeeAmount = params.application_fee_amount === '' ? null : params.application_fee_amount;
    if (params.transfer_data?.amount !== undefined) {
      if (row.transferData === null) throw invalidRequest('This PaymentIntent has no `transfer_data[destination]`.', undefined, 'transfer_data[amount]');
      row.transferData = { ...(row.transferData as object), amount: params.transfer_data.amount };
    }
    row.metadata = applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined);
    await checkConnect(scope.db.sql, ctx, row);
    if (params.payment_method === '' && params.payment_method_data === undefined) {
      row.paymentMethodId = null;
    } else if (params.payment_method !== undefined || params.payment_method_data !== undefined) {
      row.paymentMethodId = (await givenPaymentMethod(scope, ctx, params, row.customerId))!.id;
    } else if (params.customer !== undefined && row.paymentMethodId !== null) {
      const pm = await loadPaymentMethod(scope.db.sql, row.paymentMethodId);
      if (pm.customerId !== null && pm.customerId !== row.customerId) row.paymentMethodId = null;
    }
    const newCard = params.payment_method !== undefined || params.payment_method_data !== undefined;
    if (UPDATABLE.includes(before.status) && (newCard || params.amount !== undefined || params.currency !== undefined)) {
      // A new card or amount needs a new confirmation; an open challenge no longer applies.
      row.status = row.paymentMethodId === null ? 'requires_payment_method' : 'requires_confirmation';
      if (before.status === 'requires_action') await closeAuthentications(scope.db, row.id, scope.now);
    }
    await saveIntent(scope, row);
    return { row };
  });
}

export async function confirmPaymentIntent(ctx: RequestContext) {
  const { params } = ctx;
  return run(ctx, async (scope) => {
    // An invoice's intent tells billing how it went, which billing writes through Prisma (asked before any write).
    const before = await lockOrMissing(ctx, scope, () => prismaOf(ctx.deps));
    requireOpenedClientSecret(ctx, await ctx.deps.encryption.open(before.clientSecret), PAYMENT_INTENT);
    const tx = before.invoiceId === null ? null : prismaOf(ctx.deps);
    const result = await confirmLocked(scope, ctx, before, params);
    if (tx) await tellInvoice(scope, tx, ctx.deps, result.row);
    return result;
  });
}

export async function capturePaymentIntent(ctx: RequestContext) {
  const { params } = ctx;
  return run(ctx, async (scope) => {
    const before = await lockOrMissing(ctx, scope);
    if (before.status !== 'requires_capture') {
      throw await unexpectedState(
        scope,
        before,
        `This PaymentIntent could not be captured because it has a status of ${before.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
      );
    }
    const amount: number = params.amount_to_capture ?? before.amountCapturable;
    if (amount > before.amountCapturable) {
      throw invalidRequest(`The amount to capture (${amount}) must be less than or equal to the amount capturable (${before.amountCapturable}).`, 'amount_too_large', 'amount_to_capture');
    }
    checkDescriptor(params.statement_descriptor_suffix, 'statement_descriptor_suffix');
    if (params.statement_descriptor !== undefined) checkCardDescriptor(params);
    const fee = params.application_fee_amount ?? before.applicationFeeAmount;
    if (fee !== null && fee > amount) throw invalidRequest('The application fee amount cannot be greater than the amount captured.', undefined, 'application_fee_amount');
    const chargeBefore = await lockCharge(scope.db.sql, scope.accountId, before.latestChargeId!);
    if (!chargeBefore) throw new Error(`payment intent ${before.id} has no charge to capture`);
    const row: PaymentIntentRow = {
      ...before,
      status: 'succeeded',
      amountReceived: amount,
      amountCapturable: 0,
      applicationFeeAmount: fee,
      metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
      statementDescriptorSuffix: params.statement_descriptor_suffix ?? before.statementDescriptorSuffix,
    };
    // The uncaptured rest of the authorization is released, which the charge shows as refunded.
    const captured: ChargeRow = {
      ...chargeBefore,
      captured: true,
      amountCaptured: amount,
      amountRefunded: chargeBefore.amount - amount,
      applicationFeeAmount: fee,
      balanceTransaction: newBalanceTransactionId(),
    };
    await saveCharge(scope.db, captured);
    wroteCharge(scope, captured);
    await saveIntent(scope, row);
    await emitCharge(scope, 'charge.captured', captured);
    await emitIntent(scope, 'payment_intent.succeeded', row);
    return { row };
  });
}

/**
 * `increment_authorization`: a manual capture's authorization raised to `amount` (more than it
 * is), as the public API gates it: `requires_capture`, confirmed with
 * `request_incremental_authorization=if_available` on a card whose charge says `available`, at
 * most 10 times. The intent and its charge show the new amount; `amount_capturable_updated`.
 */
export async function incrementAuthorization(ctx: RequestContext) {
  const { params } = ctx;
  return run(ctx, async (scope) => {
    const before = await lockOrMissing(ctx, scope);
    if (before.status !== 'requires_capture') {
      throw await unexpectedState(
        scope,
        before,
        `This PaymentIntent's authorization could not be incremented because it has a status of ${before.status}. Only a PaymentIntent with one of the following statuses may be incremented: requires_capture.`,
      );
    }
    const chargeBefore = await lockCharge(scope.db.sql, scope.accountId, before.latestChargeId!);
    if (!chargeBefore) throw new Error(`payment intent ${before.id} has no charge to increment`);
    const card = (chargeBefore.paymentMethodDetails as { card?: { incremental_authorization?: { status?: string } } } | null)?.card;
    if (card?.incremental_authorization?.status !== 'available') {
      throw invalidRequest(
        incrementalOption(before) === 'if_available'
          ? 'This PaymentIntent is not eligible for incremental authorizations: its card does not support them (only Visa, Mastercard and Discover do).'
          : 'This PaymentIntent is not eligible for incremental authorizations: it must be confirmed with `payment_method_options[card][request_incremental_authorization]=if_available`.',
        undefined,
      );
    }
    const count = optionsOf(before).incrementalAuthorizations ?? 0;
    if (count >= MAX_INCREMENTAL_AUTHORIZATIONS) {
      throw invalidRequest(`This PaymentIntent has reached the maximum of ${MAX_INCREMENTAL_AUTHORIZATIONS} incremental authorization attempts.`, undefined);
    }
    const amount: number = params.amount;
    if (amount <= before.amount) {
      throw invalidRequest(`The amount (${amount}) must be greater than the amount currently authorized (${before.amount}).`, undefined, 'amount');
    }
    checkAmount(amount, before.currency);
    checkCardDescriptor(params);
    const row: PaymentIntentRow = {
      ...before,
      amount,
      amountCapturable: amount,
      description: params.description === undefined ? before.description : params.description === '' ? null : params.description,
      metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
      applicationFeeAmount: params.application_fee_amount ?? before.applicationFeeAmount,
      transferData: params.transfer_data?.amount === undefined ? before.transferData : { ...(before.transferData as object), amount: params.transfer_data.amount },
      paymentMethodOptions: { ...optionsOf(before), incrementalAuthorizations: count + 1 } as Prisma.JsonValue,
    };
    if (params.transfer_data?.amount !== undefined && before.transferData === null) {
      throw invalidRequest('This PaymentIntent has no `transfer_data[destination]`.', undefined, 'transfer_data[amount]');
    }
    await checkConnect(scope.db.sql, ctx, row);
    const details = chargeBefore.paymentMethodDetails as { card: Record<string, unknown> };
    const charged: ChargeRow = {
      ...chargeBefore,
      amount,
      applicationFeeAmount: row.applicationFeeAmount,
      paymentMethodDetails: { ...details, card: { ...details.card, amount_authorized: amount } } as Prisma.JsonValue,
    };
    await saveCharge(scope.db, charged);
    await saveIntent(scope, row);
    await emitCharge(scope, 'charge.updated', charged, previousAttributes(serializeCharge(chargeBefore), serializeCharge(charged)));
    await emitIntent(scope, 'payment_intent.amount_capturable_updated', row);
    return { row };
  });
}

export async function cancelPaymentIntent(ctx: RequestContext) {
  const { params } = ctx;
  return run(ctx, async (scope) => {
    const before = await lockOrMissing(ctx, scope);
    if (before.invoiceId !== null) {
      throw await unexpectedState(scope, before, `This PaymentIntent pays invoice ${before.invoiceId} and can't be canceled directly: void the invoice instead.`);
    }
    if (!CANCELABLE.includes(before.status)) {
      throw await unexpectedState(
        scope,
        before,
        `You cannot cancel this PaymentIntent because it has a status of ${before.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${statusList(CANCELABLE)}.`,
      );
    }
    const row: PaymentIntentRow = {
      ...before,
      status: 'canceled',
      canceledAt: scope.now,
      cancellationReason: params.cancellation_reason ?? null,
      amountCapturable: 0,
      dueAt: null,
    };
    await closeAuthentications(scope.db, row.id, scope.now);
    if (before.status === 'requires_capture' && before.latestChargeId) {
      // The authorization is released in full: the charge shows it refunded.
      const chargeBefore = await lockCharge(scope.db.sql, scope.accountId, before.latestChargeId);
      if (chargeBefore && !chargeBefore.captured) {
        const released: ChargeRow = { ...chargeBefore, amountRefunded: chargeBefore.amount };
        await saveCharge(scope.db, released);
        wroteCharge(scope, released);
        await emitCharge(scope, 'charge.refunded', released, { amount_refunded: 0, refunded: false });
      }
    }
    await saveIntent(scope, row);
    await emitIntent(scope, 'payment_intent.canceled', row);
    return { row };
  });
}

export async function listPaymentIntents(ctx: RequestContext) {
  const { params, caller, deps } = ctx;
  const page = await paginateSql<PaymentIntentRow & { seq: bigint }>({
    params,
    url: '/v1/payment_intents',
    rows: listedRows(caller.accountId, { customer: params.customer, created: rangeConditions('created', params.created) }),
    db: deps.sql,
    objectName: NAME,
    serialize: (row: PaymentIntentRow) => row,
  });
  return { ...page, data: await Promise.all((page.data as (PaymentIntentRow & { seq: bigint })[]).map((r) => presentPaymentIntent(deps.sql, deps, withoutSeq(r), ctx.apiVersion))) };
}

// --- 3-D Secure -------------------------------------------------------------------------------

/**
 * What an answered (or expired) challenge does to its PaymentIntent: a success charges the card
 * (approved, or declined for 4000008260003178; manual captures wait in requires_capture; a
 * manually confirmed intent waits in requires_confirmation), a failure or expiry sends it back to
 * requires_payment_method with `payment_intent_authentication_failure`.
 */
export const paymentIntentAuthentication: AuthenticationTarget = {
  async finish(tx, deps, accountId, intentId, result: AuthenticationResult) {
    const db = prismaDb(tx);
    const row = await lockIntent(db.sql, accountId, intentId, () => tx);
    if (!row) throw new Error(`no payment intent ${intentId} for its challenge`);
    const now = unixSeconds(deps.clock);
    const apiVersion = await accountApiVersion(tx, accountId, deps.config.defaultApiVersion);
    const scope = newScope(db, deps, accountId, now, { accountId, apiVersion, created: now, cause: automaticCause });
    const redirect = async (status: 'succeeded' | 'failed') => ({
      payment_intent: row.id,
      payment_intent_client_secret: await deps.encryption.open(row.clientSecret),
      redirect_status: status,
    });
    // Only an intent still waiting on its challenge moves (a canceled one stays canceled).
    if (row.status !== 'requires_action') return { eventIds: [], redirectParams: await redirect(row.status === 'succeeded' || row.status === 'requires_capture' ? 'succeeded' : 'failed') };
    const pm = await loadPaymentMethod(db.sql, row.paymentMethodId!);
    if (result !== 'succeeded') {
      const error = {
        code: 'payment_intent_authentication_failure',
        doc_url: 'https://stripe.com/docs/error-codes/payment-intent-authentication-failure',
        message: 'We are unable to authenticate your payment method. Please choose a different payment method and try again.',
        payment_method: serializePaymentMethod(pm),
        type: 'invalid_request_error',
      };
      const failed: PaymentIntentRow = { ...row, status: 'requires_payment_method', paymentMethodId: null, lastPaymentError: error as unknown as Prisma.JsonValue };
      await saveIntent(scope, failed);
      await emitIntent(scope, 'payment_intent.payment_failed', failed);
      await tellInvoice(scope, tx, deps, failed);
      await afterFinish(deps, scope);
      return { eventIds: scope.eventIds, redirectParams: await redirect('failed') };
    }
    if (row.confirmationMethod === 'manual') {
      // Manual confirmation: the server confirms again, and the card is charged then.
      const waiting: PaymentIntentRow = { ...row, status: 'requires_confirmation', nextAction: { authenticated: pm.id } };
      await saveIntent(scope, waiting);
      return { eventIds: [], redirectParams: await redirect('succeeded') };
    }
    const charged = await charge(scope, row, pm, authenticatedResult(pm), true);
    await tellInvoice(scope, tx, deps, charged.row);
    await afterFinish(deps, scope);
    return { eventIds: scope.eventIds, redirectParams: await redirect(charged.error ? 'failed' : 'succeeded') };
  },
};

/** Settlement jobs of a finished challenge: added by the caller's process once the page's transaction commits (or by the reconciler). */
async function afterFinish(deps: Deps, scope: Scope): Promise<void> {
  if (scope.jobs.length > 0) await deps.queues.add(paymentIntentsQueue, scope.jobs);
}

export async function searchPaymentIntents(ctx: RequestContext) {
  const { caller, deps } = ctx;
  const result = await searchRequest<PaymentIntentRow & { seq: bigint }>(ctx, SEARCH, searchedRows(caller.accountId), (row: PaymentIntentRow) => row);
  return { ...result, data: await Promise.all((result.data as (PaymentIntentRow & { seq: bigint })[]).map((r) => presentPaymentIntent(deps.sql, deps, withoutSeq(r), ctx.apiVersion))) };
}

// --- invoices ---------------------------------------------------------------------------------

/** What billing needs of a PaymentIntent an invoice owns. */
export type InvoiceIntent = Pick<PaymentIntentRow, 'id' | 'accountId' | 'invoiceId' | 'status' | 'paymentMethodId' | 'lastPaymentError' | 'amountReceived' | 'setupFutureUsage'>;

/**
 * What billing does when an invoice's PaymentIntent succeeds or fails outside billing's own
 * collection (its customer confirmed it, or answered its challenge): pays the invoice, or records
 * the failure. Billing registers it (payments never imports billing); answers the events written.
 */
export interface InvoicePaymentTarget {
  settled(tx: Tx, deps: Deps, intent: InvoiceIntent, outcome: 'succeeded' | 'failed'): Promise<string[]>;
  /** Locks an invoice and the rows billing locks before it (its lock order: a retry locks the invoice, then its intent). */
  lock(tx: Tx, accountId: string, invoiceId: string): Promise<void>;
}

let invoiceTarget: InvoicePaymentTarget | null = null;

/** Registers billing's target (billing's index does, once). */
export function useInvoicePayments(target: InvoicePaymentTarget): void {
  invoiceTarget = target;
}

/** Tells billing how an invoice's intent went, in the same transaction; an intent still waiting on its customer tells nothing. */
async function tellInvoice(scope: Scope, tx: Tx, deps: Deps, row: PaymentIntentRow): Promise<void> {
  if (row.invoiceId === null || invoiceTarget === null) return;
  const outcome = row.status === 'succeeded' ? 'succeeded' : row.status === 'requires_payment_method' && row.lastPaymentError !== null ? 'failed' : null;
  if (outcome === null) return;
  scope.eventIds.push(...(await invoiceTarget.settled(tx, deps, row, outcome)));
}

/** How an invoice's payment (off-session, asking its customer when the card needs it) goes with this card, known before anything is written. */
export const invoiceAttemptResult = (pm: Pick<Stored, 'outcome' | 'offSessionReady'>): 'succeeds' | 'authenticate' | ApiError => attemptResult(pm, INVOICE_ATTEMPT);

const INVOICE_ATTEMPT: AttemptOptions = { offSession: true, errorOnRequiresAction: false, challengeOffSession: true };

/** An invoice's payment, as billing asks for it. */
export interface InvoicePayment {
  readonly accountId: string;
  readonly invoiceId: string;
  readonly customerId: string;
  readonly amount: number;
  readonly currency: string;
  readonly description: string | null;
  /** The card to charge; null leaves the intent waiting for one. */
  readonly paymentMethodId: string | null;
  /** Charge it now, off-session; false leaves the intent for its customer to confirm (`default_incomplete`). */
  readonly confirm: boolean;
  readonly setupFutureUsage?: 'off_session' | null;
  /** Where a 3-D Secure challenge sends its customer back to (the hosted invoice page); none by default. */
  readonly returnUrl?: string;
  /** Billing time (a test clock's), for the intent and its charge. */
  readonly now: number;
  readonly events: EmitOptions;
  /** The invoice was made in this transaction: it has no intent yet to look for. */
  readonly newInvoice?: boolean;
}

/**
 * Pays `amount` of an invoice through a PaymentIntent (`invoice` set): the invoice's intent still
 * open (after a decline, or waiting on its customer) is confirmed again, else a new one is made;
 * confirming records the charge. A card that needs authentication leaves the intent in
 * requires_action with a challenge its customer answers; a decline sends it back to
 * requires_payment_method with the 402 to answer (`error`).
 */
export async function payInvoiceAmount(
  db: Db,
  deps: ChallengeStarter['deps'],
  payment: InvoicePayment,
): Promise<{ intent: PaymentIntentRow; error?: ApiError; eventIds: string[] }> {
  const scope = newScope(db, deps, payment.accountId, payment.now, payment.events);
  const [open] = payment.newInvoice ? [] : await db.sql.query<PaymentIntentRow & { seq?: bigint }>(selectInvoiceIntentForUpdate(payment.invoiceId, payment.accountId));
  let row: PaymentIntentRow;
  if (open && CONFIRMABLE.includes(open.status)) {
    row = { ...withoutSeq(open), paymentMethodId: payment.paymentMethodId ?? open.paymentMethodId, returnUrl: payment.returnUrl ?? open.returnUrl };
  } else {
    const id = newId('pi');
    row = {
      id,
      accountId: payment.accountId,
      created: payment.now,
      amount: payment.amount,
      currency: payment.currency,
      status: 'requires_payment_method',
      captureMethod: 'automatic',
      confirmationMethod: 'automatic',
      customerId: payment.customerId,
      paymentMethodId: payment.paymentMethodId,
      paymentMethodTypes: [...SUPPORTED_TYPES],
      allowedPaymentMethodTypes: null,
      excludedPaymentMethodTypes: null,
      automaticPaymentMethods: null,
      paymentMethodOptions: {},
      setupFutureUsage: payment.setupFutureUsage ?? null,
      description: payment.description,
      receiptEmail: null,
      statementDescriptor: null,
      statementDescriptorSuffix: null,
      shipping: null,
      metadata: {},
      onBehalfOf: null,
      transferData: null,
      transferGroup: null,
      applicationFeeAmount: null,
      amountCapturable: 0,
      amountReceived: 0,
      latestChargeId: null,
      lastPaymentError: null,
      nextAction: null,
      returnUrl: payment.returnUrl ?? null,
      cancellationReason: null,
      canceledAt: null,
      clientSecret: await deps.encryption.seal(`${id}_secret_${randomBase62(25)}`),
      invoiceId: payment.invoiceId,
      dueAt: null,
    };
    scope.unsaved.add(id);
    scope.created.add(id);
    await emitIntent(scope, 'payment_intent.created', row);
  }
  if (row.paymentMethodId !== null && row.status === 'requires_payment_method') row.status = 'requires_confirmation';
  if (!payment.confirm || row.paymentMethodId === null) {
    await saveIntent(scope, row);
    return { intent: row, eventIds: scope.eventIds };
  }
  const result = await attempt(scope, { deps, caller: { accountId: payment.accountId } }, row, INVOICE_ATTEMPT);
  return { intent: result.row, error: result.error, eventIds: scope.eventIds };
}

/** The opened client secret of one of the account's intents (an open invoice's `confirmation_secret`). */
export async function intentClientSecret(sql: SqlClient, deps: Pick<Deps, 'encryption'>, accountId: string, id: string): Promise<string | null> {
  const [row] = await sql.query<PaymentIntentRow & { seq: bigint }>(selectOwned(id, accountId));
  return row ? deps.encryption.open(row.clientSecret) : null;
}

/** A voided invoice's open PaymentIntent is canceled (`void_invoice`), its challenge closed: it can no longer pay. */
export async function cancelInvoiceIntent(db: Db, deps: ChallengeStarter['deps'], accountId: string, invoiceId: string, now: number, events: EmitOptions): Promise<string[]> {
  const scope = newScope(db, deps, accountId, now, events);
  const [open] = await db.sql.query<PaymentIntentRow & { seq?: bigint }>(selectInvoiceIntentForUpdate(invoiceId, accountId));
  if (!open || !CANCELABLE.includes(open.status) || open.status === 'requires_capture' || open.status === 'processing') return [];
  const row: PaymentIntentRow = { ...withoutSeq(open), status: 'canceled', canceledAt: now, cancellationReason: 'void_invoice', dueAt: null };
  await closeAuthentications(db, row.id, now);
  await saveIntent(scope, row);
  await emitIntent(scope, 'payment_intent.canceled', row);
  return scope.eventIds;
}
