import type { RequestContext } from '../../../kernel/route';
import { invalidRequest } from '../../../kernel/errors';
import { unixSeconds } from '../../../lib/clock';
import { randomBase62 } from '../../../lib/ids';
import { hostedUrl } from '../../../hosted/pages';
import { findOwned } from '../accounts/service';
import type { AccountDetails } from '../accounts/details';
import { missingRequirements } from '../accounts/serializer';
import { hashToken, TOKEN_LENGTH } from '../account_links/service';
import { serializeLoginLink } from './serializer';

// Login links: a single-use URL into the hosted page that stands for an Express account's
// dashboard (pages.ts). The URL's token is a bearer credential, shaped and hashed as account
// links' are: only its SHA-256 is stored, and it is never logged.

export const linkPath = (token: string): string => `/login_links/${token}`;

/** POST /v1/accounts/{account}/login_links: for the platform's Express accounts that completed onboarding. */
export async function createLoginLink(ctx: RequestContext) {
  const { deps } = ctx;
  const account = await findOwned(ctx, ctx.pathParams.account);
  if ((account.details as AccountDetails).controller?.stripe_dashboard?.type !== 'express') {
    throw invalidRequest(
      'You can only create login links for accounts that use the Express Dashboard (controller[stripe_dashboard][type] is `express`) ' +
        'and are connected to your platform.',
    );
  }
  if (missingRequirements(account).length > 0) throw invalidRequest('Cannot create a login link for an account that has not completed onboarding.');
  const token = randomBase62(TOKEN_LENGTH);
  const now = unixSeconds(deps.clock);
  await deps.prisma.loginLink.create({
    data: { tokenHash: hashToken(token), accountId: account.id, created: now, expiresAt: now + deps.config.loginLinkTtlSeconds },
  });
  return serializeLoginLink({ created: now, url: hostedUrl(deps.config, linkPath(token)) });
}
