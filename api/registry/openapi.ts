/**
 * Generates the OpenAPI 3.1 document from the operation registry. Named schemas (`x-name`) are
 * hoisted into components.schemas and referenced; every operation gets its scope, its problem
 * responses and the RateLimit / X-Request-ID headers.
 */
import type { TSchema } from '@sinclair/typebox';
import { NAME_KEYWORD, ProblemDetails } from '../schema-kit';
import { CONTRACT_SCHEMAS } from '../schemas';
import { problemStatuses, type AnyOperation } from './operation';

type Json = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is invalid (validation_failed, unknown_property, malformed_json).',
  401: 'No valid token (authentication_required, invalid_token).',
  403: 'The token lacks the scope or right this operation needs (insufficient_scope).',
  404: 'No such resource in this workspace (not_found).',
  409: 'Conflicts with the current state (conflict, version_mismatch, idempotency_in_progress).',
  413: 'The body exceeds the size limit (payload_too_large).',
  415: 'The body has the wrong content type (unsupported_media_type).',
  422: 'The Idempotency-Key was used with a different request (idempotency_key_reused).',
  429: 'The request quota is spent (rate_limited); see Retry-After.',
  500: 'Unexpected server error (internal); the body carries the request_id.',
  503: 'A required backing service is down (database_unavailable, workflow_engine_unavailable); see Retry-After.',
};

class Components {
  readonly schemas: Record<string, Json> = {};
  private readonly origins = new Map<string, unknown>();

  /** Returns the schema with every named sub-schema replaced by a $ref, registering them. */
  ref(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.ref(s));
    if (schema === null || typeof schema !== 'object') return schema;
    const obj = schema as Json;
    const name = obj[NAME_KEYWORD];
    if (typeof name === 'string') {
      const seen = this.origins.get(name);
      if (seen === undefined) {
        this.origins.set(name, schema);
        this.schemas[name] = {}; // reserve first: schemas may be recursive
        this.schemas[name] = this.inline(obj);
      } else if (seen !== schema && JSON.stringify(seen) !== JSON.stringify(schema)) {
        throw new Error(`Two different schemas are both named ${name}`);
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    return this.inline(obj);
  }

  private inline(obj: Json): Json {
    const out: Json = {};
    for (const [key, value] of Object.entries(obj)) {
      if (key === NAME_KEYWORD) continue;
      out[key] = this.ref(value);
    }
    return out;
  }
}

const HEADERS = {
  'X-Request-ID': {
    description:
      "The request id: the client's X-Request-ID when given (1..200 of [A-Za-z0-9._:-]), else a generated UUID. Also in every log line and problem body.",
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'The quota policy, e.g. `"default";q=600;w=60` (quota per window of w seconds).',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'The live quota state, e.g. `"default";r=599;t=42` (r requests remain, window resets in t seconds).',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
};

const commonHeaders = () => ({
  'X-Request-ID': { $ref: '#/components/headers/X-Request-ID' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
  RateLimit: { $ref: '#/components/headers/RateLimit' },
});

function parametersOf(op: AnyOperation, components: Components): Json[] {
  const params: Json[] = [
    {
      name: 'X-Request-ID',
      in: 'header',
      required: false,
      description: 'Client-chosen request id, carried through logs and echoed back.',
      schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' },
    },
  ];
  const add = (where: 'path' | 'query', schema: TSchema | undefined) => {
    if (!schema) return;
    const props = (schema as unknown as { properties: Record<string, Json> }).properties;
    const required = new Set((schema as unknown as { required?: string[] }).required ?? []);
    for (const [name, prop] of Object.entries(props)) {
      const { description, ...rest } = prop;
      params.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: components.ref(rest),
      });
    }
  };
  add('path', op.params);
  add('query', op.query);
  if (op.idempotent) {
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Repeating a request with the same key and body returns the first result (`Idempotent-Replayed: true`); while the first is still being processed, 409 idempotency_in_progress with Retry-After; a different body with the same key is 422 idempotency_key_reused.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  if (op.conditional) {
    params.push({
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        'The version the client last read, as `"<version>"`; a stale version is 409 version_mismatch.',
      schema: { type: 'string' },
    });
  }
  return params;
}

function accessText(op: AnyOperation): string {
  switch (op.access.kind) {
    case 'public':
      return 'Public: no token needed.';
    case 'scope':
      return `Requires scope \`${op.access.scope}\`.`;
    case 'token':
      return `Any valid token; ${op.access.rule}`;
  }
}

export interface ContractInfo {
  version: string;
  serverUrl?: string;
}

/** Builds the whole document. Pure: same registry in, same document out. */
export function buildOpenApi(operations: readonly AnyOperation[], info: ContractInfo): Json {
  const components = new Components();
  components.ref(ProblemDetails);
  for (const schema of CONTRACT_SCHEMAS) components.ref(schema);

  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const responses: Json = {};
    const extra: Record<string, Json> = Object.fromEntries(
      Object.entries(op.success.headers ?? {}).map(([name, h]) => [
        name,
        { description: h.description, schema: h.schema ?? { type: 'string' } },
      ]),
    );
    if (op.idempotent)
      extra['Idempotent-Replayed'] = {
        description:
          '`true` when this is the stored answer to an earlier request with the same Idempotency-Key.',
        schema: { type: 'string', enum: ['true'] },
      };
    const success: Json = {
      description: op.success.description,
      headers: { ...commonHeaders(), ...extra },
    };
    if (op.success.schema) {
      success.content = Object.fromEntries([
        ...[op.success.contentType ?? 'application/json']
          .flat()
          .map((type) => [type, { schema: components.ref(op.success.schema) }]),
        ...Object.entries(op.success.alternates ?? {}).map(([type, schema]) => [
          type,
          { schema: components.ref(schema) },
        ]),
      ]);
    }
    responses[String(op.success.status)] = success;
    for (const status of problemStatuses(op)) {
      responses[String(status)] = {
        description: STATUS_TEXT[status] ?? 'Problem.',
        headers:
          status === 429
            ? { ...commonHeaders(), 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
            : commonHeaders(),
        content: {
          'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } },
        },
      };
    }
    const operation: Json = {
      operationId: op.operationId,
      summary: op.summary,
      description: [op.description, accessText(op)].filter(Boolean).join('\n\n'),
      tags: [op.tag],
      parameters: parametersOf(op, components),
      responses,
      'x-required-scope':
        op.access.kind === 'scope' ? op.access.scope : op.access.kind === 'public' ? null : 'token',
      security:
        op.access.kind === 'public'
          ? []
          : [{ bearerAuth: op.access.kind === 'scope' ? [op.access.scope] : [] }],
    };
    if (op.rawBody) {
      operation.requestBody = {
        required: true,
        description: op.rawBody.description,
        content: Object.fromEntries(
          op.rawBody.contentTypes.map((t) => [
            t,
            { schema: { type: 'string', contentMediaType: t } },
          ]),
        ),
      };
    }
    if (op.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: components.ref(op.body) } },
      };
    }
    const path = (paths[op.path] ??= {});
    path[op.method] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Architecture Evidence and Audit Service',
      version: info.version,
      description:
        'Evidence-based architecture audits and decisions. Every error is application/problem+json with a stable `code`, a `hint` and the `request_id`. Lists are keyset-paginated with `limit` and an opaque `cursor`.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: info.serverUrl ?? '/' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: components.schemas,
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'aat_<prefix>_<secret>',
          description:
            'A workspace API token. Each operation names the scope it needs in `x-required-scope`.',
        },
      },
    },
  };
}
