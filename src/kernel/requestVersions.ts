// Request parameters at older API versions: what a version before a change sent, mapped onto
// today's parameters before validation, so handlers and the OpenAPI document know one model.

import type { Schema } from './coerce';
import { ApiError, invalidRequest, parametersExclusive } from './errors';
import { compileParamsValidator, type ParamsValidator } from './validate';
import { API_VERSIONS } from './versions';

export type Params = Record<string, any>;

/** How errors name today's parameters for a request that sent their older names. */
export interface ParamNames {
  /** Errors about `now` (or a parameter inside it: `now[…]`) name `then`, the parameter the request sent. */
  rename(now: string, then: string): void;
}

/**
 * A change the public API made in `version` to the parameters of `operation` (an operationId).
 * Each area declares the changes of its operations (src/resources/<area>/requestVersions.ts).
 */
export interface RequestChange {
  /** The version that made the change: versions before it took the old parameters. */
  readonly version: string;
  readonly operation: string;
  /** What changed, as the public changelog says it. */
  readonly description: string;
  /**
   * Every parameter `upgrade` reads, with the schema its value must fit before `upgrade` sees it
   * (`{}`: read only as `!== undefined` or moved as sent, today's schema validates it after). The
   * upgrade runs before validation, so this is what keeps a value of the wrong shape
   * (`payment_method_types[0][a]=1`) a 400 rather than a TypeError; the fuzz test sends odd shapes to each.
   */
  readonly takes: Readonly<Record<string, Schema>>;
  /**
   * The parameters as parsed (strings, arrays as objects keyed 0…n-1), the old ones mapped onto
   * today's; it returns a new bag (never changes `params`) and may throw an ApiError (both the old
   * and the new parameter sent, say). `names` keeps errors in the request's own terms.
   */
  readonly upgrade: (params: Params, names: ParamNames) => Params;
  /**
   * Top-level parameters the versions before the change took that today's model names nowhere
   * (a customer's `coupon`): strings, taken past validation as sent, for the handler to read from
   * `ctx.params` (the newest API never has them: at the change's version and after they are unknown).
   */
  readonly kept?: readonly string[];
  /**
   * Parameters the change removed (names as sent: `filters[countries]`), each with what replaced
   * it: a request at the change's version or later that still sends one is refused as unknown,
   * and the refusal says what to send instead.
   */
  readonly replaced?: Readonly<Record<string, string>>;
}

const indexOf = new Map<string, number>(API_VERSIONS.map((v, i) => [v, i]));
const NONE: readonly RequestChange[] = Object.freeze([]);

/** The renames of one request; `apply` gives an error in the request's terms. */
export class ParamRenames implements ParamNames {
  private readonly names = new Map<string, string>();

  rename(now: string, then: string): void {
    // An older change may have renamed `then` already (changes run oldest first): the request sent that name.
    this.names.set(now, this.nameOf(then));
  }

  get size(): number {
    return this.names.size;
  }

  /** `name` as the request knows it: the longest renamed parameter that is it or holds it. */
  nameOf(name: string): string {
    let best: [string, string] | undefined;
    for (const [now, then] of this.names) {
      if ((name === now || name.startsWith(`${now}[`)) && (!best || now.length > best[0].length)) best = [now, then];
    }
    return best ? best[1] + name.slice(best[0].length) : name;
  }

  /** The error with its `param` (and, for a parameter error, the name in its message) as the request sent it. */
  apply(error: ApiError): ApiError {
    if (error.param === undefined || this.names.size === 0) return error;
    const param = this.nameOf(error.param);
    if (param === error.param) return error;
    const message = error.kind === 'parameter' ? error.message.split(error.param).join(param) : error.message;
    return new ApiError({ ...error, message, param, kind: error.kind, keepsWrites: error.keepsWrites });
  }
}

export interface Upgraded {
  readonly params: Params;
  readonly names: ParamRenames;
  /** The `kept` parameters sent, which validation doesn't see: the handler gets them beside the validated ones. */
  readonly kept: Params;
}

/** Applies the request changes of every area (the registry's `requestChanges`; `deps`-free, the kernel holds it). */
export class RequestUpgrader {
  private readonly byOperation = new Map<string, RequestChange[]>();
  /** By operation, then version: no key string built per request. */
  private readonly pendingCache = new Map<string, Map<string, readonly RequestChange[]>>();
  private readonly checks = new Map<RequestChange, ParamsValidator>();

  constructor(changes: readonly RequestChange[]) {
    for (const c of changes) {
      if (!indexOf.has(c.version)) throw new Error(`Request change of ${c.operation} names an unknown version ${c.version}`);
      this.byOperation.set(c.operation, [...(this.byOperation.get(c.operation) ?? []), c]);
      // Compiled on first use, as the operations' validators are.
      this.checks.set(c, compileParamsValidator({ type: 'object', properties: { ...c.takes }, additionalProperties: true }));
    }
  }

  /** The parameters older versions of `operation` take that the changes read (today's document may name none of them). */
  parametersOf(operation: string): readonly string[] {
    return [...new Set((this.byOperation.get(operation) ?? []).flatMap((c) => [...Object.keys(c.takes), ...(c.kept ?? [])]))];
  }

  /** Operations the changes name: each must be one the app serves (checked as it starts). */
  get operations(): readonly string[] {
    return [...this.byOperation.keys()];
  }

  /**
   * The changes a request of `operation` at `version` goes through, oldest first: each maps the
   * parameters of the versions before it onto those of its own version, which the next one takes.
   */
  pending(operation: string, version: string): readonly RequestChange[] {
    const changes = this.byOperation.get(operation);
    if (!changes) return NONE;
    let byVersion = this.pendingCache.get(operation);
    if (!byVersion) this.pendingCache.set(operation, (byVersion = new Map()));
    let pending = byVersion.get(version);
    if (!pending) {
      const at = indexOf.get(version) ?? API_VERSIONS.length - 1;
      pending = changes.filter((c) => indexOf.get(c.version)! > at).sort((a, b) => indexOf.get(a.version)! - indexOf.get(b.version)!);
      if (pending.length === 0) pending = NONE;
      byVersion.set(version, pending);
    }
    return pending;
  }

  /**
   * `error` (from validating a request of `operation` at `version`) with, for an unknown parameter
   * a change at or before `version` removed, what replaced it. Only on the error path: nothing is
   * looked up for a valid request.
   */
  explain(operation: string, version: string, error: ApiError): ApiError {
    if (error.code !== 'parameter_unknown' || error.param === undefined) return error;
    const at = indexOf.get(version) ?? API_VERSIONS.length - 1;
    const param = error.param;
    for (const change of this.byOperation.get(operation) ?? []) {
      if (!change.replaced || indexOf.get(change.version)! > at) continue;
      const removed = Object.keys(change.replaced).find((name) => param === name || param.startsWith(`${name}[`));
      if (removed === undefined) continue;
      return new ApiError({
        status: error.status,
        code: error.code,
        param: error.param,
        kind: error.kind,
        message: `${error.message}. ${removed} was removed in API version ${change.version}: use ${change.replaced[removed]} instead.`,
      });
    }
    return error;
  }

  /** `params` as today's model takes them, for a request of `operation` at `version`. */
  upgrade(operation: string, version: string, params: Params): Upgraded {
    const names = new ParamRenames();
    let out = params;
    const kept: Params = {};
    for (const change of this.pending(operation, version)) {
      // Its errors name what the request sent (`names` so far), as validation's do.
      try {
        this.checks.get(change)!(out);
      } catch (err) {
        throw err instanceof ApiError ? names.apply(err) : err;
      }
      out = change.upgrade(out, names);
      for (const name of change.kept ?? []) {
        if (out[name] === undefined) continue;
        if (typeof out[name] !== 'string') throw invalidRequest(`Invalid string: ${name} must be a string`, 'parameter_invalid', name);
        kept[name] = out[name];
        out = without(out, name);
      }
    }
    return { params: out, names, kept };
  }
}

const isPlainObject = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The entries of a form array as parsed: an array, or an object keyed by index (`items[0][plan]`);
 * anything else has none.
 */
export function formEntries(value: unknown): [string, unknown][] {
  if (Array.isArray(value)) return value.map((v, i) => [String(i), v]);
  return isPlainObject(value) ? Object.entries(value) : [];
}

/** `params` without `names`, as a new plain object. */
export function without(params: Params, ...names: string[]): Params {
  const out: Params = { ...params };
  for (const name of names) delete out[name];
  return out;
}

/**
 * An upgrade for a top-level parameter renamed in a version: `from` becomes `to` (its value as
 * sent); both at once is a 400, as the public API answers two names for one thing.
 */
export function renamed(from: string, to: string): RequestChange['upgrade'] {
  return (params, names) => {
    if (params[from] === undefined) return params;
    if (params[to] !== undefined) throw parametersExclusive(from, to);
    names.rename(to, from);
    return { ...without(params, from), [to]: params[from] };
  };
}
