/**
 * The contract the CLI was generated from (cli/generated/openapi.json) and the comparison of
 * two contracts: what would break a client built on the first, and what the second adds.
 */
import fs from 'node:fs';
import path from 'node:path';

type Json = Record<string, unknown>;
export type Doc = Json & { paths?: Record<string, Record<string, Json>> };

export interface ContractChange {
  kind: 'breaking' | 'addition';
  operation: string | null;
  text: string;
}

export interface OperationEntry {
  operationId: string;
  method: string;
  path: string;
  op: Json;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

let bundled: Doc | undefined;

/** The contract bundled with the CLI (what its types were generated from). */
export function bundledContract(): Doc {
  bundled ??= JSON.parse(
    fs.readFileSync(path.join(__dirname, 'generated', 'openapi.json'), 'utf8'),
  ) as Doc;
  return bundled;
}

/** Every operation of a document, by operationId. */
export function operationsOf(doc: Doc): Map<string, OperationEntry> {
  const out = new Map<string, OperationEntry>();
  for (const [p, item] of Object.entries(doc.paths ?? {}))
    for (const method of METHODS) {
      const op = item?.[method] as Json | undefined;
      if (op && typeof op.operationId === 'string')
        out.set(op.operationId, { operationId: op.operationId, method, path: p, op });
    }
  return out;
}

export function scopeOf(op: Json): string {
  const s = op['x-required-scope'];
  return s === null || s === undefined ? 'public' : s === 'token' ? 'any valid token' : String(s);
}

function resolve(doc: Doc, schema: unknown): { schema: Json; ref: string } {
  let s = (schema ?? {}) as Json;
  let ref = '';
  for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) {
    ref = s.$ref;
    const parts = ref.replace(/^#\//, '').split('/');
    s = parts.reduce<unknown>((o, k) => (o as Json | undefined)?.[k], doc) as Json;
    s ??= {};
  }
  return { schema: s, ref };
}

/** The values a schema allows when it is an enumeration (`enum`, `const`, or anyOf of consts). */
function enumOf(s: Json): unknown[] | null {
  if (Array.isArray(s.enum)) return s.enum as unknown[];
  if ('const' in s) return [s.const];
  const alts = s.anyOf ?? s.oneOf;
  if (
    Array.isArray(alts) &&
    alts.length > 0 &&
    alts.every((a: Json) => 'const' in a || Array.isArray(a.enum))
  )
    return alts.flatMap((a: Json) => ('const' in a ? [a.const] : (a.enum as unknown[])));
  return null;
}

/** The schema without its `null` alternative (`anyOf: [X, {type: null}]` is X). */
function nonNull(doc: Doc, s: Json): Json {
  const alts = s.anyOf as Json[] | undefined;
  if (Array.isArray(alts)) {
    const rest = alts.filter((a) => a.type !== 'null');
    if (rest.length === 1) return resolve(doc, rest[0]).schema;
  }
  return s;
}

type Direction = 'request' | 'response';

class Differ {
  readonly changes: ContractChange[] = [];
  private seen = new Set<string>();

  constructor(
    private readonly base: Doc,
    private readonly cand: Doc,
  ) {}

  add(kind: ContractChange['kind'], operation: string | null, text: string): void {
    this.changes.push({ kind, operation, text });
  }

  schema(op: string, where: string, dir: Direction, b: unknown, c: unknown): void {
    const rb = resolve(this.base, b);
    const rc = resolve(this.cand, c);
    // A named schema is compared once per direction (schemas may be recursive).
    const pair = `${dir}|${rb.ref}|${rc.ref}`;
    if (rb.ref || rc.ref) {
      if (this.seen.has(pair)) return;
      this.seen.add(pair);
    }
    const sb = nonNull(this.base, rb.schema);
    const sc = nonNull(this.cand, rc.schema);
    const eb = enumOf(sb);
    const ec = enumOf(sc);
    if (eb && ec) {
      const gone = eb.filter((v) => !ec.includes(v));
      const extra = ec.filter((v) => !eb.includes(v));
      if (gone.length && dir === 'request')
        this.add(
          'breaking',
          op,
          `narrowed enum at ${where}: no longer accepts ${gone.map((v) => JSON.stringify(v)).join(', ')}`,
        );
      if (extra.length)
        this.add(
          'addition',
          op,
          `${where} ${dir === 'request' ? 'accepts' : 'may return'} ${extra.map((v) => JSON.stringify(v)).join(', ')}`,
        );
      return;
    }
    const pb = (sb.properties ?? {}) as Record<string, unknown>;
    const pc = (sc.properties ?? {}) as Record<string, unknown>;
    const reqB = new Set((sb.required ?? []) as string[]);
    const reqC = new Set((sc.required ?? []) as string[]);
    if (dir === 'request') {
      for (const f of reqC)
        if (!reqB.has(f)) this.add('breaking', op, `${where}.${f} is now required`);
      for (const f of Object.keys(pb))
        if (!(f in pc) && sc.additionalProperties === false && sc.properties)
          this.add('breaking', op, `${where}.${f} is no longer accepted`);
    } else {
      for (const f of reqB)
        if (!reqC.has(f)) this.add('breaking', op, `${where}.${f} is no longer always returned`);
    }
    for (const f of Object.keys(pc))
      if (!(f in pb) && sb.properties && !(dir === 'request' && reqC.has(f)))
        this.add('addition', op, `${where}.${f} added`);
    for (const f of Object.keys(pb))
      if (f in pc) this.schema(op, `${where}.${f}`, dir, pb[f], pc[f]);
    if (sb.items && sc.items) this.schema(op, `${where}[]`, dir, sb.items, sc.items);
  }

  operation(b: OperationEntry, c: OperationEntry): void {
    const id = b.operationId;
    if (b.method !== c.method || b.path !== c.path)
      this.add(
        'breaking',
        id,
        `moved from ${b.method.toUpperCase()} ${b.path} to ${c.method.toUpperCase()} ${c.path}`,
      );
    if (scopeOf(b.op) !== scopeOf(c.op))
      this.add('breaking', id, `scope changed from ${scopeOf(b.op)} to ${scopeOf(c.op)}`);
    const params = (e: OperationEntry, doc: Doc) =>
      new Map(
        ((e.op.parameters ?? []) as unknown[])
          .map((p) => resolve(doc, p).schema)
          .map((p) => [`${String(p.in)} ${String(p.name)}`, p] as const),
      );
    const pb = params(b, this.base);
    const pc = params(c, this.cand);
    for (const [k, p] of pc) {
      const old = pb.get(k);
      if (p.required === true && old?.required !== true)
        this.add('breaking', id, `parameter ${k} is now required`);
      else if (!old) this.add('addition', id, `parameter ${k} added`);
    }
    for (const [k, p] of pb) {
      const now = pc.get(k);
      if (!now) this.add('breaking', id, `parameter ${k} removed`);
      else this.schema(id, `parameter ${String(p.name)}`, 'request', p.schema, now.schema);
    }
    const body = (e: OperationEntry, doc: Doc) => {
      const rb = resolve(doc, e.op.requestBody).schema;
      const content = (rb.content ?? {}) as Record<string, Json>;
      return {
        required: rb.required === true,
        json: content['application/json']?.schema,
        any: Object.keys(content).length > 0,
      };
    };
    const bb = body(b, this.base);
    const bc = body(c, this.cand);
    if (bc.required && !bb.any) this.add('breaking', id, 'a request body is now required');
    if (bb.json && bc.json) this.schema(id, 'body', 'request', bb.json, bc.json);
    const success = (e: OperationEntry) =>
      Object.entries((e.op.responses ?? {}) as Record<string, Json>).find(([s]) => /^2/.test(s));
    const sb = success(b);
    const sc = success(c);
    if (sb && sc && sb[0] !== sc[0])
      this.add('breaking', id, `success status changed from ${sb[0]} to ${sc[0]}`);
    const jsonOf = (r: [string, Json] | undefined, doc: Doc) =>
      (resolve(doc, r?.[1]).schema.content as Record<string, Json> | undefined)?.[
        'application/json'
      ]?.schema;
    const jb = jsonOf(sb, this.base);
    const jc = jsonOf(sc, this.cand);
    if (jb && jc) this.schema(id, 'response', 'response', jb, jc);
  }
}

/** What `cand` breaks for a client of `base`, and what it adds. */
export function diffContracts(base: Doc, cand: Doc): ContractChange[] {
  const d = new Differ(base, cand);
  const ob = operationsOf(base);
  const oc = operationsOf(cand);
  for (const [id, b] of ob) {
    const c = oc.get(id);
    if (!c) d.add('breaking', id, `removed operation ${id} (${b.method.toUpperCase()} ${b.path})`);
    else d.operation(b, c);
  }
  for (const [id, c] of oc)
    if (!ob.has(id))
      d.add(
        'addition',
        id,
        `new operation ${id} (${c.method.toUpperCase()} ${c.path}, scope ${scopeOf(c.op)})`,
      );
  return d.changes;
}

/**
 * Why a document may not be used by this client: a server other than `origin`, or a path outside
 * /v1 (the CLI only ever calls /v1 paths of ARCHAUDIT_URL).
 */
export function outsideBounds(doc: Doc, origin: string): string[] {
  const out: string[] = [];
  for (const s of (doc.servers ?? []) as Json[]) {
    const url = String(s.url ?? '');
    if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) {
      if (url !== '/' && url !== '') out.push(`the server URL ${url} adds a path prefix`);
      continue;
    }
    try {
      const u = new URL(url);
      if (u.origin !== origin) out.push(`the contract names another server: ${u.origin}`);
      if (u.pathname !== '/' && u.pathname !== '')
        out.push(`the server URL ${url} adds a path prefix`);
    } catch {
      out.push(`the server URL ${url} is not a URL`);
    }
  }
  for (const p of Object.keys(doc.paths ?? {}))
    if (!p.startsWith('/v1/')) out.push(`the path ${p} is outside /v1`);
  return out;
}
