import { createHash } from 'node:crypto';
import type { RequestContext } from '../../../kernel/route';
import { invalidRequest, parametersExclusive, resourceMissing } from '../../../kernel/errors';
import { checkHttpUrl } from '../../../kernel/urls';
import { unixSeconds } from '../../../lib/clock';
import { randomBase62 } from '../../../lib/ids';
import { hostedUrl } from '../../../hosted/pages';
import { findOwned } from '../accounts/service';
import type { AccountDetails } from '../accounts/details';
import { serializeAccountLink } from './serializer';

// Account links: a single-use URL into Sandbank's hosted onboarding page (pages.ts). The URL's
// token is a bearer credential, so only its SHA-256 is stored and it is never logged.

export const TOKEN_LENGTH = 40;
export const TOKEN_SHAPE = /^[0-9A-Za-z]{40}$/;

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const linkPath = (token: string): string => `/account_links/${token}`;

/** POST /v1/account_links */
export async function createAccountLink(ctx: RequestContext) {
  const { params, deps, caller } = ctx;
  if (params.collect !== undefined && params.collection_options !== undefined) throw parametersExclusive('collect', 'collection_options');
  for (const param of ['refresh_url', 'return_url'] as const) {
    if (params[param] !== undefined) checkHttpUrl(params[param], param);
  }
  const account = await findOwned(ctx, params.account, 'account');
  if (params.type === 'account_update' && (account.details as AccountDetails).controller?.requirement_collection !== 'application') {
    throw invalidRequest(
      'You can create account links of type `account_update` only for accounts where the platform collects requirements ' +
        '(controller[requirement_collection] is `application`, which includes Custom accounts). Use `account_onboarding` for this account.',
      undefined,
      'type',
    );
  }
  const collect: string = params.collect ?? params.collection_options?.fields ?? 'currently_due';
  const token = randomBase62(TOKEN_LENGTH);
  const now = unixSeconds(deps.clock);
  const expiresAt = now + deps.config.accountLinkTtlSeconds;
  await deps.prisma.$transaction(async (tx) => {
    // Records that onboarding has begun; the account may have been deleted since the lookup.
    const marked = await tx.account.updateMany({ where: { id: account.id, parentAccountId: caller.accountId }, data: { linkCreatedAt: now } });
    if (marked.count === 0) throw resourceMissing('account', account.id, 'account', 400);
    await tx.accountLink.create({
      data: {
        tokenHash: hashToken(token),
        accountId: account.id,
        type: params.type,
        collect,
        refreshUrl: params.refresh_url ?? null,
        returnUrl: params.return_url ?? null,
        created: now,
        expiresAt,
      },
    });
  });
  return serializeAccountLink({ created: now, expiresAt, url: hostedUrl(deps.config, linkPath(token)) });
}
