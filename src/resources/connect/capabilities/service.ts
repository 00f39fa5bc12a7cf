import type { RequestContext } from '../../../kernel/route';
import { resourceMissing } from '../../../kernel/errors';
import { paginateItems } from '../../../kernel/list';
import { editAccount, findReadable, requestCapabilities } from '../accounts/service';
import { CAPABILITIES } from '../accounts/serializer';
import { capabilitiesOf, serializeCapability } from './serializer';

// An account's capabilities: requested ones are listed (newest first); any known capability can
// be retrieved (`unrequested` until it is asked for) and requested or removed. Their status
// follows the account's requirements, so it is computed, never stored.

const NAME = 'capability';

const known: ReadonlySet<string> = new Set(CAPABILITIES);

function knownCapability(name: string): string {
  if (!known.has(name)) throw resourceMissing(NAME, name);
  return name;
}

/** GET /v1/accounts/{account}/capabilities */
export async function listCapabilities(ctx: RequestContext) {
  const row = await findReadable(ctx, ctx.pathParams.account);
  return paginateItems({
    params: ctx.params,
    url: `/v1/accounts/${row.id}/capabilities`,
    items: capabilitiesOf(row).map((c) => ({ id: c.name })),
    objectName: NAME,
    serialize: (c) => serializeCapability(row, c.id),
  });
}

/** GET /v1/accounts/{account}/capabilities/{capability} */
export async function retrieveCapability(ctx: RequestContext) {
  const row = await findReadable(ctx, ctx.pathParams.account);
  return serializeCapability(row, knownCapability(ctx.pathParams.capability));
}

/** POST /v1/accounts/{account}/capabilities/{capability}: `requested` asks for it (true) or removes it (false). */
export async function updateCapability(ctx: RequestContext) {
  const name = knownCapability(ctx.pathParams.capability);
  return editAccount(ctx, (_locked, details, now) => {
    if (ctx.params.requested !== undefined) details.capabilities = requestCapabilities(details, { [name]: { requested: ctx.params.requested } }, now);
    return { details, answer: (row) => serializeCapability(row, name) };
  });
}
