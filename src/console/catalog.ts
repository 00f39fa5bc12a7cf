import { deref, type OpenApiDocument, type OperationSpec } from '../kernel/openapi';
import type { Route } from '../kernel/route';

// What the console can show, read from the API's own route table and OpenAPI document rather than
// listed by hand: every object type with a list operation of its own (a path without parameters,
// so not an account's persons), its search and retrieve operations where it has them, and which
// filters its list takes. A new resource's objects appear in the console by being served.

export interface ObjectKind {
  /** The object type (`customer`, `test_helpers.test_clock`). */
  readonly type: string;
  readonly listPath: string;
  /** `/v1/<resource>/search`, where the type has the search query language. */
  readonly searchPath?: string;
  /** The retrieve operation's path, with its one `{param}` (`/v1/customers/{customer}`). */
  readonly retrievePath?: string;
  /** Whether the list takes `created[gte]`/`created[lte]`. */
  readonly created: boolean;
}

/**
 * Id prefixes of the types whose ids have one (as `newId` makes them), so an id typed in or met in
 * a JSON body finds its type. Coupons (and custom product ids) have none: their pages are reached
 * with `?type=` (every list links so), and a lookup of an unknown id tries the types in FREE_IDS.
 */
const PREFIXES: Readonly<Record<string, string>> = {
  acct: 'account',
  ch: 'charge',
  clock: 'test_helpers.test_clock',
  cus: 'customer',
  evt: 'event',
  fca: 'financial_connections.account',
  fctxn: 'financial_connections.transaction',
  fwdreq: 'forwarding.request',
  ii: 'invoiceitem',
  in: 'invoice',
  inpay: 'invoice_payment',
  pi: 'payment_intent',
  pm: 'payment_method',
  price: 'price',
  prod: 'product',
  promo: 'promotion_code',
  re: 'refund',
  seti: 'setup_intent',
  si: 'subscription_item',
  sub: 'subscription',
  txr: 'tax_rate',
  vr: 'identity.verification_report',
  vs: 'identity.verification_session',
  we: 'webhook_endpoint',
};

/** Types whose ids may be chosen by the caller, tried in turn for an id of no known prefix. */
const FREE_IDS = ['coupon', 'product', 'price'];

/** Shaped like an id: a lowercase prefix, `_`, then letters and digits (what the JSON view links). */
const ID_SHAPE = /^([a-z]+)_[A-Za-z0-9]{6,64}$/;

export class Catalog {
  readonly kinds: readonly ObjectKind[];
  private readonly byType: ReadonlyMap<string, ObjectKind>;
  private readonly specs: ReadonlyMap<string, OperationSpec>;

  /** `document`: the OpenAPI document the operations come from, to read a parameter's values (paramValues). */
  constructor(routes: readonly Route[], operations: readonly OperationSpec[], private readonly document?: OpenApiDocument) {
    const specs = new Map(operations.map((o) => [o.operationId, o]));
    this.specs = specs;
    const gets = routes.filter((r) => r.method === 'get');
    // The sandbox's own lists (3-D Secure challenges, Financial Connections sessions) are test
    // tools with pages of their own (test outcomes), not types with an object page.
    const lists = gets.filter((r) => r.returns.list && !r.path.includes('{') && !r.path.startsWith('/sandbox/'));
    const kinds: ObjectKind[] = [];
    for (const list of lists) {
      // A list nested under another's (an upcoming invoice's lines) lists part of one object, not a type.
      if (lists.some((other) => list.path.startsWith(`${other.path}/`))) continue;
      const type = list.returns.object;
      // `/v1/account` and the like answer one object; the list of a type is the one without parameters.
      const retrieve = gets.find((r) => r.returns.object === type && !r.returns.list && !r.returns.search && r.path.startsWith(`${list.path}/{`) && r.path.split('{').length === 2);
      const search = gets.find((r) => r.returns.object === type && r.returns.search);
      const properties = (specs.get(list.operationId)?.paramsSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
      kinds.push({ type, listPath: list.path, searchPath: search?.path, retrievePath: retrieve?.path, created: 'created' in properties });
    }
    kinds.sort((a, b) => a.type.localeCompare(b.type));
    this.kinds = kinds;
    this.byType = new Map(kinds.map((k) => [k.type, k]));
  }

  kind(type: string): ObjectKind | undefined {
    return this.byType.get(type);
  }

  /** The type an id's prefix names, if the console can show it. */
  typeOfId(id: string): string | undefined {
    const prefix = ID_SHAPE.exec(id)?.[1];
    const type = prefix === undefined ? undefined : PREFIXES[prefix];
    return type !== undefined && this.byType.get(type)?.retrievePath ? type : undefined;
  }

  /** The types an id may be: its prefix's, else those whose ids are free-form. */
  candidateTypes(id: string): readonly string[] {
    const type = this.typeOfId(id);
    if (type) return [type];
    if (ID_SHAPE.test(id) && PREFIXES[ID_SHAPE.exec(id)![1]] !== undefined) return [];
    return FREE_IDS.filter((t) => this.byType.get(t)?.retrievePath);
  }

  /** The retrieve operation's path for this id. */
  retrievePath(type: string, id: string): string | undefined {
    return this.byType.get(type)?.retrievePath?.replace(/\{[^}]+\}/, encodeURIComponent(id));
  }

  /** The values an operation's parameter takes (its schema's `enum`), for a form's choices; none when it has no enum. */
  paramValues(operationId: string, param: string): readonly string[] {
    const schema = (this.specs.get(operationId)?.paramsSchema as { properties?: Record<string, unknown> } | undefined)?.properties?.[param];
    if (schema === undefined || !this.document) return [];
    const values = (deref(this.document, schema) as { enum?: unknown[] }).enum;
    return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [];
  }
}
