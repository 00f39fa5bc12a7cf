import { randomUUID } from 'node:crypto';
import { unixSeconds } from '../../../lib/clock';
import { hasIdShape, newId } from '../../../lib/ids';
import { TxSql, type SqlClient } from '../../../lib/sql';
import { resourceMissing } from '../../../kernel/errors';
import { paginateSql, rangeConditions } from '../../../kernel/list';
import { searchRequest } from '../../../kernel/search';
import { applyMetadata, type Metadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import { prismaDb, type Db } from '../../../kernel/writes';
import { emit, previousAttributes, requestEventOptions, type Tx } from '../../../events/emit';
import { handOffEvents } from '../../../events/jobs';
import type { StoredPaymentMethod } from '../payment_methods/service';
import { cardChecks, chargeOutcome, type CardOutcome } from '../payment_methods/testCards';
import { SEARCH, insertCharge, listedRows, searchedRows, selectOwned, selectOwnedForUpdate, updateCharge } from './queries';
import { serializeCharge, type ChargeRow } from './serializer';
import { withChargeHistory, withChargesHistory } from './history';

// Charges: made only by a PaymentIntent's confirmation (payment_intents/service.ts calls
// `recordCharge`), then retrieved, listed and updated here. A charge never calls back into its
// PaymentIntent; its `payment_intent` expands through the object registry.

const NAME = 'charge';

/** The statement descriptor a card statement shows: the sandbox's prefix, then the suffix. */
export function calculatedDescriptor(suffix: string | null): string {
  const prefix = 'SANDBANK';
  return (suffix ? `${prefix}* ${suffix}` : prefix).toUpperCase().slice(0, 22);
}

/** What a payment attempt charged: the PaymentIntent's side of the charge. */
export interface ChargeAttempt {
  readonly accountId: string;
  readonly created: number;
  readonly amount: number;
  readonly currency: string;
  readonly paymentIntentId: string;
  readonly customerId: string | null;
  readonly description: string | null;
  readonly receiptEmail: string | null;
  readonly statementDescriptorSuffix: string | null;
  readonly shipping: unknown;
  readonly metadata: Metadata;
  readonly onBehalfOf: string | null;
  readonly transferData: unknown;
  readonly transferGroup: string | null;
  readonly applicationFeeAmount: number | null;
  readonly invoiceId: string | null;
  /** The card charged (its outcome, checks and details). */
  readonly paymentMethod: StoredPaymentMethod;
  /** Whether the customer authenticated it with 3-D Secure. */
  readonly authenticated: boolean;
  /** Null when approved, else the decline's code, decline code and message. */
  readonly decline: { code: string; declineCode: string; message: string } | null;
  /** Captured at once (automatic captures) rather than only authorized (manual). */
  readonly capture: boolean;
  /** Its balance transaction now; null for a decline, an authorization, or an `automatic_async` capture the worker settles. */
  readonly settleNow: boolean;
  /** Asked for (`request_incremental_authorization=if_available`): whether the authorization can be incremented; absent when not asked. */
  readonly incrementalAuthorization?: boolean;
}

/** The brands whose authorizations can be incremented, as the public API lists them. */
const INCREMENTABLE_BRANDS = new Set(['visa', 'mastercard', 'discover']);

/** The card's `payment_method_details` on a charge. */
function cardDetails(attempt: ChargeAttempt): Record<string, unknown> {
  const pm = attempt.paymentMethod;
  const address = (pm.billingDetails as { address?: { line1?: string | null; postal_code?: string | null } | null }).address ?? null;
  return {
    card: {
      amount_authorized: attempt.decline === null ? attempt.amount : null,
      authorization_code: attempt.decline === null ? String(100000 + Math.floor(Math.random() * 900000)) : null,
      brand: pm.brand,
      checks: cardChecks(pm.outcome as CardOutcome, pm.cvcCheck !== null, address),
      country: pm.country,
      exp_month: pm.expMonth,
      exp_year: pm.expYear,
      fingerprint: pm.fingerprint,
      funding: pm.funding,
      installments: null,
      last4: pm.last4,
      mandate: null,
      network: pm.brand,
      network_transaction_id: attempt.decline === null ? randomUUID().replace(/-/g, '').slice(0, 15) : null,
      regulated_status: 'unregulated',
      three_d_secure: attempt.authenticated
        ? {
            authentication_flow: 'challenge',
            electronic_commerce_indicator: '05',
            exemption_indicator: null,
            result: 'authenticated',
            result_reason: null,
            transaction_id: randomUUID(),
            version: '2.2.0',
          }
        : null,
      wallet: null,
      electronic_commerce_indicator: attempt.authenticated ? '05' : null,
      transaction_link_id: null,
      ...(attempt.incrementalAuthorization === undefined
        ? {}
        : {
            incremental_authorization: {
              status: attempt.incrementalAuthorization && attempt.decline === null && !attempt.capture && INCREMENTABLE_BRANDS.has(pm.brand) ? 'available' : 'unavailable',
            },
          }),
    },
    type: 'card',
  };
}

export const newBalanceTransactionId = (): string => newId('txn');

/** Writes the charge of a payment attempt (approved or declined) in `tx`; answers its row. */
export async function recordCharge(db: Db, attempt: ChargeAttempt): Promise<ChargeRow> {
  const approved = attempt.decline === null;
  const captured = approved && attempt.capture;
  const row: ChargeRow = {
    id: newId('ch'),
    accountId: attempt.accountId,
    created: attempt.created,
    amount: attempt.amount,
    amountCaptured: captured ? attempt.amount : 0,
    amountRefunded: 0,
    currency: attempt.currency,
    status: approved ? 'succeeded' : 'failed',
    captured,
    paid: approved,
    paymentIntentId: attempt.paymentIntentId,
    customerId: attempt.customerId,
    paymentMethodId: attempt.paymentMethod.id,
    paymentMethodDetails: cardDetails(attempt) as any,
    billingDetails: attempt.paymentMethod.billingDetails,
    outcome: chargeOutcome(attempt.paymentMethod.outcome as CardOutcome, attempt.decline?.declineCode ?? null) as any,
    failureCode: attempt.decline?.code ?? null,
    failureMessage: attempt.decline?.message ?? null,
    description: attempt.description,
    receiptEmail: attempt.receiptEmail,
    statementDescriptor: null,
    statementDescriptorSuffix: attempt.statementDescriptorSuffix,
    calculatedStatementDescriptor: calculatedDescriptor(attempt.statementDescriptorSuffix),
    shipping: (attempt.shipping ?? null) as any,
    metadata: attempt.metadata,
    fraudDetails: {},
    onBehalfOf: attempt.onBehalfOf,
    transferData: (attempt.transferData ?? null) as any,
    transferGroup: attempt.transferGroup,
    applicationFeeAmount: attempt.applicationFeeAmount,
    invoiceId: attempt.invoiceId,
    balanceTransaction: captured && attempt.settleNow ? newBalanceTransactionId() : null,
  };
  await db.write(insertCharge(row));
  return row;
}

/** One of the account's charges, locked for the rest of the transaction; null when it has none. */
export async function lockCharge(sql: SqlClient, accountId: string, id: string): Promise<ChargeRow | null> {
  const [row] = await sql.query<ChargeRow>(selectOwnedForUpdate(id, accountId));
  return row ?? null;
}

/** Writes a charge's changed money, capture or fields (`updateCharge` in queries.ts says which). */
export async function saveCharge(db: Db, row: ChargeRow): Promise<void> {
  await db.write(updateCharge(row));
}

/** The public object of one of the caller's charges (for expansion), or null. */
export async function retrieveChargeObject(ctx: RequestContext, id: string) {
  if (!hasIdShape('ch', id)) return null;
  const [row] = await ctx.deps.sql.query<ChargeRow>(selectOwned(id, ctx.caller.accountId));
  return row ? withChargeHistory(ctx.deps.sql, ctx.caller.accountId, serializeCharge(row), ctx.apiVersion) : null;
}

export async function retrieveCharge(ctx: RequestContext) {
  const id = ctx.pathParams.charge;
  const charge = await retrieveChargeObject(ctx, id);
  if (!charge) throw resourceMissing(NAME, id);
  return charge;
}

interface ShippingParam {
  address: Record<string, string>;
  name: string;
  carrier?: string;
  phone?: string;
  tracking_number?: string;
}

const ADDRESS_KEYS = ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const;

/** A `shipping` parameter as the public object shows it (PaymentIntents' and charges'). */
export function shippingOf(param: ShippingParam | '' | undefined, current: unknown): unknown {
  if (param === undefined) return current ?? null;
  if (param === '') return null;
  return {
    address: Object.fromEntries(ADDRESS_KEYS.map((k) => [k, param.address[k] || null])),
    carrier: param.carrier ?? null,
    name: param.name,
    phone: param.phone ?? null,
    tracking_number: param.tracking_number ?? null,
  };
}

/** `POST /v1/charges/{charge}`: description, metadata, receipt_email, shipping, fraud_details, transfer_group. */
export async function updateChargeOperation(ctx: RequestContext) {
  const { params, deps } = ctx;
  const id = ctx.pathParams.charge;
  const { row, eventIds } = await deps.prisma.$transaction(async (tx) => {
    const db = prismaDb(tx);
    const before = hasIdShape('ch', id) ? await lockCharge(db.sql, ctx.caller.accountId, id) : null;
    if (!before) throw resourceMissing(NAME, id);
    const text = (value: string | undefined, current: string | null) => (value === undefined ? current : value === '' ? null : value);
    const fraud = { ...(before.fraudDetails as Record<string, string>) };
    if (params.fraud_details?.user_report !== undefined) {
      if (params.fraud_details.user_report === '') delete fraud.user_report;
      else fraud.user_report = params.fraud_details.user_report;
    }
    const row: ChargeRow = {
      ...before,
      description: text(params.description, before.description),
      receiptEmail: text(params.receipt_email, before.receiptEmail),
      shipping: shippingOf(params.shipping, before.shipping) as any,
      metadata: applyMetadata(before.metadata as Metadata, params.metadata as MetadataParam | undefined),
      fraudDetails: fraud,
      transferGroup: params.transfer_group !== undefined ? params.transfer_group || null : before.transferGroup,
    };
    await saveCharge(db, row);
    const changed = previousAttributes(serializeCharge(before), serializeCharge(row));
    const events = requestEventOptions(ctx, unixSeconds(deps.clock));
    const eventIds = Object.keys(changed).length === 0
      ? []
      : [await emit(tx, 'charge.updated', await withChargeHistory(new TxSql(tx), row.accountId, serializeCharge(row), events.apiVersion), { ...events, previousAttributes: changed })];
    return { row, eventIds };
  });
  if (eventIds.length > 0) await handOffEvents(deps.queues, eventIds);
  return withChargeHistory(deps.sql, row.accountId, serializeCharge(row), ctx.apiVersion);
}

export async function listCharges(ctx: RequestContext) {
  const { params, caller } = ctx;
  const page = await paginateSql<ChargeRow & { seq: bigint }>({
    params,
    url: '/v1/charges',
    rows: listedRows(caller.accountId, {
      customer: params.customer,
      paymentIntent: params.payment_intent,
      transferGroup: params.transfer_group,
      created: rangeConditions('created', params.created),
    }),
    db: ctx.deps.sql,
    objectName: NAME,
    serialize: (row: ChargeRow) => serializeCharge(row),
  });
  return { ...page, data: await withChargesHistory(ctx.deps.sql, caller.accountId, page.data as ReturnType<typeof serializeCharge>[], ctx.apiVersion) };
}

export async function searchCharges(ctx: RequestContext) {
  const { caller, deps } = ctx;
  const result = await searchRequest<ChargeRow & { seq: bigint }>(ctx, SEARCH, searchedRows(caller.accountId), (row: ChargeRow) => serializeCharge(row));
  return { ...result, data: await withChargesHistory(deps.sql, caller.accountId, result.data as ReturnType<typeof serializeCharge>[], ctx.apiVersion) };
}
