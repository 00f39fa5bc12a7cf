import type { Prisma } from '../../../generated/prisma/client';
import { unixSeconds } from '../../../lib/clock';
import { Encryption } from '../../../lib/encryption';
import { hasIdShape, newId } from '../../../lib/ids';
import { ApiError, parameterMissing, resourceMissing } from '../../../kernel/errors';
import { paginate, rangeWhere } from '../../../kernel/list';
import { applyMetadata, type MetadataParam } from '../../../kernel/metadata';
import type { RequestContext } from '../../../kernel/route';
import type { Tx } from '../../../events/emit';
import { resolvePaymentMethod, takeCvc } from '../../payments';
import { destinationFor, forwardingDestinations } from './destinations';
import { queueForwards } from './jobs';
import { failMissed, forwardingFailure, outcomeNotKnownYet, RECORDING_GRACE_SECONDS, type Outbound } from './pipeline';
import {
  blanksOf,
  checkCredential,
  checkHeaders,
  fill,
  invalidForwardingParameter,
  parseBody,
  redactHeaders,
  signBody,
  type CardData,
  type Header,
  type Replacement,
} from './replacements';
import { ROW, serializeForwardingRequest, type ForwardingRow } from './serializer';
import { prismaDb } from '../../../kernel/writes';

const NAME = 'forwarding request';

interface RequestParam {
  body?: string;
  headers?: Header[];
}

/** What the create's transaction commits: the record to wait for. */
interface Created {
  readonly id: string;
}

/**
 * A forward made earlier with this idempotency key (within the key's lifetime): the API died while
 * waiting for it, or its key was freed by an outage. Its record is answered again, never re-sent.
 */
async function earlierForward(tx: Tx, ctx: RequestContext): Promise<string | undefined> {
  if (ctx.idempotencyKey === undefined) return undefined;
  const since = unixSeconds(ctx.deps.clock) - ctx.deps.config.idempotencyTtlHours * 3600;
  const row = await tx.forwardingRequest.findFirst({
    where: { accountId: ctx.caller.accountId, idempotencyKey: ctx.idempotencyKey, created: { gte: since } },
    select: { id: true },
  });
  return row?.id;
}

/** The card data of one of the caller's payment methods, the number unsealed (never logged, never stored plain). */
async function cardData(tx: Tx, ctx: RequestContext, pmId: string, withCvc: boolean): Promise<CardData> {
  const pm = await tx.paymentMethod.findUniqueOrThrow({ where: { id: pmId }, select: { number: true, expMonth: true, expYear: true, billingDetails: true } });
  const number = await ctx.deps.encryption.open(pm.number);
  const name = ((pm.billingDetails as Record<string, unknown> | null)?.name as string | null | undefined) ?? null;
  if (!withCvc) return { number, expMonth: pm.expMonth, expYear: pm.expYear, name };
  const cvc = await takeCvc(tx, ctx, pmId);
  if (cvc === undefined) {
    throw invalidForwardingParameter(
      `The CVC of ${pmId} is no longer available: a CVC serves the first forward of its payment method and expires after a while. Collect the card details again to forward a CVC.`,
      'replacements',
      'state',
    );
  }
  return { number, expMonth: pm.expMonth, expYear: pm.expYear, name, cvc };
}

/**
 * `POST /v1/forwarding/requests`, its transaction: checks the destination and the request, fills
 * the card data in, seals what the worker sends, and records the forward with its request masked.
 * The job is added once this commits; `awaitForward` then waits for the worker's result.
 */
export async function createForwardingRequest(ctx: RequestContext): Promise<Created> {
  const { params, deps, caller } = ctx;
  const { config, encryption } = deps;
  const target = destinationFor(forwardingDestinations(config), params.url);
  if (!target) {
    throw new ApiError({
      status: 400,
      code: 'forwarding_api_inactive',
      param: 'url',
      message: `Forwarding is not set up for this URL: it starts with none of the destinations FORWARDING_DESTINATIONS configures (${forwardingDestinations(config).length} configured).`,
    });
  }
  const { destination, href } = target;
  const request = params.request as RequestParam;
  if (request.body === undefined) throw parameterMissing('request[body]');
  const replacements = [...new Set(params.replacements as Replacement[])];
  const headers = checkHeaders(request.headers ?? []);
  checkCredential(headers, destination);
  if (replacements.includes('request_signature') && destination.signatureKey === null) {
    throw invalidForwardingParameter('request_signature needs a signature key, and this destination has none (`signature_key` in FORWARDING_DESTINATIONS).', 'replacements');
  }
  const sent = parseBody(request.body);
  const recorded = parseBody(request.body);
  const sentBlanks = blanksOf(sent, replacements, destination);
  const recordedBlanks = blanksOf(recorded, replacements, destination);

  return deps.prisma.$transaction(async (tx) => {
    const earlier = await earlierForward(tx, ctx);
    if (earlier) return { id: earlier };
    const pm = await resolvePaymentMethod(prismaDb(tx), ctx, params.payment_method, 'payment_method');
    const card = await cardData(tx, ctx, pm.id, sentBlanks.has('cvc'));
    fill(sentBlanks, card, false);
    fill(recordedBlanks, card, true);
    const body = JSON.stringify(sent);
    const outHeaders = [...headers];
    if (replacements.includes('request_signature')) outHeaders.push({ name: destination.signatureHeader, value: signBody(body, destination.signatureKey!) });
    const outbound: Outbound = { body, headers: outHeaders, mask: { number: card.number, ...(card.cvc !== undefined && { cvc: card.cvc }) } };
    const sealed = await encryption.seal(JSON.stringify(outbound));
    const now = unixSeconds(deps.clock);
    const id = newId('fwdreq');
    await tx.forwardingRequest.create({
      data: {
        id,
        accountId: caller.accountId,
        created: now,
        paymentMethod: pm.id,
        replacements,
        url: href,
        metadata: applyMetadata({}, params.metadata as MetadataParam | undefined),
        status: 'pending',
        requestDetails: { body: JSON.stringify(recorded), headers: redactHeaders(outHeaders, destination.credentialHeader) as unknown as Prisma.InputJsonArray, http_method: 'POST' },
        outbound: sealed,
        keyId: Encryption.keyIdOf(sealed),
        timeoutMs: destination.timeoutMs,
        allowPrivateNetwork: destination.allowPrivateNetwork,
        idempotencyKey: ctx.idempotencyKey ?? null,
        pickupDeadline: new Date(deps.clock.nowMs() + config.forwardingPickupTimeoutMs),
      },
      select: { id: true },
    });
    await queueForwards(deps.queues, [id]);
    return { id };
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polling steps while the worker calls: quick at first (a local destination answers in milliseconds), then every 250 ms. */
const POLL_MS = [5, 10, 20, 40, 80, 160, 250];

/**
 * The create's second half, after its commit: waits until the record is final and answers it, or
 * its failure as the public error. Past the pickup deadline (no worker took it) the record is
 * failed here, by the conditional update the reconciler uses, so a late worker finds nothing to
 * do. Past the call's timeout and grace the answer is that the outcome is not known yet: the
 * record is left to become final with the truth, which a retry with the key then answers.
 */
export async function awaitForward(ctx: RequestContext, committed: unknown) {
  const { id } = committed as Created;
  const { prisma, clock, config, queues } = ctx.deps;
  let requeueAt = clock.nowMs() + config.forwardingRequeueMs;
  for (let i = 0; ; i++) {
    const row = await prisma.forwardingRequest.findUniqueOrThrow({
      where: { id },
      select: { ...ROW, status: true, errorCode: true, failure: true, pickupDeadline: true, claimedAt: true, timeoutMs: true },
    });
    if (row.status === 'succeeded') return serializeForwardingRequest(row);
    if (row.status === 'failed') throw forwardingFailure(row.id, row.errorCode ?? 'forwarding_api_upstream_error', row.failure);
    const now = clock.nowMs();
    if (row.status === 'pending' && now >= row.pickupDeadline.getTime()) await failMissed(prisma, id);
    else if (row.status === 'pending' && now >= requeueAt) {
      // Still not taken: Redis may have lost the job (a flush). Its job id is the record's, so
      // this adds nothing while Redis holds it; the reconciler would too, but only at its next pass.
      requeueAt = now + config.forwardingRequeueMs;
      await queueForwards(queues, [id]);
    }
    else if (row.claimedAt !== null && now >= row.claimedAt.getTime() + row.timeoutMs + RECORDING_GRACE_SECONDS * 1000) throw outcomeNotKnownYet(id);
    await sleep(POLL_MS[Math.min(i, POLL_MS.length - 1)]);
  }
}

async function findOwn(ctx: RequestContext, id: string): Promise<ForwardingRow> {
  const row = hasIdShape('fwdreq', id)
    ? await ctx.deps.prisma.forwardingRequest.findUnique({ where: { id, accountId: ctx.caller.accountId }, select: ROW })
    : null;
  if (!row) throw resourceMissing(NAME, id);
  return row;
}

export async function retrieveForwardingRequest(ctx: RequestContext) {
  return serializeForwardingRequest(await findOwn(ctx, ctx.pathParams.id));
}

export async function listForwardingRequests(ctx: RequestContext) {
  const { params, caller } = ctx;
  return paginate<ForwardingRow & { seq: bigint }>({
    params,
    url: '/v1/forwarding/requests',
    where: { accountId: caller.accountId, created: rangeWhere(params.created) },
    model: {
      findUnique: (args: any) => ctx.deps.prisma.forwardingRequest.findUnique(args),
      findMany: (args: any) => ctx.deps.prisma.forwardingRequest.findMany({ ...args, select: { ...ROW, seq: true } }),
    } as any,
    objectName: NAME,
    serialize: (row) => serializeForwardingRequest(row),
  });
}
