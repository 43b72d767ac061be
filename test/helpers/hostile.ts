/**
 * Inputs for the hostile-input suite, made from the operation registry's schemas: fast-check
 * arbitraries that follow a JSON Schema (so most requests get past validation and reach the
 * handlers) and, at any node, may put a hostile value instead (wrong types, NUL, unpaired
 * surrogates, huge numbers, non-canonical uuids, very long strings).
 */
import fc from 'fast-check';
import type { AnyOperation } from '../../api/registry/operation';

type Schema = {
  type?: string | string[];
  format?: string;
  pattern?: string;
  const?: unknown;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  additionalProperties?: boolean | Schema;
  default?: unknown;
};

const UUID = '3f1c2a5e-8b7d-4c6e-9a0b-1d2e3f4a5b6c';

/** Values no well-behaved client sends, one of them in place of any value. */
export const HOSTILE_VALUES: readonly unknown[] = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\udbff\udbff',
  `urn:uuid:${UUID}`,
  `{${UUID}}`,
  UUID.toUpperCase(),
  UUID.replaceAll('-', ''),
  '',
  ' ',
  '../../../etc/passwd',
  '%00',
  "'; DROP TABLE audits; --",
  '\u202egnp.exe',
  '\u{1F680}\u200d\u{1F525}',
  'e\u0301',
  '\ufeff',
  'x'.repeat(70_000),
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 53 + 2,
  1e308,
  -1,
  0,
  -0,
  0.5,
  true,
  null,
  [],
  {},
  [null],
  { '\u0000': 1 },
  JSON.parse('{"__proto__": {"polluted": true}}') as unknown,
  '9999-12-31T23:59:60Z',
  '0000-00-00',
  '2026-02-30',
  '1e9999',
];

const hostile = fc.constantFrom(...HOSTILE_VALUES);

/** Strings from every Unicode plane, lone surrogates and NUL included. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc
    .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 20 })
    .map((units) => String.fromCharCode(...units)),
);

export interface Pools {
  /** Real ids (of both workspaces) that a uuid field may take. */
  uuids: readonly string[];
}

export interface RequestPools extends Pools {
  /** The workspace of the calling token. */
  workspaceId: string;
  /** Path parameter name -> ids of that kind in the caller's workspace. */
  own: Record<string, readonly string[]>;
  /** Path parameter name -> ids of that kind anywhere (the caller's and other workspaces'). */
  byParam: Record<string, readonly string[]>;
}

function stringArb(s: Schema, pools: Pools): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 60, min + 60);
  switch (s.format) {
    case 'uuid':
      return pools.uuids.length > 0
        ? fc.oneof(fc.constantFrom(...pools.uuids), fc.uuid())
        : fc.uuid();
    case 'date-time':
      return fc
        .date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString());
    case 'date':
      return fc
        .date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString().slice(0, 10));
    default:
      if (s.pattern)
        return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= max + 200);
      return fc.oneof(
        fc.string({ minLength: min, maxLength: max }),
        fc.string({ unit: 'grapheme', minLength: min, maxLength: max }),
      );
  }
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? -1_000_000;
  const max = s.maximum ?? 1_000_000;
  return integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
}

/**
 * An arbitrary for values of `schema`; with `hostileRate` > 0, any node may be a hostile value
 * (one in 1/hostileRate) instead.
 */
export function valueArb(
  schema: Schema,
  pools: Pools,
  hostileRate: number,
  depth = 0,
): fc.Arbitrary<unknown> {
  const valid = validArb(schema, pools, hostileRate, depth);
  if (hostileRate <= 0) return valid;
  const weight = Math.max(1, Math.round(1 / hostileRate) - 1);
  return fc.oneof(
    { weight, arbitrary: valid },
    { weight: 1, arbitrary: fc.oneof(hostile, anyText) },
  );
}

function validArb(s: Schema, pools: Pools, rate: number, depth: number): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.anyOf) return fc.oneof(...s.anyOf.map((b) => valueArb(b, pools, rate, depth + 1)));
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return stringArb(s, pools);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = s.minItems ?? 0;
      const maxLength = Math.min(s.maxItems ?? 4, minLength + 4);
      if (depth > 6) return fc.constant([]);
      return fc.array(s.items ? valueArb(s.items, pools, rate, depth + 1) : fc.jsonValue(), {
        minLength,
        maxLength,
      });
    }
    case 'object':
    default: {
      if (depth > 6) return fc.constant({});
      const props = s.properties ?? {};
      const required = new Set(s.required ?? []);
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) shape[k] = valueArb(v, pools, rate, depth + 1);
      const known = Object.keys(props).length
        ? fc.record(shape, { requiredKeys: [...required].filter((k) => k in props) })
        : fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), {
            maxKeys: 4,
          });
      if (rate <= 0) return known;
      // Now and then an unknown property (its key may be hostile too).
      return fc
        .tuple(known, fc.option(fc.tuple(anyText, hostile), { freq: 8 }))
        .map(([value, extra]) =>
          extra ? { ...(value as object), [extra[0] || 'extra']: extra[1] } : value,
        );
    }
  }
}

/** How one request of the fuzz is sent. */
export interface FuzzRequest {
  path: string;
  query: string;
  /** Raw body text and its Content-Type, or none. */
  body?: { text: string | Buffer; contentType: string };
}

/** Percent-encodes any string, lone surrogates included (as the UTF-8 of U+FFFD would not be). */
export function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate has no UTF-8 form: send the bytes of its (invalid) CESU-8 encoding.
    return [...value]
      .map((ch) => {
        const code = ch.charCodeAt(0);
        if (ch.length === 1 && code >= 0xd800 && code <= 0xdfff) {
          return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            .map((b) => `%${b.toString(16).toUpperCase()}`)
            .join('');
        }
        return encodeURIComponent(ch);
      })
      .join('');
  }
}

const asText = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);

/**
 * An arbitrary for whole requests to `op`: half schema-valid (own workspace, real ids, valid
 * query and body: they reach the handlers), half hostile at any place.
 */
export function requestArb(op: AnyOperation, pools: RequestPools): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(oneRequestArb(op, pools, false), oneRequestArb(op, pools, true));
}

function oneRequestArb(
  op: AnyOperation,
  pools: RequestPools,
  hostileInputs: boolean,
): fc.Arbitrary<FuzzRequest> {
  const names = [...op.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
  const own = (name: string) => fc.constantFrom(...(pools.own[name] ?? [UUID]));
  const any = (name: string) => fc.constantFrom(...(pools.byParam[name] ?? [UUID]));
  const segment = (name: string): fc.Arbitrary<string> => {
    if (!hostileInputs) return name === 'workspace_id' ? fc.constant(pools.workspaceId) : own(name);
    return name === 'workspace_id'
      ? fc.oneof(
          { weight: 12, arbitrary: fc.constant(pools.workspaceId) },
          { weight: 1, arbitrary: fc.constant(pools.workspaceId.toUpperCase()) },
          { weight: 1, arbitrary: hostile.map(asText) },
        )
      : fc.oneof(
          { weight: 3, arbitrary: any(name) },
          { weight: 2, arbitrary: fc.uuid() },
          { weight: 2, arbitrary: fc.oneof(hostile.map(asText), anyText) },
        );
  };
  const rate = (r: number) => (hostileInputs ? r : 0);
  const path = fc
    .tuple(...names.map(segment))
    .map((values) =>
      names.reduce((p, name, i) => p.replace(`{${name}}`, encodeSegment(values[i]!)), op.path),
    );
  const querySchema = op.query as Schema | undefined;
  const query = querySchema
    ? valueArb(querySchema, pools, rate(0.15)).map((q) =>
        typeof q === 'object' && q !== null && !Array.isArray(q)
          ? Object.entries(q)
              .map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(asText(v))}`)
              .join('&')
          : `q=${encodeSegment(asText(q))}`,
      )
    : hostileInputs
      ? fc.oneof(
          { weight: 9, arbitrary: fc.constant('') },
          { weight: 1, arbitrary: hostile.map((v) => `x=${encodeSegment(asText(v))}`) },
        )
      : fc.constant('');
  let body: fc.Arbitrary<FuzzRequest['body']> = fc.constant(undefined);
  if (op.body && !hostileInputs) {
    body = valueArb(op.body as Schema, pools, 0).map((v) => ({
      text: JSON.stringify(v) ?? 'null',
      contentType: 'application/json',
    }));
  } else if (op.body) {
    body = fc.oneof(
      {
        weight: 12,
        arbitrary: valueArb(op.body as Schema, pools, 0.08).map((v) => ({
          text: JSON.stringify(v) ?? 'null',
          contentType: 'application/json',
        })),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          { text: '{"a":', contentType: 'application/json' },
          { text: '{}', contentType: 'text/plain' },
          { text: '\u0000', contentType: 'application/json' },
          { text: '[]', contentType: 'application/json; charset=latin1' },
          { text: `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`, contentType: 'application/json' },
        ),
      },
    );
  } else if (op.rawBody) {
    body = fc.oneof(
      fc.uint8Array({ maxLength: 512 }).map((bytes) => ({
        text: Buffer.from(bytes),
        contentType: op.rawBody!.contentTypes[0]!,
      })),
      fc.constant({ text: Buffer.from([0x1f, 0x8b, 0, 0]), contentType: 'application/gzip' }),
      fc.constant({ text: 'PK\u0003\u0004junk', contentType: 'application/zip' }),
    );
  }
  return fc.record({ path, query, body });
}
