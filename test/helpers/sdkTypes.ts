import { readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The official SDK's types as a response contract: the `stripe` package declares, per object,
// which members are always there (a property without `?`), nested interfaces included. Its
// .d.ts files are read with the TypeScript compiler once per test file; a served object is then
// walked along its type, and every required member it lacks is a problem. `null` counts as
// present only where the type allows it. Objects are found by their `object` member, so
// expanded objects, list items and an event's `data.object` are checked as what they are.
//
// Each major of the package describes the API version it pins, so the older majors (installed
// as npm aliases, `stripe-v8` … `stripe-v18`) are the contract of the older versions. From 12
// on they declare `interface`s inside `declare module 'stripe' { namespace Stripe { … } }`, in
// `types/` (8 to 11 in `types/<version>/` beside it); the current one exports them from
// `cjs/resources/`. Every interface with a literal `object` member is found, wherever it sits.

const NODE_MODULES = path.join(__dirname, '..', '..', 'node_modules');

/** The `stripe` packages whose types a body can be checked against. */
export type SdkPackage = 'stripe' | 'stripe-v8' | 'stripe-v11' | 'stripe-v14' | 'stripe-v15' | 'stripe-v17' | 'stripe-v18';

/** Objects the public API doesn't have: the sandbox's own, which no SDK type describes. */
/** Envelopes (lib.d.ts's ApiList, ApiSearchResult): what they hold is checked, not they. */
const ENVELOPES: ReadonlySet<string> = new Set(['list', 'search_result']);
export const SANDBOX_OBJECTS: ReadonlySet<string> = new Set(['webhook_delivery', 'webhook_delivery_attempt', 'account_session_claim', 'sandbox.data_reset', 'sandbox.payment_authentication', 'stripecli_session']);

interface SdkTypes {
  readonly checker: ts.TypeChecker;
  /** Per `object` value: the type of live objects, and of deleted ones (`deleted: true`). */
  readonly byObject: ReadonlyMap<string, ObjectTypes>;
}

interface ObjectTypes {
  live?: ts.Type;
  deleted?: ts.Type;
  /** Variants told apart by a literal `type` (from stripe 14 on, `Stripe.Event` is a union of `AccountUpdatedEvent`…). */
  byType?: Map<string, ts.Type>;
}

const loaded = new Map<SdkPackage, SdkTypes>();

/** Folders that hold no object of the v1 API. */
const SKIPPED = new Set(['V2', 'test', 'crypto', 'net']);

function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : declarationFiles(path.join(dir, entry.name));
    // `…Resource.d.ts` (12 on) declare the methods and their parameters only, no object.
    return entry.name.endsWith('.d.ts') && !entry.name.endsWith('Resource.d.ts') ? [path.join(dir, entry.name)] : [];
  });
}

/**
 * The interfaces declared in `node`, at any depth of modules and namespaces, with their depth;
 * not V2's, nor the parameters' (`namespace AccountCreateParams`, whose `Card` says `object: 'card'` too).
 */
function interfacesIn(node: ts.Node, out: { declaration: ts.InterfaceDeclaration; depth: number }[], depth = 0): typeof out {
  if (ts.isInterfaceDeclaration(node)) out.push({ declaration: node, depth });
  else if (ts.isModuleDeclaration(node) && (node.name.text === 'V2' || node.name.text.endsWith('Params'))) return out;
  else if (ts.isSourceFile(node) || ts.isModuleDeclaration(node) || ts.isModuleBlock(node)) ts.forEachChild(node, (child) => void interfacesIn(child, out, depth + 1));
  return out;
}

function load(pkg: SdkPackage = 'stripe'): SdkTypes {
  const cached = loaded.get(pkg);
  if (cached) return cached;
  const root = path.join(NODE_MODULES, pkg);
  const files = declarationFiles(pkg === 'stripe' ? path.join(root, 'cjs', 'resources') : path.join(root, 'types'));
  const options = { noEmit: true, skipLibCheck: true, types: [], strict: true };
  // The doc comments are most of the text and say nothing to the checker: not parsing them halves the load.
  const host = ts.createCompilerHost(options);
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseNone;
  const program = ts.createProgram({ rootNames: files, options, host });
  const checker = program.getTypeChecker();
  const byObject = new Map<string, ObjectTypes>();
  // The shallowest declaration of an object is its resource (`Stripe.Card`, not `Stripe.Token.Card`… nested in another).
  const declarations = files.flatMap((file) => interfacesIn(program.getSourceFile(file)!, [])).sort((a, b) => a.depth - b.depth);
  {
    for (const { declaration } of declarations) {
      const type = checker.getTypeAtLocation(declaration.name);
      const objectName = literalOf(checker, type, 'object');
      if (typeof objectName !== 'string') continue;
      const entry = byObject.get(objectName) ?? {};
      const deleted = literalOf(checker, type, 'deleted') === true;
      const variant = literalOf(checker, type, 'type');
      if (typeof variant === 'string' && !deleted) (entry.byType ??= new Map()).set(variant, type);
      else if (deleted) entry.deleted ??= type;
      else entry.live ??= type;
      byObject.set(objectName, entry);
    }
    for (const entry of byObject.values()) entry.live ??= entry.byType?.values().next().value;
  }
  const types = { checker, byObject };
  loaded.set(pkg, types);
  return types;
}

/** The literal a required property's type is (`object: 'account'`, `deleted: true`), if it is one. */
function literalOf(checker: ts.TypeChecker, type: ts.Type, name: string): string | boolean | undefined {
  const prop = type.getProperty(name);
  if (!prop || prop.flags & ts.SymbolFlags.Optional) return undefined;
  const propType = checker.getTypeOfSymbol(prop);
  if (propType.isStringLiteral()) return propType.value;
  if (propType.flags & ts.TypeFlags.BooleanLiteral) return checker.typeToString(propType) === 'true';
  return undefined;
}

/** Lets go of a package's types (hundreds of MB of compiler state) once a test file is done with it. */
export function releaseSdkTypes(pkg: SdkPackage): void {
  loaded.delete(pkg);
}

/** Whether the SDK has a type for objects with this `object` value. */
export function hasSdkType(objectName: string, pkg: SdkPackage = 'stripe'): boolean {
  return load(pkg).byObject.has(objectName);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function members(type: ts.Type): ts.Type[] {
  return type.isUnion() ? type.types : [type];
}

function allowsNull(type: ts.Type): boolean {
  return members(type).some((t) => t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Any | ts.TypeFlags.Unknown));
}

/** The member of a union a JSON object is: the one whose `object` literal it carries, else the only object type. */
function objectMember(checker: ts.TypeChecker, type: ts.Type, value: Record<string, unknown>): ts.Type | undefined {
  const candidates = members(type).filter((t) => t.flags & ts.TypeFlags.Object && !checker.isArrayType(t));
  if (candidates.length <= 1) return candidates[0];
  const same = candidates.filter((t) => literalOf(checker, t, 'object') === value.object);
  // An object and its deleted form say the same `object`; `deleted: true` tells them apart.
  return same.find((t) => (literalOf(checker, t, 'deleted') === true) === (value.deleted === true)) ?? same[0] ?? candidates[0];
}

const MAX_DEPTH = 12;

function walk(sdk: SdkTypes, value: unknown, type: ts.Type, at: string, problems: string[], depth: number): void {
  const { checker } = sdk;
  if (depth > MAX_DEPTH || type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  if (value === null) {
    if (!allowsNull(type)) problems.push(`${at} is null; the SDK type is ${checker.typeToString(type)}`);
    return;
  }
  if (Array.isArray(value)) {
    const array = members(type).find((t) => checker.isArrayType(t));
    const element = array && checker.getTypeArguments(array as ts.TypeReference)[0];
    if (element) value.forEach((item, i) => walk(sdk, item, element, `${at}[${i}]`, problems, depth + 1));
    return;
  }
  if (!isPlainObject(value)) return;
  const objectType = objectMember(checker, type, value);
  if (!objectType) return;
  // A member typed loosely (an older event's `data.object: Object`) holding a typed object: that
  // object is checked as what it is, on its own.
  if (typeof value.object === 'string' && !objectType.getProperty('object') && sdk.byObject.has(value.object)) return;
  for (const prop of checker.getPropertiesOfType(objectType)) {
    const name = prop.getName();
    // An event's previous values hold only what changed, nested hashes too (`{invoice_settings:
    // {default_payment_method: null}}`), which the types' shallow `Partial<…>` doesn't say.
    if (name === 'previous_attributes') continue;
    const child = value[name];
    if (child === undefined) {
      if (!(prop.flags & ts.SymbolFlags.Optional)) problems.push(`${at}.${name} is missing`);
      continue;
    }
    walk(sdk, child, checker.getTypeOfSymbol(prop), `${at}.${name}`, problems, depth + 1);
  }
}

/**
 * What a served body lacks against the SDK's types: every object in it (found by its `object`
 * member, wherever it sits) is checked against the type of that object; an object the SDK has
 * no type for is a problem too, unless it is one of the sandbox's own.
 */
export function sdkTypeProblems(body: unknown, pkg: SdkPackage = 'stripe'): string[] {
  const sdk = load(pkg);
  const problems: string[] = [];
  const visit = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${at}[${i}]`));
    if (!isPlainObject(node)) return;
    const objectName = node.object;
    if (typeof objectName === 'string' && !ENVELOPES.has(objectName) && !SANDBOX_OBJECTS.has(objectName)) {
      const entry = sdk.byObject.get(objectName);
      const variant = typeof node.type === 'string' ? entry?.byType?.get(node.type) : undefined;
      const type = node.deleted === true ? (entry?.deleted ?? entry?.live) : (variant ?? entry?.live);
      if (type) walk(sdk, node, type, `${at}<${objectName}>`, problems, 0);
      else problems.push(`${at}: the SDK has no type for objects "${objectName}"`);
    }
    for (const [key, child] of Object.entries(node)) visit(child, `${at}.${key}`);
  };
  visit(body, '$');
  return [...new Set(problems)];
}

export function expectMatchesSdkTypes(body: unknown, label = 'the body', pkg: SdkPackage = 'stripe'): void {
  const problems = sdkTypeProblems(body, pkg);
  if (problems.length > 0) {
    const text = JSON.stringify(body);
    throw new Error(
      `${label} lacks members the ${pkg} package's types declare:\n- ${problems.join('\n- ')}\nbody: ${text.length > 2000 ? `${text.slice(0, 2000)}…` : text}`,
    );
  }
}

/**
 * Members an older major's types declare that the public API did not show at that major's version
 * either: stripe-node later corrected its types, naming no API version for the change (the API's
 * behaviour did not change, so no version change undoes it). Each is one package, one path.
 */
export const SDK_TYPE_ERRATA: readonly { readonly pkgs: readonly SdkPackage[]; readonly problem: RegExp; readonly why: string }[] = [
  {
    pkgs: ['stripe-v8', 'stripe-v11', 'stripe-v14', 'stripe-v15', 'stripe-v17'],
    problem: /^\$<invoice>\.id is missing$/,
    why: 'Invoice.id is typed required, yet its own comment says "always present unless the invoice is an upcoming invoice" (GET /v1/invoices/upcoming, before 2025-03-31.basil).',
  },
  {
    pkgs: ['stripe-v8', 'stripe-v11', 'stripe-v14'],
    problem: /(<identity\.verification_(report|session)>|<event>\.data\.object).*\.(document\.(dob|expiration_date|number)|id_number\.(dob|id_number)|verified_outputs(\.(dob|id_number))?) is missing$/,
    why:
      'stripe-node 15.5.0 (2024-05-02): "Fix properties incorrectly marked as required in the OpenAPI spec": the report\'s document.dob, ' +
      'expiration_date, number, id_number.dob, id_number.id_number and the session\'s verified_outputs (dob, id_number) are shown only when expanded.',
  },
  {
    pkgs: ['stripe-v11', 'stripe-v14'],
    problem: /<(apps\.secret|event)>\.(data\.object\.)?payload is missing$/,
    why: 'stripe-node 15.5.0, the same correction: Apps.Secret.payload is shown only when expanded.',
  },
  {
    pkgs: ['stripe-v8', 'stripe-v11', 'stripe-v14'],
    problem: /<(account|event)>\.(data\.object\.)?settings\.bacs_debit_payments\.display_name is null; the SDK type is string \| undefined$/,
    why: 'stripe-node 14.5.0 (2023-11-16, pinning 2023-10-16 still): Account.settings.bacs_debit_payments.display_name typed string | null.',
  },
  {
    pkgs: ['stripe-v14'],
    problem: /<forwarding\.request>\.config is missing$/,
    why: 'stripe-node 15.2.0 (2024-04-16): config removed from Forwarding.Request, "no longer used by the Forwarding Request API" (at every version).',
  },
  {
    pkgs: ['stripe-v11', 'stripe-v14'],
    problem: /(<charge>|\.latest_charge|<event>\.data\.object)\.refunds is missing$/,
    why:
      'stripe-node 15.5.0 (2024-05-02), the same correction: Charge.refunds made optional. From 2022-11-15 a charge shows its refunds ' +
      'only when expanded ("The Charges object no longer auto-expands refunds by default").',
  },
  {
    pkgs: ['stripe-v8'],
    problem: /(<charge>|\.charges\.data\[\d+\]|<event>\.data\.object)\.order is missing$/,
    why: 'stripe-node 9.0.0: "Removed references from other resources: Charge.order" (the Orders API was removed, at every version; no API version).',
  },
];

const isErratum = (pkg: SdkPackage, problem: string): boolean => SDK_TYPE_ERRATA.some((e) => e.pkgs.includes(pkg) && e.problem.test(problem));

/**
 * What a body served at an older major's version lacks against that major's types: an object the
 * major has no type for postdates it (not a problem), and the types' own errata are left out.
 */
export function sdkVersionProblems(body: unknown, pkg: SdkPackage): string[] {
  return sdkTypeProblems(body, pkg).filter((p) => {
    const unknown = /the SDK has no type for objects "([^"]+)"/.exec(p);
    return (!unknown || hasSdkType(unknown[1], pkg)) && !isErratum(pkg, p);
  });
}

/** The object types a property's type names besides `string` and null (`string | Stripe.Customer | Stripe.DeletedCustomer`). */
function expandsTo(sdk: SdkTypes, type: ts.Type): string[] | undefined {
  const { checker } = sdk;
  const parts = members(type).filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
  const element = (t: ts.Type) => (checker.isArrayType(t) ? checker.getTypeArguments(t as ts.TypeReference)[0] : undefined);
  // `Array<string | Stripe.Discount>` (an invoice's discounts): each element an id or its object.
  if (parts.length === 1 && element(parts[0])) return expandsTo(sdk, element(parts[0])!);
  if (!parts.some((t) => t.flags & ts.TypeFlags.String)) return undefined;
  const objects = parts.flatMap((t) => {
    const name = t.flags & ts.TypeFlags.Object ? literalOf(checker, t, 'object') : undefined;
    return typeof name === 'string' ? [name] : [];
  });
  return objects.length > 0 ? [...new Set(objects)] : undefined;
}

/** An `ApiList<…>` (lib.d.ts): `object: 'list'` and `data`. */
const isApiList = (checker: ts.TypeChecker, type: ts.Type): boolean => {
  const list = members(type).find((t) => t.flags & ts.TypeFlags.Object && literalOf(checker, t, 'object') === 'list');
  return list !== undefined;
};

/**
 * The fields of an object type the SDK's types mark expandable: an id or its object (`string |
 * Stripe.Customer`, an array of them too), and a list the object has only when asked
 * (an optional `ApiList`), at any depth of its sub-objects (`invoice_settings.default_payment_method`),
 * with what each expands to (`list` for a list).
 */
export function sdkExpandableFields(objectName: string, pkg: SdkPackage = 'stripe'): { path: string; to: string[] }[] {
  const sdk = load(pkg);
  const { checker } = sdk;
  const root = sdk.byObject.get(objectName)?.live;
  const out: { path: string; to: string[] }[] = [];
  const visit = (type: ts.Type, prefix: string, depth: number) => {
    for (const prop of checker.getPropertiesOfType(type)) {
      const propType = checker.getTypeOfSymbol(prop);
      const path = `${prefix}${prop.getName()}`;
      const to = expandsTo(sdk, propType);
      if (to) {
        out.push({ path, to });
        continue;
      }
      if (prop.flags & ts.SymbolFlags.Optional && isApiList(checker, propType)) {
        out.push({ path, to: ['list'] });
        continue;
      }
      // A sub-object of its own (not another resource, nor a list): its fields may be expandable too.
      const sub = members(propType).find((t) => t.flags & ts.TypeFlags.Object && !checker.isArrayType(t) && literalOf(checker, t, 'object') === undefined);
      if (sub && depth < 2 && checker.getPropertiesOfType(sub).length > 0) visit(sub, `${path}.`, depth + 1);
    }
  };
  if (root) visit(root, '', 0);
  return out;
}
