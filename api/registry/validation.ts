/**
 * Request (and, when enabled, response) validation with Ajv against the registry's JSON Schemas.
 * Every problem is reported with its location and JSON Pointer, not only the first.
 *
 * Beyond the schemas, two rules hold for every request value, so that no operation has to repeat
 * them: a string (or object key) holding NUL or an unpaired UTF-16 surrogate is refused (neither
 * can be stored in PostgreSQL text or jsonb), and a valid uuid is handed on in lower case (the
 * form the database returns, so comparisons with stored ids hold whatever case the client used).
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import type { TSchema } from '@sinclair/typebox';
import { NAME_KEYWORD } from '../schema-kit';
import { UNSTORABLE_TEXT } from '../../domain/text';
import type { FieldError } from '../errors';

function makeAjv(coerceTypes: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict: true,
    strictTypes: false,
    strictRequired: false,
    useDefaults: true,
    coerceTypes: coerceTypes ? 'array' : false,
  });
  addFormats(ajv);
  // RFC 3339 allows a leap second (23:59:60) that JavaScript dates cannot hold: refuse what
  // we could not store rather than fail later.
  const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean };
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => rfc3339.validate(s) && !Number.isNaN(Date.parse(s)),
  });
  // Canonical uuids only (any case): ajv-formats also takes `urn:uuid:<uuid>`, which PostgreSQL
  // does not.
  ajv.addFormat('uuid', { type: 'string', validate: (s: string) => UUID.test(s) });
  ajv.addKeyword(NAME_KEYWORD);
  return ajv;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/**
 * How deep a request value may nest. Deeper JSON is refused: nothing in the contract nests more
 * than a few levels, and every recursive walk (ours, Ajv's, PostgreSQL's jsonb) stays bounded.
 */
const MAX_NESTING = 64;

/**
 * One FieldError per string or object key anywhere in `value` that cannot be stored as text, and
 * one for a value nested deeper than MAX_NESTING. Iterative: the value may be arbitrarily deep.
 */
function textProblems(value: unknown, where: FieldError['in']): FieldError[] {
  const out: FieldError[] = [];
  const stack: Array<[unknown, string, number]> = [[value, '', 0]];
  while (stack.length > 0) {
    const [node, at, depth] = stack.pop()!;
    if (typeof node === 'string') {
      if (UNSTORABLE_TEXT.test(node))
        out.push({ in: where, path: at, message: UNSTORABLE_TEXT_MESSAGE });
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= MAX_NESTING) {
      out.push({ in: where, path: at, message: `must not nest deeper than ${MAX_NESTING} levels` });
      continue;
    }
    if (Array.isArray(node)) {
      node.forEach((item, i) => stack.push([item, `${at}/${i}`, depth + 1]));
      continue;
    }
    for (const [key, item] of Object.entries(node)) {
      const child = pointer(at, key);
      if (UNSTORABLE_TEXT.test(key))
        out.push({ in: where, path: child, message: UNSTORABLE_TEXT_MESSAGE });
      stack.push([item, child, depth + 1]);
    }
  }
  return out;
}

type SchemaNode = {
  format?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  additionalProperties?: SchemaNode | boolean;
};

function mentionsUuid(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(mentionsUuid);
  if (typeof node !== 'object' || node === null) return false;
  const n = node as Record<string, unknown>;
  return n.format === 'uuid' || Object.values(n).some(mentionsUuid);
}

/** Lower-cases, in place, every valid uuid that `schema` declares as one (after validation). */
function lowerUuids(schema: SchemaNode, value: unknown): unknown {
  if (typeof value === 'string') {
    const isUuid = schema.format === 'uuid' || !!schema.anyOf?.some((b) => b.format === 'uuid');
    return isUuid && UUID.test(value) ? value.toLowerCase() : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  const branches = schema.anyOf ?? [schema];
  for (const branch of branches) {
    if (Array.isArray(value)) {
      if (branch.items) value.forEach((item, i) => (value[i] = lowerUuids(branch.items!, item)));
      continue;
    }
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const sub =
        branch.properties?.[key] ??
        (typeof branch.additionalProperties === 'object' ? branch.additionalProperties : undefined);
      if (sub) obj[key] = lowerUuids(sub, obj[key]);
    }
  }
  return value;
}

/** Bodies are JSON: no coercion. Path and query parameters arrive as strings: coerce them. */
const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export type Validator = (value: unknown) => FieldError[];

/**
 * Compiles a schema once; the returned function validates (and applies defaults and lower-cases
 * uuids) in place.
 */
export function compileValidator(schema: TSchema, where: FieldError['in']): Validator {
  const fn: ValidateFunction = (where === 'body' ? bodyAjv : paramAjv).compile(schema);
  const hasUuids = mentionsUuid(schema);
  return (value) => {
    const text = textProblems(value, where);
    // Too deep for Ajv's recursive validation to be safe: refused on depth alone.
    if (text.some((e) => e.message.startsWith('must not nest'))) return text;
    if (!fn(value)) return [...text, ...toFieldErrors(fn.errors ?? [], where)];
    if (text.length > 0) return text;
    if (hasUuids) lowerUuids(schema as SchemaNode, value);
    return [];
  };
}

/** Validates a response body (no text or uuid rules: responses come from the server). */
export function compileResponseValidator(schema: TSchema): Validator {
  const fn: ValidateFunction = bodyAjv.compile(schema);
  return (value) => (fn(value) ? [] : toFieldErrors(fn.errors ?? [], 'body'));
}

function pointer(instancePath: string, child?: string): string {
  return child === undefined
    ? instancePath
    : `${instancePath}/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function describeAlternatives(schema: unknown): string {
  const branches = (schema as { anyOf?: Array<Record<string, unknown>> }).anyOf ?? [];
  const consts = branches.filter((b) => 'const' in b).map((b) => JSON.stringify(b.const));
  const types = branches
    .filter((b) => !('const' in b))
    .map((b) => {
      if (b.type === 'null') return 'null';
      if (typeof b.type === 'string') return b.format ? `${b.type} (${b.format})` : b.type;
      return 'a valid value';
    });
  const parts = [...(consts.length ? [`one of ${consts.join(', ')}`] : []), ...types];
  return `must be ${parts.join(' or ')}`;
}

function message(e: ErrorObject): string {
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known property';
    case 'anyOf':
      return describeAlternatives(e.parentSchema);
    case 'minLength':
      return `must be at least ${e.params.limit} characters long`;
    case 'maxLength':
      return `must be at most ${e.params.limit} characters long`;
    case 'minItems':
      return `must have at least ${e.params.limit} items`;
    case 'maxItems':
      return `must have at most ${e.params.limit} items`;
    case 'format':
      return `must be a valid ${e.params.format}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/**
 * Turns Ajv errors into one FieldError per problem. A failed union (`X or null`, enums) makes
 * Ajv report every branch: when the value had the right type for a branch, that branch's own
 * complaint (too long, bad format) is kept; otherwise one merged "must be X or Y" message.
 */
export function toFieldErrors(errors: ErrorObject[], where: FieldError['in']): FieldError[] {
  const isBranchNoise = (e: ErrorObject) => e.keyword === 'type' || e.keyword === 'const';
  const drop = new Set<ErrorObject>();
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const branches = errors.filter(
      (e) =>
        e !== union &&
        e.schemaPath.startsWith(union.schemaPath.replace(/\/anyOf$/, '/anyOf/')) &&
        e.instancePath.startsWith(union.instancePath),
    );
    const substantive = branches.filter((e) => !isBranchNoise(e));
    if (substantive.length > 0) {
      drop.add(union);
      branches.filter(isBranchNoise).forEach((e) => drop.add(e));
    } else {
      branches.forEach((e) => drop.add(e));
    }
  }
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (drop.has(e)) continue;
    let path = e.instancePath;
    if (e.keyword === 'required') path = pointer(e.instancePath, String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties')
      path = pointer(e.instancePath, String(e.params.additionalProperty));
    const entry = { in: where, path, message: message(e) };
    const key = `${entry.path}|${entry.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(entry);
    }
  }
  return out;
}
