import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';
import type { RequestContext } from './route';

// The client secret of an intent (`pi_…_secret_…`) is what lets a publishable key, public by
// design, reach that one object: a route declares `publishable: 'client_secret'`, the kernel makes
// a publishable key send `client_secret`, and the handler, once it has read the object of the
// caller's account (an unknown id answers its usual 404 first), calls `requireClientSecret`.

/** `payment_intent` → `PaymentIntent`, as the public message names the object. */
const objectName = (object: string): string => object.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());

/**
 * The public answer to a client secret that isn't the object's: a 400 naming no more than the
 * object's type (nothing of the object is shown). A parameter error, so an idempotency key it
 * was sent with stays free for the corrected request.
 */
export const clientSecretMismatch = (object: string): ApiError =>
  new ApiError({
    status: 400,
    code: `${object}_invalid_parameter`,
    param: 'client_secret',
    message: `The client_secret provided does not match the client_secret associated with the ${objectName(object)}.`,
    kind: 'parameter',
  });

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * For a publishable key: the `client_secret` sent must be the object's (`sealedSecret`, as stored
 * sealed), compared in constant time, else the public 400 above. A secret key may read the
 * object without it, so for one this checks nothing. `object` defaults to the operation's
 * `returns.object` (`payment_intent`, `setup_intent`).
 */
export async function requireClientSecret(ctx: RequestContext, sealedSecret: string | null | undefined, object = ctx.object ?? 'object'): Promise<void> {
  if (!ctx.caller.publishable) return;
  requireOpenedClientSecret(ctx, sealedSecret ? await ctx.deps.encryption.open(sealedSecret) : null, object);
}

/**
 * The same check against a secret already opened (`secret`, as the object shows it), made
 * whenever `client_secret` was sent: a secret key that sends one gets it checked too.
 */
export function requireOpenedClientSecret(ctx: RequestContext, secret: string | null, object = ctx.object ?? 'object'): void {
  const given = ctx.params.client_secret;
  if (!ctx.caller.publishable && given === undefined) return;
  if (typeof given !== 'string' || !secret) throw clientSecretMismatch(object);
  // Digests first: equal lengths for timingSafeEqual, and no length leaks through timing either.
  if (!timingSafeEqual(digest(given), digest(secret))) throw clientSecretMismatch(object);
}
