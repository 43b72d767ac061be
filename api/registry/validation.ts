/**
 * Request (and, when enabled, response) validation with Ajv against the registry's JSON Schemas.
 * Every problem is reported with its location and JSON Pointer, not only the first.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import type { TSchema } from '@sinclair/typebox';
import { NAME_KEYWORD } from '../schema-kit';
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
  ajv.addKeyword(NAME_KEYWORD);
  return ajv;
}

/** Bodies are JSON: no coercion. Path and query parameters arrive as strings: coerce them. */
const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export type Validator = (value: unknown) => FieldError[];

/** Compiles a schema once; the returned function validates (and applies defaults) in place. */
export function compileValidator(schema: TSchema, where: FieldError['in']): Validator {
  const fn: ValidateFunction = (where === 'body' ? bodyAjv : paramAjv).compile(schema);
  return (value) => (fn(value) ? [] : toFieldErrors(fn.errors ?? [], where));
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
