/**
 * Schema building blocks shared by every resource family.
 *
 * Schemas are TypeBox values: plain JSON Schema 2020-12 objects (what OpenAPI 3.1 uses) that also
 * carry TypeScript types. A schema that should appear as a named component in the OpenAPI
 * document is marked with `x-name`; the document builder hoists each one into
 * `components.schemas` and replaces it with a `$ref`. Nothing else needs to know about names.
 *
 * The shapes families share, written in these words (a resource's path parameters, pages, record
 * fields, approvals, rationales), are api/schema-parts.ts.
 */
import {
  Type,
  type ObjectOptions,
  type SchemaOptions,
  type Static,
  type TInteger,
  type TOptional,
  type TProperties,
  type TSchema,
  type TString,
  type TUnsafe,
} from '@sinclair/typebox';

export const NAME_KEYWORD = 'x-name';

/** Marks a schema as a named OpenAPI component. */
export function named<T extends TSchema>(name: string, schema: T): T {
  return { ...schema, [NAME_KEYWORD]: name };
}

/** A named object that rejects unknown properties (the spec's default rule). */
export function Strict<P extends TProperties>(
  name: string,
  properties: P,
  options: ObjectOptions = {},
) {
  return Type.Object(properties, { additionalProperties: false, ...options, [NAME_KEYWORD]: name });
}

/** A named object that accepts unknown properties (only where the spec says so). */
export function Open<P extends TProperties>(
  name: string,
  properties: P,
  options: ObjectOptions = {},
) {
  return Type.Object(properties, { ...options, [NAME_KEYWORD]: name });
}

/** `X or null`: the property is present and may be null. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/**
 * The largest value of a PostgreSQL integer column (versions, counters): the bound of every such
 * request field, so that validation refuses a larger one rather than the database.
 */
export const MAX_INT32 = 2_147_483_647;

/** A revision counter (1, 2, ...), as stored in an integer column. */
export const Version = (options: { description?: string } = {}) =>
  Type.Integer({ minimum: 1, maximum: MAX_INT32, ...options });

export const Uuid = (options: { description?: string } = {}) =>
  Type.String({ format: 'uuid', ...options });
export const DateTime = (options: { description?: string } = {}) =>
  Type.String({ format: 'date-time', ...options });
export const DateOnly = (options: { description?: string } = {}) =>
  Type.String({ format: 'date', ...options });

/** The version a client last read and expects to replace (0: the built-in default, never stored). */
export const ExpectedVersion = (description: string) =>
  Type.Integer({ minimum: 0, maximum: MAX_INT32, description });

/** Spec "decimal": optional sign, digits, optional point; signs and points alone are invalid. */
export const DECIMAL_PATTERN = '^[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)$';
export const Decimal = (options: { description?: string; default?: string } = {}) =>
  Type.String({ pattern: DECIMAL_PATTERN, ...options });

/** Spec "free object": an object with arbitrary properties. */
export const FreeObject = (options: { description?: string } = {}) =>
  Type.Object({}, { additionalProperties: true, ...options });

export const StringArray = (options: { description?: string } = {}) =>
  Type.Array(Type.String(), options);
export const UuidArray = (options: { description?: string } = {}) => Type.Array(Uuid(), options);

export const Empty = Type.Object({}, { additionalProperties: false });

/**
 * The `limit` and `cursor` query parameters of every keyset-paged list (spread into its query
 * schema). `cursorDescription` says where the client finds the next cursor.
 */
export function pageFields(cursorDescription = 'The next_cursor of the previous page (opaque).'): {
  limit: TOptional<TInteger>;
  cursor: TOptional<TString>;
} {
  return {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Items per page.' }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: cursorDescription }),
    ),
  };
}

/**
 * The `limit` and `cursor` of a list paged by its `Link` header (its page, an ItemsPage, has no
 * next_cursor).
 */
export const linkPageFields = () =>
  pageFields(
    'The cursor of the `Link: <...>; rel="next"` header of the previous page (the page schema has no next_cursor field).',
  );

/**
 * A union of string literals built from a tuple of values (order kept). Typed as TUnsafe so its
 * static type is the plain literal union (a mapped TLiteral tuple makes TypeScript recurse too deep).
 */
export function LiteralUnion<const T extends readonly [string, ...string[]]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  ) as unknown as TUnsafe<T[number]>;
}

/** A named component that is one of `values` (a state, a kind). */
export function NamedUnion<const T extends readonly [string, ...string[]]>(
  name: string,
  values: T,
  description: string,
) {
  return named(name, LiteralUnion(values, { description }));
}

export const AcceptedResponse = Strict(
  'AcceptedResponse',
  { status: Type.Optional(Type.String({ default: 'accepted' })) },
  { description: 'The request was accepted; the work continues asynchronously.' },
);

export const FieldError = Strict('FieldError', {
  in: Type.Union([
    Type.Literal('body'),
    Type.Literal('query'),
    Type.Literal('path'),
    Type.Literal('header'),
  ]),
  path: Type.String({ description: 'JSON Pointer to the offending value within its location.' }),
  message: Type.String(),
});

export const ProblemDetails = Type.Object(
  {
    type: Type.String({
      description: 'URI reference naming the problem type: /v1/problems/<code>.',
    }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    code: Type.String({
      description:
        'Stable snake_case code: validation_failed, unknown_property, malformed_json, malformed_request, headers_too_large, bad_request, authentication_required, invalid_token, insufficient_scope, expiry_exceeds_creator, not_found, method_not_allowed, conflict, version_mismatch, payload_too_large, unsupported_media_type, rate_limited, idempotency_in_progress, idempotency_key_reused, database_unavailable, workflow_engine_unavailable, internal.',
    }),
    hint: Type.String({ description: 'What to do next.' }),
    request_id: Type.String({ description: 'The X-Request-ID of the request.' }),
    errors: Type.Optional(
      Type.Array(FieldError, { description: 'Every validation problem, with its location.' }),
    ),
  },
  {
    'x-name': 'ProblemDetails',
    additionalProperties: true,
    description:
      'RFC 9457 problem details; some problems add extension members (e.g. required_scopes).',
  },
);

// Parameters ---------------------------------------------------------------------------------

export const PageQuery = Type.Object(
  {
    ...pageFields(),
  },
  { additionalProperties: false },
);

export const WorkspaceParams = Type.Object(
  { workspace_id: Uuid({ description: 'The workspace.' }) },
  { additionalProperties: false },
);

// The static types of the schemas that code elsewhere names.
export type PageQuery = Static<typeof PageQuery>;
