import { LATEST_API_VERSION } from '../../../src/kernel/versions';
import type { TestApp } from '../../helpers/app';
import type { SdkPackage } from '../../helpers/sdkTypes';

// The stripe-node majors an integration may pin, each constructed as its users construct it:
// the major's own API version and nothing else changed but where it connects. The packages are
// required, not imported: from 12 on each major's types declare `module 'stripe'`, so two of them
// can't be typed in one program; `sdkTypeProblems` reads their types instead.

export interface Major {
  readonly pkg: SdkPackage;
  /** The version its requests send (`Stripe-Version`). */
  readonly version: string;
  /**
   * What its users pass as `apiVersion`: 8 and 11 send no version unless given one, and their
   * types require the one they pin; from 12 on the default is the pinned version.
   */
  readonly apiVersion?: string;
}

export const MAJORS: readonly Major[] = [
  { pkg: 'stripe-v8', version: '2020-08-27', apiVersion: '2020-08-27' },
  { pkg: 'stripe-v11', version: '2022-11-15', apiVersion: '2022-11-15' },
  { pkg: 'stripe-v14', version: '2023-10-16' },
  { pkg: 'stripe-v15', version: '2024-04-10' },
  { pkg: 'stripe-v17', version: '2025-02-24.acacia' },
  { pkg: 'stripe-v18', version: '2025-08-27.basil' },
  { pkg: 'stripe', version: LATEST_API_VERSION },
];

/** A request the SDK has no method for, through its raw request facility. */
export type Raw = (method: 'GET' | 'POST' | 'DELETE', path: string, params?: Record<string, unknown>) => Promise<any>;

/** One major's client for one key, and what the calls need beside it. */
export interface Client {
  readonly major: Major;
  /** The package's export (`Stripe`): its error classes, its resources. */
  readonly S: any;
  readonly stripe: any;
  readonly key: string;
  readonly t: TestApp;
  readonly raw: Raw;
}

export function sdkModule(pkg: SdkPackage): any {
  return require(pkg);
}

/**
 * `stripe.rawRequest` came with 16; before it, a resource of one method (`StripeResource.extend`),
 * which is what integrations on those majors write for an endpoint the SDK lacks.
 */
function rawRequester(S: any, stripe: any): Raw {
  if (typeof stripe.rawRequest === 'function') return (method, path, params = {}) => stripe.rawRequest(method, path, params);
  return (method, path, params = {}) => {
    const Resource = S.StripeResource.extend({ call: S.StripeResource.method({ method, fullPath: path }) });
    return new Resource(stripe).call(params);
  };
}

export function client(t: TestApp, major: Major, key: string): Client {
  const S = sdkModule(major.pkg);
  const stripe = new S(key, { host: '127.0.0.1', port: t.port, protocol: 'http', ...(major.apiVersion ? { apiVersion: major.apiVersion } : {}) });
  return { major, S, stripe, key, t, raw: rawRequester(S, stripe) };
}

/** Whether the major pins a version older than `date` (YYYY-MM-DD). */
export const before = (c: Client, date: string): boolean => c.major.version.slice(0, 10) < date;
