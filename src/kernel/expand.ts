import { invalidRequest } from './errors';
import type { RequestContext } from './route';

// expand[]: each resource declares, per object type, which fields can be expanded, what they
// expand to, and how. Paths are checked against those declarations before any work is done.

export const MAX_EXPAND_DEPTH = 4;

export interface ExpandableField {
  /** Object type of the expanded value, so deeper path segments can be checked. */
  readonly type: string;
  /**
   * Turns the stored value (usually an id, possibly null or absent for fields shown only when
   * expanded) into the expanded value; `parent` is the object holding it.
   */
  readonly expand: (value: unknown, parent: Record<string, unknown>, ctx: RequestContext) => Promise<unknown>;
}

export type ExpandableFields = Readonly<Record<string, ExpandableField>>;

export class ExpandRegistry {
  private readonly types = new Map<string, ExpandableFields>();

  register(objectType: string, fields: ExpandableFields): void {
    if (this.types.has(objectType)) throw new Error(`Expandable fields of ${objectType} are declared twice`);
    this.types.set(objectType, fields);
  }

  private field(type: string, name: string): ExpandableField | undefined {
    const fields = this.types.get(type);
    return fields && Object.prototype.hasOwnProperty.call(fields, name) ? fields[name] : undefined;
  }

  /** Throws the public API's errors for paths that can't be expanded on `rootType` (or a list of it). */
  check(paths: readonly string[], rootType: string, isList: boolean): void {
    for (const path of paths) {
      const segments = path.split('.');
      let rest = segments;
      if (isList) {
        if (segments[0] !== 'data') {
          const hint = this.pathValid(rootType, segments) ? ` You may want to try expanding 'data.${path}' instead.` : '';
          throw invalidRequest(`This property cannot be expanded (${segments[0]}).${hint}`, undefined, 'expand');
        }
        rest = segments.slice(1);
        // The list's items are already objects; `data` itself is not an expandable field.
        if (rest.length === 0) throw invalidRequest('This property cannot be expanded (data).', undefined, 'expand');
      }
      if (rest.length > MAX_EXPAND_DEPTH) {
        throw invalidRequest(`You cannot expand more than ${MAX_EXPAND_DEPTH} levels of a property. Property: ${path}`, undefined, 'expand');
      }
      let type = rootType;
      for (const segment of rest) {
        const field = this.field(type, segment);
        if (!field) throw invalidRequest(`This property cannot be expanded (${segment}).`, undefined, 'expand');
        type = field.type;
      }
    }
  }

  private pathValid(type: string, segments: string[]): boolean {
    for (const segment of segments) {
      const field = this.field(type, segment);
      if (!field) return false;
      type = field.type;
    }
    return segments.length > 0;
  }

  /** Expands checked paths in place on an object or a list and returns it. */
  async apply(result: unknown, paths: readonly string[], ctx: RequestContext): Promise<unknown> {
    for (const path of paths) {
      const segments = path.split('.');
      if (isObject(result) && result.object === 'list' && Array.isArray(result.data)) {
        await Promise.all(result.data.map((item) => this.expandPath(item, segments.slice(1), ctx)));
      } else {
        await this.expandPath(result, segments, ctx);
      }
    }
    return result;
  }

  private async expandPath(node: unknown, segments: string[], ctx: RequestContext): Promise<void> {
    if (!isObject(node) || segments.length === 0) return;
    const [name, ...rest] = segments;
    const field = this.field(String(node.object), name);
    if (!field) return;
    const current = node[name];
    if (Array.isArray(current)) {
      node[name] = await Promise.all(current.map((v) => (isObject(v) ? v : field.expand(v, node, ctx))));
      await Promise.all((node[name] as unknown[]).map((v) => this.expandPath(v, rest, ctx)));
      return;
    }
    if (!isObject(current)) node[name] = await field.expand(current, node, ctx);
    await this.expandPath(node[name], rest, ctx);
  }
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
