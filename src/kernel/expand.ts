import { echo, invalidRequest } from './errors';
import type { RequestContext } from './route';

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

/** The object registry: per object type, its expandable fields and its retrieve. */
export class ExpandRegistry {
  private readonly types = new Map<string, ExpandableFields>();
  private readonly byId = new Map<string, Expand>();

  register(objectType: string, fields: ExpandableFields, retrieve?: Retrieve): void {
    if (this.types.has(objectType)) throw new Error(`Expandable fields of ${objectType} are declared twice`);
    this.types.set(objectType, fields);
    if (retrieve) this.byId.set(objectType, async (value, _parent, ctx) => (typeof value === 'string' ? retrieve(ctx, value) : value));
  }

  /** Stops start-up when a `ref` names a type no resource retrieves. */
  checkReferences(): void {
    for (const [type, fields] of this.types) {
      for (const [name, field] of Object.entries(fields)) {
        if (field.kind === 'ref' && !this.byId.has(field.type)) throw new Error(`${type}.${name} refers to ${field.type}, which no resource retrieves`);
      }
    }
  }

  private field(type: string, name: string): ExpandableField | undefined {
    const fields = this.types.get(type);
    return fields && Object.prototype.hasOwnProperty.call(fields, name) ? fields[name] : undefined;
  }

  /**
   * Throws the public API's errors for paths that can't be expanded on `rootType`, a list of it,
   * or a search result of it (whose own `total_count` expands too).
   */
  check(paths: readonly string[], rootType: string, isList: boolean | 'search'): void {
    for (const path of paths) {
      if (isList === 'search' && path === SEARCH_TOTAL) continue;
      const segments = path.split('.');
      let rest = segments;
      if (isList) {
        if (segments[0] !== 'data') {
          const hint = this.pathValid(rootType, segments) ? ` You may want to try expanding 'data.${path}' instead.` : '';
          throw invalidRequest(`This property cannot be expanded (${echo(segments[0])}).${hint}`, undefined, 'expand');
        }
        rest = segments.slice(1);
        // The list's items are already objects; `data` itself is not an expandable field.
        if (rest.length === 0) throw invalidRequest('This property cannot be expanded (data).', undefined, 'expand');
      }
      if (rest.length > MAX_EXPAND_DEPTH) {
        throw invalidRequest(`You cannot expand more than ${MAX_EXPAND_DEPTH} levels of a property. Property: ${echo(path)}`, undefined, 'expand');
      }
      let type = rootType;
      for (const [i, segment] of rest.entries()) {
        const field = this.field(type, segment);
        const last = i === rest.length - 1;
        if (!field || (last && field.kind === 'path')) throw invalidRequest(`This property cannot be expanded (${echo(segment)}).`, undefined, 'expand');
        type = field.type;
      }
    }
  }

  private pathValid(type: string, segments: string[]): boolean {
    for (const [i, segment] of segments.entries()) {
      const field = this.field(type, segment);
      if (!field || (i === segments.length - 1 && field.kind === 'path')) return false;
      type = field.type;
    }
    return segments.length > 0;
  }

  /** Expands checked paths in place on an object or a list and returns it. */
  async apply(result: unknown, paths: readonly string[], ctx: RequestContext): Promise<unknown> {
    for (const path of paths) {
      const segments = path.split('.');
      if (isObject(result) && (result.object === 'list' || result.object === 'search_result') && Array.isArray(result.data)) {
        // A search's `total_count` is its own, counted by the search.
        if (segments[0] !== 'data') continue;
        await Promise.all(result.data.map((item) => this.expandPath(item, segments.slice(1), undefined, ctx)));
      } else {
        await this.expandPath(result, segments, undefined, ctx);
      }
    }
    return result;
  }

  /** `type`: the declared type of `node`, for sub-objects that don't name their own. */
  private async expandPath(node: unknown, segments: string[], type: string | undefined, ctx: RequestContext): Promise<void> {
    if (!isObject(node) || segments.length === 0) return;
    const [name, ...rest] = segments;
    const field = this.field(typeof node.object === 'string' ? node.object : (type ?? ''), name);
    if (!field) return;
    const current = node[name];
    const expand = field.kind === 'ref' ? this.byId.get(field.type) : field.expand;
    if (field.kind === 'withheld') {
      // A value withheld as `undefined` stays absent (a field the SDK types make optional, not nullable).
      const held = node[WITHHELD] as Record<string, unknown> | undefined;
      if (current === undefined) node[name] = held && Object.prototype.hasOwnProperty.call(held, name) ? held[name] : null;
    } else if (expand && Array.isArray(current)) {
      node[name] = await Promise.all(current.map((v) => (isObject(v) ? v : expand(v, node, ctx))));
    } else if (expand && !isObject(current)) {
      node[name] = await expand(current, node, ctx);
    }
    const value = node[name];
    if (Array.isArray(value)) await Promise.all(value.map((v) => this.expandPath(v, rest, field.type, ctx)));
    else await this.expandPath(value, rest, field.type, ctx);
  }
}

const isObject = (v: unknown): v is Record<string | symbol, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
