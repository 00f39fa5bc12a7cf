import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { findProjectRoot } from '../lib/projectRoot';
import type { Schema } from './coerce';
import type { HttpMethod, Route } from './route';

// The project's own OpenAPI 3.1 document: base.yaml and one YAML file per resource under
// openapi/<area>/, merged at boot.
// It is the source of every operation's request schema, and the router is checked against it.

export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  servers?: unknown[];
  security?: unknown[];
  tags?: unknown[];
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, any>; securitySchemes?: Record<string, any>; [k: string]: any };
}

const METHODS: HttpMethod[] = ['get', 'post', 'delete'];

/**
 * `generatedSchemas` are component schemas whose source of truth is code (event types, API
 * versions), so the document and the validators share one list.
 */
export function loadOpenApiDocument(
  generatedSchemas: Record<string, unknown> = {},
  dir = path.join(findProjectRoot(), 'openapi'),
): OpenApiDocument {
  // base.yaml, then one file per resource in its area's folder (`connect/accounts.yaml`).
  const files = (readdirSync(dir, { recursive: true }) as string[]).map((f) => f.split(path.sep).join('/')).filter((f) => f.endsWith('.yaml')).sort();
  const base = files.includes('base.yaml') ? 'base.yaml' : undefined;
  if (!base) throw new Error(`openapi/base.yaml is missing in ${dir}`);
  const parts = parseFiles(dir, files);
  const doc = parts[base] as OpenApiDocument;
  doc.paths ??= {};
  doc.components ??= { schemas: {} };
  doc.components.schemas ??= {};
  for (const [name, schema] of Object.entries(generatedSchemas)) doc.components.schemas[name] = schema;
  for (const file of files) {
    if (file === base) continue;
    const part = (parts[file] ?? {}) as any;
    for (const [p, item] of Object.entries<any>(part.paths ?? {})) {
      if (doc.paths[p]) throw new Error(`openapi/${file}: path ${p} is already defined`);
      doc.paths[p] = item;
    }
    for (const [section, entries] of Object.entries<any>(part.components ?? {})) {
      const target = (doc.components[section] ??= {});
      for (const [name, value] of Object.entries<any>(entries)) {
        if (target[name]) throw new Error(`openapi/${file}: components.${section}.${name} is already defined`);
        target[name] = value;
      }
    }
  }
  return doc;
}

/** Where the parsed YAML is kept between starts (`npm run build` fills it; a start that finds it stale refills it). */
export const openApiCacheFile = (): string => path.join(findProjectRoot(), 'node_modules', '.cache', 'sandbank', 'openapi.json');

/**
 * Each file's parsed YAML. Parsing them took about a second of a start's CPU (several under load),
 * so the result is kept as JSON, keyed by a hash of every file's name and text: a changed file is
 * parsed again. Writing the cache is best effort (a read-only image just parses).
 */
function parseFiles(dir: string, files: readonly string[]): Record<string, unknown> {
  const texts = files.map((f) => readFileSync(path.join(dir, f), 'utf8'));
  const hash = createHash('sha256');
  files.forEach((f, i) => hash.update(`${f}\0${texts[i]}\0`));
  const key = hash.digest('hex');
  const cacheFile = openApiCacheFile();
  try {
    const cached = JSON.parse(readFileSync(cacheFile, 'utf8')) as { key: string; parts: Record<string, unknown> };
    if (cached.key === key) return cached.parts;
  } catch {
    // none yet, or unreadable: parse
  }
  const parts = Object.fromEntries(files.map((f, i) => [f, parseYaml(texts[i])]));
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    // Several processes may start at once: each writes a file of its own, then renames it into place.
    const temp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify({ key, parts }));
    renameSync(temp, cacheFile);
  } catch {
    // read-only (the image's files are): the next start parses again
  }
  return parts;
}

/** Inlines local `$ref`s (request schemas are trees, so there is no cycle to guard beyond a depth cap). */
export function deref(doc: OpenApiDocument, node: any, depth = 0): any {
  if (depth > 64) throw new Error('OpenAPI $ref nesting too deep');
  if (Array.isArray(node)) return node.map((n) => deref(doc, n, depth + 1));
  if (node === null || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') {
    const match = /^#\/components\/([a-zA-Z]+)\/([^/]+)$/.exec(node.$ref);
    if (!match) throw new Error(`Unsupported $ref ${node.$ref}`);
    const target = doc.components[match[1]]?.[match[2]];
    if (!target) throw new Error(`Unresolved $ref ${node.$ref}`);
    return deref(doc, target, depth + 1);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    // Drop documentation (a string), never a property that happens to be called `description`.
    if ((k === 'description' && typeof v === 'string') || k === 'x-stripeBypassValidation') continue;
    out[k] = deref(doc, v, depth + 1);
  }
  return out;
}

export interface OperationSpec {
  method: HttpMethod;
  path: string;
  operationId: string;
  /** Schema of the merged query + form parameters; path parameters are not part of it. */
  paramsSchema: Schema;
}

export function operationsOf(doc: OpenApiDocument): OperationSpec[] {
  const out: OperationSpec[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      // Kernel endpoints (health, readiness, this document) are served by the app itself.
      if (!op || op['x-kernel']) continue;
      if (!op.operationId) throw new Error(`OpenAPI ${method.toUpperCase()} ${p} has no operationId`);
      const properties: Record<string, Schema> = {};
      const required: string[] = [];
      for (const param of [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x: any) => deref(doc, x))) {
        if (param.in !== 'query') continue;
        properties[param.name] = param.schema ?? {};
        if (param.required) required.push(param.name);
      }
      const form = op.requestBody?.content?.['application/x-www-form-urlencoded']?.schema;
      if (form) {
        const body = deref(doc, form);
        Object.assign(properties, body.properties ?? {});
        required.push(...(body.required ?? []));
      }
      out.push({
        method,
        path: p,
        operationId: op.operationId,
        paramsSchema: { type: 'object', properties, required, additionalProperties: false },
      });
    }
  }
  return out;
}

/** Fails start-up when the router and the document disagree, in either direction. */
export function checkRoutesAgainstDocument(routes: readonly Route[], operations: readonly OperationSpec[]): void {
  const problems: string[] = [];
  const byId = new Map(operations.map((o) => [o.operationId, o]));
  const seen = new Set<string>();
  for (const r of routes) {
    const op = byId.get(r.operationId);
    if (!op) problems.push(`route ${r.method.toUpperCase()} ${r.path} (${r.operationId}) has no operation in openapi/`);
    else if (op.method !== r.method || op.path !== r.path)
      problems.push(`route ${r.operationId} is ${r.method.toUpperCase()} ${r.path} but openapi/ says ${op.method.toUpperCase()} ${op.path}`);
    if (seen.has(r.operationId)) problems.push(`operationId ${r.operationId} is routed twice`);
    seen.add(r.operationId);
  }
  for (const op of operations) {
    if (!seen.has(op.operationId)) problems.push(`operation ${op.operationId} (${op.method.toUpperCase()} ${op.path}) has no route`);
  }
  if (problems.length > 0) throw new Error(`The router does not match the OpenAPI document:\n- ${problems.join('\n- ')}`);
}
