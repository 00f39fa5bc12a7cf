// A small parser for the subset of the Prisma schema language that prisma/schema.prisma uses:
// generator/datasource blocks, models with scalar and relation fields, `?` and `[]`, @id, @unique,
// @default, @map, @relation, @db.*, @@id, @@unique, @@index, @@map and comments.
// Anything outside that subset (enums, views, composite types, other attributes or arguments)
// throws, so the schema test can never pass by silently ignoring part of the schema.

import fs from 'node:fs';

export type PrismaValue =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: string }
  | { kind: 'identifier'; value: string }
  | { kind: 'call'; name: string; args: PrismaArgument[] }
  | { kind: 'array'; items: PrismaValue[] };

export interface PrismaArgument {
  name: string | null;
  value: PrismaValue;
}

export interface PrismaAttribute {
  /** `id`, `default`, `db.Timestamptz`, ... (without the `@`). */
  name: string;
  args: PrismaArgument[];
  line: number;
}

export const SCALAR_TYPES = ['String', 'Int', 'BigInt', 'Float', 'Decimal', 'Boolean', 'DateTime', 'Json', 'Bytes'] as const;
export type ScalarType = (typeof SCALAR_TYPES)[number];

export type ReferentialAction = 'Cascade' | 'Restrict' | 'NoAction' | 'SetNull' | 'SetDefault';
const REFERENTIAL_ACTIONS: readonly string[] = ['Cascade', 'Restrict', 'NoAction', 'SetNull', 'SetDefault'];

export interface PrismaRelation {
  name: string | null;
  /** Scalar field names of this model (empty on the back-relation side). */
  fields: string[];
  /** Field names of the referenced model. */
  references: string[];
  onDelete: ReferentialAction | null;
  onUpdate: ReferentialAction | null;
  map: string | null;
}

interface FieldBase {
  name: string;
  type: string;
  optional: boolean;
  list: boolean;
  attributes: PrismaAttribute[];
  documentation: string | null;
  line: number;
}

export interface PrismaScalarField extends FieldBase {
  kind: 'scalar';
  type: ScalarType;
  /** @map or the field name. */
  columnName: string;
  isId: boolean;
  /** Field-level @unique (with its `map:` if any). */
  unique: { map: string | null } | null;
  default: PrismaValue | null;
  nativeType: { name: string; args: string[] } | null;
}

export interface PrismaRelationField extends FieldBase {
  kind: 'relation';
  relation: PrismaRelation;
}

export type PrismaField = PrismaScalarField | PrismaRelationField;

export interface PrismaIndex {
  fields: string[];
  name: string | null;
  map: string | null;
}

export interface PrismaModel {
  name: string;
  /** @@map or the model name. */
  tableName: string;
  fields: PrismaField[];
  /** @@id, or the @id field; null when the model has neither. */
  id: PrismaIndex | null;
  /** Field-level @unique and @@unique, in declaration order. */
  uniques: PrismaIndex[];
  indexes: PrismaIndex[];
  documentation: string | null;
  line: number;
}

export interface PrismaConfigBlock {
  kind: 'generator' | 'datasource';
  name: string;
  properties: Record<string, PrismaValue>;
}

export interface PrismaSchema {
  models: PrismaModel[];
  blocks: PrismaConfigBlock[];
}

export class PrismaSchemaError extends Error {}

// ---------------------------------------------------------------------------------------------
// Tokenizer

type TokenKind = 'ident' | 'string' | 'number' | 'punct' | 'newline' | 'doc' | 'eof';

interface Token {
  kind: TokenKind;
  value: string;
  line: number;
  col: number;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const fail = (msg: string): never => {
    throw new PrismaSchemaError(`schema.prisma:${line}:${i - lineStart + 1}: ${msg}`);
  };
  while (i < source.length) {
    const ch = source[i]!;
    const col = i - lineStart + 1;
    if (ch === '\n') {
      tokens.push({ kind: 'newline', value: '\n', line, col });
      i++;
      line++;
      lineStart = i;
    } else if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
    } else if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      const text = source.slice(i, end === -1 ? source.length : end);
      if (text.startsWith('///')) tokens.push({ kind: 'doc', value: text.slice(3).trim(), line, col });
      i += text.length;
    } else if (ch === '"') {
      let value = '';
      i++;
      for (;;) {
        const c = source[i];
        if (c === undefined || c === '\n') fail('unterminated string');
        if (c === '"') break;
        if (c === '\\') {
          const next = source[i + 1];
          const escapes: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t', r: '\r', '/': '/' };
          if (next === undefined || !(next in escapes)) fail(`unsupported escape \\${next ?? ''} in string`);
          value += escapes[next!];
          i += 2;
        } else {
          value += c;
          i++;
        }
      }
      i++;
      tokens.push({ kind: 'string', value, line, col });
    } else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))!;
      tokens.push({ kind: 'ident', value: m[0], line, col });
      i += m[0].length;
    } else if (/[-0-9]/.test(ch)) {
      const m = /^-?[0-9]+(\.[0-9]+)?/.exec(source.slice(i));
      if (!m) fail(`unexpected character ${JSON.stringify(ch)}`);
      tokens.push({ kind: 'number', value: m![0], line, col });
      i += m![0].length;
    } else if (source.startsWith('@@', i)) {
      tokens.push({ kind: 'punct', value: '@@', line, col });
      i += 2;
    } else if ('{}()[],:=?@.'.includes(ch)) {
      tokens.push({ kind: 'punct', value: ch, line, col });
      i++;
    } else {
      fail(`unexpected character ${JSON.stringify(ch)}`);
    }
  }
  tokens.push({ kind: 'eof', value: '', line, col: i - lineStart + 1 });
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Syntax

interface RawField {
  name: string;
  type: string;
  optional: boolean;
  list: boolean;
  attributes: PrismaAttribute[];
  documentation: string | null;
  line: number;
}

interface RawModel {
  name: string;
  fields: RawField[];
  blockAttributes: PrismaAttribute[];
  documentation: string | null;
  line: number;
}

class Parser {
  private pos = 0;
  private docs: string[] = [];

  constructor(private readonly tokens: Token[]) {}

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== 'eof') this.pos++;
    return token;
  }

  private fail(token: Token, msg: string): never {
    throw new PrismaSchemaError(`schema.prisma:${token.line}:${token.col}: ${msg}`);
  }

  private describe(token: Token): string {
    if (token.kind === 'eof') return 'end of file';
    if (token.kind === 'newline') return 'end of line';
    return JSON.stringify(token.value);
  }

  private isPunct(value: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.kind === 'punct' && token.value === value;
  }

  private expectPunct(value: string): Token {
    const token = this.next();
    if (token.kind !== 'punct' || token.value !== value) this.fail(token, `expected "${value}", found ${this.describe(token)}`);
    return token;
  }

  private expectIdent(what: string): Token {
    const token = this.next();
    if (token.kind !== 'ident') this.fail(token, `expected ${what}, found ${this.describe(token)}`);
    return token;
  }

  /** Skips blank lines and collects `///` comments for the next declaration. */
  private skipBlank(): void {
    for (;;) {
      const token = this.peek();
      if (token.kind === 'newline') this.next();
      else if (token.kind === 'doc') this.docs.push(this.next().value);
      else return;
    }
  }

  private takeDocs(): string | null {
    const docs = this.docs.length ? this.docs.join('\n') : null;
    this.docs = [];
    return docs;
  }

  private endOfLine(): void {
    const token = this.peek();
    if (token.kind === 'newline') this.next();
    else if (token.kind === 'doc') this.fail(token, '`///` comments must be on their own line');
    else if (!(token.kind === 'punct' && token.value === '}') && token.kind !== 'eof') {
      this.fail(token, `unexpected ${this.describe(token)}`);
    }
  }

  parse(): { models: RawModel[]; blocks: PrismaConfigBlock[] } {
    const models: RawModel[] = [];
    const blocks: PrismaConfigBlock[] = [];
    for (;;) {
      this.skipBlank();
      const token = this.peek();
      if (token.kind === 'eof') break;
      const keyword = this.expectIdent('a block keyword');
      if (keyword.value === 'model') models.push(this.parseModel(keyword));
      else if (keyword.value === 'generator' || keyword.value === 'datasource') blocks.push(this.parseConfigBlock(keyword.value));
      else this.fail(keyword, `unsupported block "${keyword.value}" (only model, generator and datasource are understood)`);
    }
    return { models, blocks };
  }

  private parseConfigBlock(kind: 'generator' | 'datasource'): PrismaConfigBlock {
    this.takeDocs();
    const name = this.expectIdent(`${kind} name`).value;
    this.expectPunct('{');
    const properties: Record<string, PrismaValue> = {};
    for (;;) {
      this.skipBlank();
      if (this.isPunct('}')) break;
      const key = this.expectIdent('a property name');
      if (key.value in properties) this.fail(key, `duplicate property "${key.value}"`);
      this.expectPunct('=');
      properties[key.value] = this.parseValue();
      this.endOfLine();
    }
    this.expectPunct('}');
    return { kind, name, properties };
  }

  private parseModel(keyword: Token): RawModel {
    const documentation = this.takeDocs();
    const name = this.expectIdent('model name').value;
    this.expectPunct('{');
    const fields: RawField[] = [];
    const blockAttributes: PrismaAttribute[] = [];
    for (;;) {
      this.skipBlank();
      if (this.isPunct('}')) break;
      if (this.isPunct('@@')) {
        this.takeDocs();
        blockAttributes.push(this.parseAttribute('@@'));
        while (this.isPunct('@@')) blockAttributes.push(this.parseAttribute('@@'));
        this.endOfLine();
        continue;
      }
      const fieldDocs = this.takeDocs();
      const fieldName = this.expectIdent('a field name or "}"');
      const typeToken = this.expectIdent(`the type of field ${fieldName.value}`);
      if (this.isPunct('(')) this.fail(typeToken, `unsupported type ${typeToken.value}(...)`);
      let optional = false;
      let list = false;
      if (this.isPunct('?')) {
        this.next();
        optional = true;
      } else if (this.isPunct('[')) {
        this.next();
        this.expectPunct(']');
        list = true;
      }
      if (this.isPunct('?') || this.isPunct('[')) this.fail(this.peek(), 'a field is either optional or a list, not both');
      const attributes: PrismaAttribute[] = [];
      while (this.isPunct('@')) attributes.push(this.parseAttribute('@'));
      this.endOfLine();
      fields.push({ name: fieldName.value, type: typeToken.value, optional, list, attributes, documentation: fieldDocs, line: fieldName.line });
    }
    this.expectPunct('}');
    return { name, fields, blockAttributes, documentation, line: keyword.line };
  }

  private parseAttribute(prefix: '@' | '@@'): PrismaAttribute {
    const at = this.expectPunct(prefix);
    let name = this.expectIdent('an attribute name').value;
    while (this.isPunct('.')) {
      this.next();
      name += '.' + this.expectIdent('an attribute name').value;
    }
    const args = this.isPunct('(') ? this.parseArguments() : [];
    return { name, args, line: at.line };
  }

  private parseArguments(): PrismaArgument[] {
    this.expectPunct('(');
    const args: PrismaArgument[] = [];
    while (!this.isPunct(')')) {
      if (args.length) this.expectPunct(',');
      if (this.peek().kind === 'ident' && this.isPunct(':', 1)) {
        const name = this.next().value;
        this.next();
        args.push({ name, value: this.parseValue() });
      } else {
        args.push({ name: null, value: this.parseValue() });
      }
    }
    this.expectPunct(')');
    return args;
  }

  private parseValue(): PrismaValue {
    const token = this.peek();
    if (token.kind === 'string') return { kind: 'string', value: this.next().value };
    if (token.kind === 'number') return { kind: 'number', value: this.next().value };
    if (token.kind === 'ident') {
      const name = this.next().value;
      if (this.isPunct('(')) return { kind: 'call', name, args: this.parseArguments() };
      return { kind: 'identifier', value: name };
    }
    if (this.isPunct('[')) {
      this.next();
      const items: PrismaValue[] = [];
      while (!this.isPunct(']')) {
        if (items.length) this.expectPunct(',');
        items.push(this.parseValue());
      }
      this.expectPunct(']');
      return { kind: 'array', items };
    }
    return this.fail(token, `expected a value, found ${this.describe(token)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Semantics

function fail(line: number, msg: string): never {
  throw new PrismaSchemaError(`schema.prisma:${line}: ${msg}`);
}

/** Checks an attribute's arguments: positional ones first (at most `positional`), then the named ones allowed. */
function checkArgs(attr: PrismaAttribute, where: string, positional: number, named: string[]): Map<string | number, PrismaValue> {
  const out = new Map<string | number, PrismaValue>();
  let index = 0;
  for (const arg of attr.args) {
    if (arg.name === null) {
      if (index >= positional) fail(attr.line, `${where}: too many arguments to @${attr.name}`);
      out.set(index++, arg.value);
    } else {
      if (!named.includes(arg.name)) fail(attr.line, `${where}: unsupported argument "${arg.name}" of @${attr.name}`);
      if (out.has(arg.name)) fail(attr.line, `${where}: duplicate argument "${arg.name}" of @${attr.name}`);
      out.set(arg.name, arg.value);
    }
  }
  return out;
}

function stringArg(value: PrismaValue | undefined, line: number, what: string): string | null {
  if (value === undefined) return null;
  if (value.kind !== 'string') fail(line, `${what} must be a string`);
  return value.value;
}

/** Field names; with `withOps`, a field may carry an operator class (`email(ops: raw("gin_trgm_ops"))`), which only names its column. */
function fieldList(value: PrismaValue | undefined, line: number, what: string, withOps = false): string[] {
  if (value === undefined || value.kind !== 'array') fail(line, `${what} must be a list of field names`);
  return value.items.map((item) => {
    if (withOps && item.kind === 'call' && item.args.length === 1 && item.args[0].name === 'ops') return item.name;
    if (item.kind !== 'identifier') fail(line, `${what}: only plain field names are understood (no sort/length arguments; ops only in @@index)`);
    return item.value;
  });
}

function actionArg(value: PrismaValue | undefined, line: number, what: string): ReferentialAction | null {
  if (value === undefined) return null;
  if (value.kind !== 'identifier' || !REFERENTIAL_ACTIONS.includes(value.value)) fail(line, `${what} must be one of ${REFERENTIAL_ACTIONS.join(', ')}`);
  return value.value as ReferentialAction;
}

function checkDefault(value: PrismaValue, field: RawField, where: string): void {
  const ok = (() => {
    switch (value.kind) {
      case 'string':
        return field.type === 'String' || field.type === 'Json' || field.type === 'DateTime' || field.type === 'Decimal' || field.type === 'Bytes';
      case 'number':
        return ['Int', 'BigInt', 'Float', 'Decimal'].includes(field.type) && (field.type === 'Float' || field.type === 'Decimal' || !value.value.includes('.'));
      case 'identifier':
        return field.type === 'Boolean' && (value.value === 'true' || value.value === 'false');
      case 'call':
        if (value.name === 'dbgenerated') return value.args.length <= 1 && value.args.every((a) => a.name === null && a.value.kind === 'string');
        if (value.args.length) return false;
        if (value.name === 'autoincrement') return field.type === 'Int' || field.type === 'BigInt';
        if (value.name === 'now') return field.type === 'DateTime';
        if (['uuid', 'cuid', 'nanoid', 'ulid'].includes(value.name)) return field.type === 'String';
        return false;
      case 'array':
        return false;
    }
  })();
  if (!ok) fail(field.line, `${where}: unsupported @default for a ${field.type}${field.list ? '[]' : ''} field`);
}

function resolveModel(raw: RawModel, modelNames: Set<string>): PrismaModel {
  const fields: PrismaField[] = [];
  const uniques: PrismaIndex[] = [];
  const indexes: PrismaIndex[] = [];
  let id: PrismaIndex | null = null;
  let tableName = raw.name;
  const seen = new Set<string>();

  for (const f of raw.fields) {
    const where = `${raw.name}.${f.name}`;
    if (seen.has(f.name)) fail(f.line, `duplicate field ${where}`);
    seen.add(f.name);
    const attrNames = new Set<string>();
    for (const a of f.attributes) {
      const key = a.name.startsWith('db.') ? 'db.*' : a.name;
      if (attrNames.has(key)) fail(a.line, `${where}: duplicate @${a.name}`);
      attrNames.add(key);
    }

    if ((SCALAR_TYPES as readonly string[]).includes(f.type)) {
      const field: PrismaScalarField = {
        ...f,
        kind: 'scalar',
        type: f.type as ScalarType,
        columnName: f.name,
        isId: false,
        unique: null,
        default: null,
        nativeType: null,
      };
      for (const a of f.attributes) {
        if (a.name === 'id') {
          const args = checkArgs(a, where, 0, ['map']);
          if (args.has('map')) fail(a.line, `${where}: @id(map:) is not supported`);
          if (f.optional || f.list) fail(a.line, `${where}: an @id field must be required`);
          field.isId = true;
        } else if (a.name === 'unique') {
          const args = checkArgs(a, where, 0, ['map']);
          field.unique = { map: stringArg(args.get('map'), a.line, `${where} @unique(map:)`) };
        } else if (a.name === 'default') {
          const args = checkArgs(a, where, 1, []);
          const value = args.get(0);
          if (!value) fail(a.line, `${where}: @default needs a value`);
          checkDefault(value!, f, where);
          field.default = value!;
        } else if (a.name === 'map') {
          const args = checkArgs(a, where, 1, []);
          const name = stringArg(args.get(0), a.line, `${where} @map`);
          if (!name) fail(a.line, `${where}: @map needs a name`);
          field.columnName = name!;
        } else if (a.name.startsWith('db.') && a.name.split('.').length === 2) {
          const args = checkArgs(a, where, 2, []);
          const values = [...args.values()].map((v) => {
            if (v.kind !== 'number') fail(a.line, `${where}: @${a.name} takes numeric arguments`);
            return v.value;
          });
          field.nativeType = { name: a.name.slice(3), args: values };
        } else {
          fail(a.line, `${where}: unsupported attribute @${a.name} on a scalar field`);
        }
      }
      fields.push(field);
    } else if (modelNames.has(f.type)) {
      const relation: PrismaRelation = { name: null, fields: [], references: [], onDelete: null, onUpdate: null, map: null };
      for (const a of f.attributes) {
        if (a.name !== 'relation') fail(a.line, `${where}: unsupported attribute @${a.name} on a relation field`);
        const args = checkArgs(a, where, 1, ['name', 'fields', 'references', 'onDelete', 'onUpdate', 'map']);
        if (args.has(0) && args.has('name')) fail(a.line, `${where}: relation name given twice`);
        relation.name = stringArg(args.get(0) ?? args.get('name'), a.line, `${where} relation name`);
        if (args.has('fields')) relation.fields = fieldList(args.get('fields'), a.line, `${where} fields`);
        if (args.has('references')) relation.references = fieldList(args.get('references'), a.line, `${where} references`);
        if (relation.fields.length !== relation.references.length) fail(a.line, `${where}: fields and references must have the same length`);
        relation.onDelete = actionArg(args.get('onDelete'), a.line, `${where} onDelete`);
        relation.onUpdate = actionArg(args.get('onUpdate'), a.line, `${where} onUpdate`);
        relation.map = stringArg(args.get('map'), a.line, `${where} @relation(map:)`);
        if (!relation.fields.length && (relation.onDelete || relation.onUpdate || relation.map)) {
          fail(a.line, `${where}: onDelete/onUpdate/map belong on the side of the relation that has fields:`);
        }
      }
      if (relation.fields.length && f.list) fail(f.line, `${where}: a list relation field cannot have fields:`);
      fields.push({ ...f, kind: 'relation', relation });
    } else {
      fail(f.line, `${where}: unsupported type "${f.type}" (not a scalar type or a model; enums and composite types are not understood)`);
    }
  }

  const scalar = (name: string, line: number, what: string): PrismaScalarField => {
    const field = fields.find((x) => x.name === name);
    if (!field) fail(line, `${raw.name} ${what}: no field named "${name}"`);
    if (field!.kind !== 'scalar') fail(line, `${raw.name} ${what}: "${name}" is not a scalar field`);
    return field as PrismaScalarField;
  };

  for (const field of fields) {
    if (field.kind === 'scalar') {
      if (field.isId) {
        if (id) fail(field.line, `${raw.name}: more than one @id`);
        id = { fields: [field.name], name: null, map: null };
      }
      if (field.unique) uniques.push({ fields: [field.name], name: null, map: field.unique.map });
    } else {
      for (const name of field.relation.fields) scalar(name, field.line, `@relation(fields:) of ${field.name}`);
    }
  }

  let mapped = false;
  for (const a of raw.blockAttributes) {
    const where = `${raw.name} @@${a.name}`;
    if (a.name === 'map') {
      if (mapped) fail(a.line, `${raw.name}: duplicate @@map`);
      const args = checkArgs(a, where, 1, []);
      const name = stringArg(args.get(0), a.line, where);
      if (!name) fail(a.line, `${where} needs a name`);
      tableName = name!;
      mapped = true;
    } else if (a.name === 'id' || a.name === 'unique' || a.name === 'index') {
      // An index's `type` (Gin) is not compared: the test reads columns and names.
      const args = checkArgs(a, where, 1, a.name === 'index' ? ['fields', 'map', 'type'] : ['fields', 'name', 'map']);
      if (args.has(0) && args.has('fields')) fail(a.line, `${where}: fields given twice`);
      const index: PrismaIndex = {
        fields: fieldList(args.get(0) ?? args.get('fields'), a.line, where, a.name === 'index'),
        name: stringArg(args.get('name'), a.line, `${where}(name:)`),
        map: stringArg(args.get('map'), a.line, `${where}(map:)`),
      };
      if (!index.fields.length) fail(a.line, `${where} needs at least one field`);
      for (const name of index.fields) scalar(name, a.line, where);
      if (a.name === 'id') {
        if (id) fail(a.line, `${raw.name}: more than one primary key`);
        if (index.map) fail(a.line, `${where}(map:) is not supported`);
        for (const name of index.fields) if (scalar(name, a.line, where).optional) fail(a.line, `${where}: field ${name} must be required`);
        id = index;
      } else if (a.name === 'unique') {
        uniques.push(index);
      } else {
        indexes.push(index);
      }
    } else {
      fail(a.line, `${raw.name}: unsupported block attribute @@${a.name}`);
    }
  }

  return { name: raw.name, tableName, fields, id, uniques, indexes, documentation: raw.documentation, line: raw.line };
}

export function parsePrismaSchema(source: string): PrismaSchema {
  const { models: rawModels, blocks } = new Parser(tokenize(source)).parse();
  const modelNames = new Set<string>();
  for (const m of rawModels) {
    if (modelNames.has(m.name)) fail(m.line, `duplicate model ${m.name}`);
    modelNames.add(m.name);
  }
  const models = rawModels.map((m) => resolveModel(m, modelNames));

  const tables = new Set<string>();
  for (const model of models) {
    if (tables.has(model.tableName)) fail(model.line, `two models map to table ${model.tableName}`);
    tables.add(model.tableName);
    const columns = new Set<string>();
    for (const field of model.fields) {
      if (field.kind !== 'scalar') continue;
      if (columns.has(field.columnName)) fail(field.line, `two fields of ${model.name} map to column ${field.columnName}`);
      columns.add(field.columnName);
    }
    for (const field of model.fields) {
      if (field.kind !== 'relation' || !field.relation.fields.length) continue;
      const target = models.find((m) => m.name === field.type)!;
      for (const ref of field.relation.references) {
        const referenced = target.fields.find((f) => f.name === ref);
        if (!referenced || referenced.kind !== 'scalar') fail(field.line, `${model.name}.${field.name}: ${target.name} has no scalar field "${ref}"`);
      }
    }
  }
  return { models, blocks };
}

export function loadPrismaSchema(file: string): PrismaSchema {
  return parsePrismaSchema(fs.readFileSync(file, 'utf8'));
}
