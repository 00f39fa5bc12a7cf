// API versions: the ones Sandbank accepts, and how an object is rendered for an older one.

/** Versions the public API has published (from the official SDK's WebhookEndpoint ApiVersion). */
export const API_VERSIONS = [
  '2011-01-01',
  '2011-06-21',
  '2011-06-28',
  '2011-08-01',
  '2011-09-15',
  '2011-11-17',
  '2012-02-23',
  '2012-03-25',
  '2012-06-18',
  '2012-06-28',
  '2012-07-09',
  '2012-09-24',
  '2012-10-26',
  '2012-11-07',
  '2013-02-11',
  '2013-02-13',
  '2013-07-05',
  '2013-08-12',
  '2013-08-13',
  '2013-10-29',
  '2013-12-03',
  '2014-01-31',
  '2014-03-13',
  '2014-03-28',
  '2014-05-19',
  '2014-06-13',
  '2014-06-17',
  '2014-07-22',
  '2014-07-26',
  '2014-08-04',
  '2014-08-20',
  '2014-09-08',
  '2014-10-07',
  '2014-11-05',
  '2014-11-20',
  '2014-12-08',
  '2014-12-17',
  '2014-12-22',
  '2015-01-11',
  '2015-01-26',
  '2015-02-10',
  '2015-02-16',
  '2015-02-18',
  '2015-03-24',
  '2015-04-07',
  '2015-06-15',
  '2015-07-07',
  '2015-07-13',
  '2015-07-28',
  '2015-08-07',
  '2015-08-19',
  '2015-09-03',
  '2015-09-08',
  '2015-09-23',
  '2015-10-01',
  '2015-10-12',
  '2015-10-16',
  '2016-02-03',
  '2016-02-19',
  '2016-02-22',
  '2016-02-23',
  '2016-02-29',
  '2016-03-07',
  '2016-06-15',
  '2016-07-06',
  '2016-10-19',
  '2017-01-27',
  '2017-02-14',
  '2017-04-06',
  '2017-05-25',
  '2017-06-05',
  '2017-08-15',
  '2017-12-14',
  '2018-01-23',
  '2018-02-05',
  '2018-02-06',
  '2018-02-28',
  '2018-05-21',
  '2018-07-27',
  '2018-08-23',
  '2018-09-06',
  '2018-09-24',
  '2018-10-31',
  '2018-11-08',
  '2019-02-11',
  '2019-02-19',
  '2019-03-14',
  '2019-05-16',
  '2019-08-14',
  '2019-09-09',
  '2019-10-08',
  '2019-10-17',
  '2019-11-05',
  '2019-12-03',
  '2020-03-02',
  '2020-08-27',
  '2022-08-01',
  '2022-11-15',
  '2023-08-16',
  '2023-10-16',
  '2024-04-10',
  '2024-06-20',
  '2024-09-30.acacia',
  '2024-10-28.acacia',
  '2024-11-20.acacia',
  '2024-12-18.acacia',
  '2025-01-27.acacia',
  '2025-02-24.acacia',
  '2025-03-01.dashboard',
  '2025-03-31.basil',
  '2025-04-30.basil',
  '2025-05-28.basil',
  '2025-06-30.basil',
  '2025-07-30.basil',
  '2025-08-27.basil',
  '2025-09-30.clover',
  '2025-10-29.clover',
  '2025-11-17.clover',
  '2025-12-15.clover',
  '2026-01-28.clover',
  '2026-02-25.clover',
  '2026-03-25.dahlia',
  '2026-04-22.dahlia',
  '2026-05-27.dahlia',
  '2026-06-24.dahlia',
  '2026-07-29.dahlia',
  '2026-08-26.dahlia',
  '2026-09-30.endive',
  '2026-10-28.endive',
] as const;

/** The newest version: the shape every serializer writes. */
export const LATEST_API_VERSION: string = API_VERSIONS[API_VERSIONS.length - 1];

/**
 * The version the contract names (docs/versions.md), DEFAULT_API_VERSION's default: what a client
 * that sends no version meets. Newer ones stay available to a request or key that pins them.
 */
export const CONTRACT_API_VERSION: string = '2026-08-26.dahlia';

const known: ReadonlySet<string> = new Set(API_VERSIONS);

export const isApiVersion = (value: string): boolean => known.has(value);

/**
 * A change the public API made in `version` to objects of type `object`. Objects are written in
 * the newest shape; rendering for an older version undoes, newest first, every change made
 * after it. Each area declares the changes of its objects (src/resources/<area>/versions.ts).
 */
export interface VersionChange {
  /** The version that made the change. */
  readonly version: string;
  /** The `object` it changed. */
  readonly object: string;
  /** What changed, as the public changelog says it. */
  readonly description: string;
  /**
   * The object as versions before `version` show it, from its rendering for `version` (`object`)
   * and its newest one (`newest`, for what a later change took away). It may get a part of an
   * object (an event's `previous_attributes`), so it moves only what is there. `embedded`: the
   * objects older versions showed whole where the newest shape has their id (see `embed`).
   */
  readonly downgrade: (object: Record<string, any>, newest: Record<string, any>, embedded: Embedded) => Record<string, any>;
  /**
   * How the change differs in `expand[]`: the fields versions before it show that the newest
   * shape doesn't, with what they expand to (`payment_intent: ref('payment_intent')`), and null
   * for a field it added, which they can't expand. The object registry expands such a field on
   * the object as rendered for the version (src/kernel/expand.ts).
   */
  readonly expandable?: VersionFields;
}

/**
 * An older version's expandable fields of one object type, where they differ from the newest:
 * a field as the object registry declares it (`ExpandableField` of src/kernel/expand.ts, which
 * imports this file), or null for one of the newest it doesn't have.
 */
export type VersionFields = Readonly<Record<string, { readonly type: string } | null>>;

/** Objects by id (a coupon by its id). */
export type Embedded = Readonly<Record<string, unknown>>;

const EMBEDDED = Symbol('embedded');

/**
 * Gives `object` the objects older versions showed whole where the newest shape names them by id
 * (a promotion code's coupon). They ride on a symbol, so the newest shape never shows them;
 * rendering passes them to the downgrades of `object` and of everything inside it, and an event
 * keeps them beside its object.
 */
export function embed<T extends object>(object: T, objects: Embedded): T {
  Object.defineProperty(object, EMBEDDED, { value: objects, enumerable: false, configurable: true });
  return object;
}

export const embeddedOf = (value: unknown): Embedded | undefined =>
  typeof value === 'object' && value !== null ? ((value as Record<symbol, Embedded | undefined>)[EMBEDDED] ?? undefined) : undefined;

const RENDERED = Symbol('rendered');

/** Marks a value as rendered already (an event's `data`, frozen at the event's version). */
export function alreadyRendered<T extends object>(value: T): T {
  Object.defineProperty(value, RENDERED, { value: true, enumerable: false });
  return value;
}

type Json = Record<string, any>;

/** A plain object (not an array, not null): what a downgrade may take apart. */
export const isJsonObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A downgrade that moves fields: each `[from, to]` takes the value at the dotted path `from`
 * (when present: a partial object moves what it has) to the top-level `to`; the objects named
 * in `replaced` go away, as the older versions had none.
 */
export function moveFields(moves: readonly (readonly [string, string])[], replaced: readonly string[]) {
  return (object: Json): Json => {
    const out: Json = { ...object };
    for (const [from, to] of moves) {
      let node: unknown = object;
      for (const segment of from.split('.')) node = isJsonObject(node) ? node[segment] : undefined;
      if (node !== undefined) out[to] = node;
    }
    for (const key of replaced) delete out[key];
    return out;
  };
}

const indexOf = new Map<string, number>(API_VERSIONS.map((v, i) => [v, i]));

/**
 * A change the public API made in `version` to the HTTP status of an error, whatever the operation:
 * at older versions an error of `status` (and `code`, when given) answered `before`. The body stays.
 */
export interface ErrorStatusChange {
  readonly version: string;
  readonly status: number;
  readonly code?: string;
  readonly before: number;
  /** What changed, as the public changelog says it. */
  readonly description: string;
}

export const ERROR_STATUS_CHANGES: readonly ErrorStatusChange[] = [
  {
    version: '2016-10-19',
    status: 403,
    before: 401,
    description: 'Using insufficient permissions to make API requests now throws an HTTP 403 error (a 401 before).',
  },
  {
    version: '2015-09-08',
    status: 429,
    code: 'rate_limit',
    before: 400,
    description: 'Rate-limited requests now answer HTTP 429 (a 400 before).',
  },
];

/** The status an error of `status` (with `code`) had at `version`: the changes made after it undone, newest first. */
export function errorStatusAt(status: number, code: string | undefined, version: string): number {
  const at = indexOf.get(version);
  if (at === undefined) return status;
  let out = status;
  for (const change of [...ERROR_STATUS_CHANGES].sort((a, b) => indexOf.get(b.version)! - indexOf.get(a.version)!)) {
    if (indexOf.get(change.version)! > at && out === change.status && (change.code === undefined || change.code === code)) out = change.before;
  }
  return out;
}

type Pending = ReadonlyMap<string, readonly VersionChange[]>;

export class VersionRenderer {
  private readonly pendingByVersion = new Map<string, Pending>();
  private readonly expandableByVersion = new Map<string, ReadonlyMap<string, VersionFields>>();

  constructor(readonly changes: readonly VersionChange[]) {
    for (const c of changes) if (!indexOf.has(c.version)) throw new Error(`Version change of ${c.object} names an unknown version ${c.version}`);
  }

  /** The changes to undo for `version`, by object type, newest first. */
  private pending(version: string): Pending {
    let pending = this.pendingByVersion.get(version);
    if (!pending) {
      const at = indexOf.get(version) ?? API_VERSIONS.length - 1;
      const map = new Map<string, VersionChange[]>();
      const newer = this.changes.filter((c) => indexOf.get(c.version)! > at).sort((a, b) => indexOf.get(b.version)! - indexOf.get(a.version)!);
      for (const c of newer) map.set(c.object, [...(map.get(c.object) ?? []), c]);
      pending = map;
      this.pendingByVersion.set(version, pending);
    }
    return pending;
  }

  /**
   * Per object type, the expandable fields `version` shows differently from the newest shape:
   * every later change's `expandable`, the oldest change's word last (it is what `version` saw).
   */
  expandableAt(version: string): ReadonlyMap<string, VersionFields> {
    let fields = this.expandableByVersion.get(version);
    if (!fields) {
      const map = new Map<string, VersionFields>();
      for (const [object, changes] of this.pending(version)) {
        const merged: Record<string, VersionFields[string]> = {};
        for (const c of changes) Object.assign(merged, c.expandable);
        if (Object.keys(merged).length > 0) map.set(object, merged);
      }
      fields = map;
      this.expandableByVersion.set(version, fields);
    }
    return fields;
  }

  /**
   * `value` (an object, a list, anything holding objects) as `version` shows it: every object in
   * it, found by its `object` member, is downgraded. `rootType` names the type of a root that has
   * no `object` member (previous_attributes); `embedded`, objects embedded beside it (an event's).
   * Nothing to undo: `value` itself comes back.
   */
  render<T>(value: T, version: string, rootType?: string, embedded: Embedded = {}): T {
    const pending = this.pending(version);
    return pending.size === 0 ? value : (walk(value, pending, rootType, embedded) as T);
  }
}

const isDeletedStub = (object: Record<string, unknown>): boolean => {
  const keys = Object.keys(object);
  return keys.length === 3 && 'id' in object && 'object' in object;
};

function walk(value: unknown, pending: Pending, type: string | undefined, embedded: Embedded): unknown {
  if (Array.isArray(value)) return value.map((v) => walk(v, pending, undefined, embedded));
  if (typeof value !== 'object' || value === null || (value as Record<symbol, unknown>)[RENDERED]) return value;
  const own = embeddedOf(value);
  const here = own ? { ...embedded, ...own } : embedded;
  const newest: Record<string, any> = {};
  for (const [k, v] of Object.entries(value)) newest[k] = walk(v, pending, undefined, here);
  // A deleted object (`{id, object, deleted: true}`, nothing else) has that shape at every version.
  if (newest.deleted === true && isDeletedStub(newest)) return newest;
  let out = newest;
  for (const change of pending.get(typeof newest.object === 'string' ? newest.object : (type ?? '')) ?? []) out = change.downgrade(out, newest, here);
  return out;
}
