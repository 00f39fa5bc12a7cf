import { echo, invalidRequest } from './errors';
import type { RequestContext } from './route';
import type { VersionRenderer } from './versions';

// expand[]: each resource declares, per object type, which fields can be expanded, what they
// expand to, and how. Paths are checked against those declarations before any work is done.
// Four kinds of field:
// - an id that expands to its object (`expand`);
// - an id of another resource's object (`ref`): it expands through that object type's `retrieve`,
//   registered by the resource that owns it, so serializers never import each other;
// - a field the public API returns only when expanded (`withheldField`): the serializer keeps its
//   value out of the object with `withhold`, and expanding puts it back;
// - a sub-object that is always there but holds such fields (`pathField`): a path may go
//   through it (`document.number`), but it can't be expanded itself.
// A field may hold a list (`list`): the path goes on through its `data` (`charges.data.customer`).
// Fields are declared in the newest shape. An older version's fields differ where a version
// change says so (`VersionChange.expandable`: the fields it took away, what they expand to, and
// the ones it added); the check follows the request's version, and such a field is expanded on
// the object as rendered for that version, where it is (an invoice's `payment_intent` before basil).

export const MAX_EXPAND_DEPTH = 4;

/** The member of a search result that `expand[]` asks for (the search counts it). */
const SEARCH_TOTAL = 'total_count';

export interface ExpandableField {
  /** Object type of the expanded value, so deeper path segments can be checked. */
  readonly type: string;
  /**
   * Turns the stored value (an id, possibly null) into the expanded value; `parent` is the
   * object holding it. Absent for withheld and path fields.
   */
  readonly expand?: Expand;
  readonly kind?: 'withheld' | 'path' | 'ref';
  /** The value is a list (`{object: 'list', data}`) of objects of `type`: a path goes on through `data`. */
  readonly list?: boolean;
}

type Expand = (value: unknown, parent: Record<string, unknown>, ctx: RequestContext) => Promise<unknown>;

export type ExpandableFields = Readonly<Record<string, ExpandableField>>;

/** One of the caller's objects of a type, by id, in its public shape; null when the caller has none. */
export type Retrieve = (ctx: RequestContext, id: string) => Promise<unknown>;

/**
 * What the object registry holds for one object type: its expandable fields and, for a type that
 * other objects name by id, how to retrieve it. Each area declares its own (src/resources/<area>/index.ts).
 */
export interface ObjectType {
  readonly expandable: ExpandableFields;
  readonly retrieve?: Retrieve;
}

/** A field holding the id of an object of `type`, expanded through the registry (null when the caller has none). */
export const ref = (type: string): ExpandableField => ({ type, kind: 'ref' });

/** A field the serializer withholds (see `withhold`); expanding it returns its value, or null. */
export const withheldField = (type: string): ExpandableField => ({ type, kind: 'withheld' });

/** A sub-object always present, named only to reach the expandable fields inside it. */
export const pathField = (type: string): ExpandableField => ({ type, kind: 'path' });

/** A list of objects of `type` always present (an older version's), named to reach its items' fields (`charges.data.customer`). */
export const listField = (type: string): ExpandableField => ({ type, kind: 'path', list: true });

/**
 * An older version's expandable fields of one object type, where they differ from the newest:
 * a field it shows (what it expands to), or null for one of the newest it doesn't have
 * (`VersionChange.expandable`, declared with `ref` and the others above).
 */
type VersionFields = Readonly<Record<string, ExpandableField | null>>;

const WITHHELD = Symbol('withheld');

/**
 * Keeps `values` out of `object` until `expand[]` names them. They ride along on a symbol, so
 * JSON (responses, stored events, webhooks) never shows them: a payload that isn't expanded
 * can't leak them.
 */
export function withhold<T extends object>(object: T, values: Record<string, unknown>): T {
  Object.defineProperty(object, WITHHELD, { value: values, enumerable: false, configurable: true });
  return object;
}

/** Per object type, the fields a version shows differently from the newest shape (`VersionRenderer.expandableAt`). */
type FieldsAt = ReadonlyMap<string, VersionFields>;

const NEWEST: FieldsAt = new Map();

const hasOwn = (object: object, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

const cannotExpand = (segment: string) => invalidRequest(`This property cannot be expanded (${echo(segment)}).`, undefined, 'expand');

/** The object registry: per object type, its expandable fields and its retrieve. */
export class ExpandRegistry {
  private readonly types = new Map<string, ExpandableFields>();
  private readonly byId = new Map<string, Expand>();

  /** `versions`: the table of version changes, for what older versions show (without it, the newest shape only). */
  constructor(private readonly versions?: VersionRenderer) {}

  register(objectType: string, fields: ExpandableFields, retrieve?: Retrieve): void {
    if (this.types.has(objectType)) throw new Error(`Expandable fields of ${objectType} are declared twice`);
    this.types.set(objectType, fields);
    if (retrieve) this.byId.set(objectType, async (value, _parent, ctx) => (typeof value === 'string' ? retrieve(ctx, value) : value));
  }

  /**
   * Fields one area gives another's object type (billing's `subscriptions` of a customer), so
   * neither imports the other; after the type is registered.
   */
  extend(objectType: string, fields: ExpandableFields): void {
    const own = this.types.get(objectType);
    if (!own) throw new Error(`Expandable fields are added to ${objectType}, which no area registers`);
    const twice = Object.keys(fields).find((name) => hasOwn(own, name));
    if (twice !== undefined) throw new Error(`Expandable field ${objectType}.${twice} is declared twice`);
    this.types.set(objectType, { ...own, ...fields });
  }

  /** Stops start-up when a `ref` (of the newest shape or of an older version's) names a type no resource retrieves. */
  checkReferences(): void {
    const declared: [string, ExpandableFields | VersionFields][] = [
      ...this.types,
      ...(this.versions?.changes ?? []).flatMap((c): [string, VersionFields][] => (c.expandable ? [[`${c.object} before ${c.version}`, c.expandable as VersionFields]] : [])),
    ];
    for (const [type, fields] of declared) {
      for (const [name, field] of Object.entries(fields)) {
        if (field?.kind === 'ref' && !this.byId.has(field.type)) throw new Error(`${type}.${name} refers to ${field.type}, which no resource retrieves`);
      }
    }
  }

  /** What `version` shows differently; the table declares them with `ref` and the others of this file. */
  private fieldsAt(version: string): FieldsAt {
    return this.versions ? (this.versions.expandableAt(version) as FieldsAt) : NEWEST;
  }

  /** A field as `at` (a version's differences) shows it: the version's own, else the newest shape's. */
  private field(type: string, name: string, at: FieldsAt = NEWEST): ExpandableField | undefined {
    const older = at.get(type);
    if (older && hasOwn(older, name)) return older[name] ?? undefined;
    const fields = this.types.get(type);
    return fields && hasOwn(fields, name) ? fields[name] : undefined;
  }

  /** Whether `at` shows the field differently from the newest shape (it is then expanded once rendered). */
  private static olderOnly(at: FieldsAt, type: string, name: string): boolean {
    const older = at.get(type);
    return older !== undefined && hasOwn(older, name);
  }

  /**
   * Throws the public API's errors for paths that can't be expanded on `rootType`, a list of it,
   * or a search result of it (whose own `total_count` expands too), at `version` (the newest without one).
   */
  check(paths: readonly string[], rootType: string, isList: boolean | 'search', version?: string): void {
    if (paths.length === 0) return;
    const at = version === undefined || !this.versions ? NEWEST : this.fieldsAt(version);
    for (const path of paths) {
      if (isList === 'search' && path === SEARCH_TOTAL) continue;
      const segments = path.split('.');
      let rest = segments;
      if (isList) {
        if (segments[0] !== 'data') {
          const hint = this.refused(rootType, segments, at) === undefined ? ` You may want to try expanding 'data.${path}' instead.` : '';
          throw invalidRequest(`This property cannot be expanded (${echo(segments[0])}).${hint}`, undefined, 'expand');
        }
        rest = segments.slice(1);
        // The list's items are already objects; `data` itself is not an expandable field.
        if (rest.length === 0) throw cannotExpand('data');
      }
      if (rest.length > MAX_EXPAND_DEPTH) {
        throw invalidRequest(`You cannot expand more than ${MAX_EXPAND_DEPTH} levels of a property. Property: ${echo(path)}`, undefined, 'expand');
      }
      const refused = this.refused(rootType, rest, at);
      if (refused !== undefined) throw cannotExpand(refused);
    }
  }

  /** The first segment of `segments` that can't be expanded on `type`, or undefined when the path is valid. */
  private refused(type: string, segments: readonly string[], at: FieldsAt): string | undefined {
    let inList = false;
    for (const [i, segment] of segments.entries()) {
      const last = i === segments.length - 1;
      if (inList) {
        // A list's items are reached through its `data`, which itself is no field.
        if (segment !== 'data' || last) return segment;
        inList = false;
        continue;
      }
      const field = this.field(type, segment, at);
      if (!field || (last && field.kind === 'path')) return segment;
      type = field.type;
      inList = field.list === true;
    }
    return segments.length > 0 ? undefined : '';
  }

  /**
   * `result` expanded along checked `paths` and rendered for the request's version: the newest
   * shape's fields are expanded before rendering; those the version shows differently (an older
   * version's id), on the rendered object, each expanded value then rendered in its turn.
   * No paths: rendering only.
   */
  async render(result: unknown, paths: readonly string[], ctx: RequestContext): Promise<unknown> {
    const versions = this.versions;
    if (paths.length === 0) return versions ? versions.render(result, ctx.apiVersion) : result;
    const at = versions ? this.fieldsAt(ctx.apiVersion) : NEWEST;
    await this.apply(result, paths, ctx, at);
    if (!versions) return result;
    const rendered = versions.render(result, ctx.apiVersion);
    if (at.size > 0) {
      for (const path of paths) await this.eachRoot(rendered, path.split('.'), (node, segments) => this.expandOlder(node, segments, undefined, ctx, at));
    }
    return rendered;
  }

  /** Expands checked paths in place on an object or a list (in the newest shape) and returns it. */
  async apply(result: unknown, paths: readonly string[], ctx: RequestContext, at: FieldsAt = NEWEST): Promise<unknown> {
    for (const path of paths) await this.eachRoot(result, path.split('.'), (node, segments) => this.expandPath(node, segments, undefined, ctx, at));
    return result;
  }

  /** Runs `expand` on the root, or on each item of a list or search result (whose paths start with `data`). */
  private async eachRoot(result: unknown, segments: string[], expand: (node: unknown, segments: string[]) => Promise<void>): Promise<void> {
    if (isObject(result) && (result.object === 'list' || result.object === 'search_result') && Array.isArray(result.data)) {
      // A search's `total_count` is its own, counted by the search.
      if (segments[0] !== 'data') return;
      await Promise.all(result.data.map((item) => expand(item, segments.slice(1))));
    } else {
      await expand(result, segments);
    }
  }

  /** Goes on along `rest` inside `value`, the value of `field`: each element of an array, each item of a list. */
  private static async descend(value: unknown, rest: string[], field: ExpandableField, next: (node: unknown, rest: string[], type: string) => Promise<void>): Promise<void> {
    if (rest.length === 0) return;
    if (field.list) {
      if (isObject(value) && Array.isArray(value.data) && rest[0] === 'data') await Promise.all(value.data.map((item) => next(item, rest.slice(1), field.type)));
    } else if (Array.isArray(value)) {
      await Promise.all(value.map((v) => next(v, rest, field.type)));
    } else {
      await next(value, rest, field.type);
    }
  }

  /**
   * On the newest shape. `type`: the declared type of `node`, for sub-objects that don't name
   * their own. A field the version shows differently is left to `expandOlder`.
   */
  private async expandPath(node: unknown, segments: string[], type: string | undefined, ctx: RequestContext, at: FieldsAt): Promise<void> {
    if (!isObject(node) || segments.length === 0) return;
    const [name, ...rest] = segments;
    const typeName = typeof node.object === 'string' ? node.object : (type ?? '');
    if (ExpandRegistry.olderOnly(at, typeName, name)) return;
    const field = this.field(typeName, name);
    if (!field) return;
    const current = node[name];
    const expand = field.kind === 'ref' ? this.byId.get(field.type) : field.expand;
    if (field.kind === 'withheld') {
      // A value withheld as `undefined` stays absent (a field the SDK types make optional, not nullable).
      const held = node[WITHHELD] as Record<string, unknown> | undefined;
      if (current === undefined) node[name] = held && hasOwn(held, name) ? held[name] : null;
    } else if (expand && Array.isArray(current)) {
      node[name] = await Promise.all(current.map((v) => (isObject(v) ? v : expand(v, node, ctx))));
    } else if (expand && !isObject(current)) {
      node[name] = await expand(current, node, ctx);
    }
    await ExpandRegistry.descend(node[name], rest, field, (child, r, t) => this.expandPath(child, r, t, ctx, at));
  }

  /**
   * On the shape rendered for the version: goes along what `expandPath` expanded to the first
   * field the version shows differently, from which `expandRendered` goes on.
   */
  private async expandOlder(node: unknown, segments: string[], type: string | undefined, ctx: RequestContext, at: FieldsAt): Promise<void> {
    if (!isObject(node) || segments.length === 0) return;
    const [name, ...rest] = segments;
    const typeName = typeof node.object === 'string' ? node.object : (type ?? '');
    if (ExpandRegistry.olderOnly(at, typeName, name)) return this.expandRendered(node, segments, type, ctx, at);
    const field = this.field(typeName, name);
    if (field) await ExpandRegistry.descend(node[name], rest, field, (child, r, t) => this.expandOlder(child, r, t, ctx, at));
  }

  /**
   * On the shape rendered for the version: an id is expanded to the newest shape of its object,
   * which is then expanded along the rest of the path and rendered; an object (a list older
   * versions show whole) is gone through.
   */
  private async expandRendered(node: Record<string, any>, segments: string[], type: string | undefined, ctx: RequestContext, at: FieldsAt): Promise<void> {
    const [name, ...rest] = segments;
    const field = this.field(typeof node.object === 'string' ? node.object : (type ?? ''), name, at);
    if (!field) return;
    const current = node[name];
    const expand = field.kind === 'ref' ? this.byId.get(field.type) : field.expand;
    const further = rest.length > 0 ? [rest.join('.')] : [];
    const expandOne = async (v: unknown) => this.render(await expand!(v, node, ctx), further, ctx);
    if (expand && Array.isArray(current)) {
      node[name] = await Promise.all(current.map((v) => (isObject(v) ? v : expandOne(v))));
    } else if (expand && !isObject(current)) {
      node[name] = await expandOne(current);
      return;
    }
    await ExpandRegistry.descend(node[name], rest, field, (child, r, t) => (isObject(child) ? this.expandRendered(child, r, t, ctx, at) : Promise.resolve()));
  }
}

const isObject = (v: unknown): v is Record<string | symbol, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
