/**
 * The architecture controls, on the reconciled graph and the file list: no shared database, no
 * service dependency cycle, code owners declared.
 */
import { keyKind, type EvidenceLocation } from '../evidence';
import { CODEOWNERS_PATHS } from '../shared/paths';
import { compareStrings, uniqueSorted } from '../shared/text';
import type { Entity, Relationship } from '../reconcile';
import { isRecord } from '../shared/values';
import { composeScope } from './effective';
import type { ControlSpec } from './catalog';
import { compareLocation, type Check, type Context, type Verdict } from './check';

function relLocation(ctx: Context, ids: string[]): EvidenceLocation | null {
  const locs = ids
    .map((id) => ctx.byId.get(id)?.location)
    .filter((l): l is EvidenceLocation => !!l)
    .sort(compareLocation);
  return locs[0] ? { ...locs[0] } : null;
}

function entityKind(ctx: Context): Map<string, string> {
  return new Map(ctx.entities.map((e) => [e.canonical_key, e.kind]));
}

function graphCheck(
  ctx: Context,
  requirement: string,
  verdict: Verdict,
  subjectKeys: string[],
  evidence_ids: string[],
  title: string,
  facts: unknown,
): Check {
  const ids = uniqueSorted(evidence_ids);
  return {
    requirement,
    verdict,
    evidence_ids: ids,
    facts,
    title,
    subject: subjectKeys.join('\u0000'),
    entity_key: subjectKeys[0] ?? null,
    location: relLocation(ctx, ids),
  };
}

/** A relationship known only from test files (a test compose file's depends_on) is no use in production. */
function onlyInTestFiles(ctx: Context, r: Relationship): boolean {
  const paths = r.evidence_ids.map((id) => ctx.byId.get(id)?.location.path ?? '');
  return paths.length > 0 && paths.every((p) => p !== '' && composeScope(p) !== null);
}

/** A store's console or dashboard (its image says so): it reads the store, it does not own it. */
const STORE_CONSOLES =
  /^(kibana|opensearch-dashboards|pgadmin4?|adminer|mongo-express|redis-commander|redisinsight|phpmyadmin|cloudbeaver|dbgate|grafana|grafana-oss)$/i;
/** A schema tool of the store's owner (`catalogdbmanager`, `orders-migrator`, `db-seed`). */
const SCHEMA_TOOL =
  /(db-?manager|migrat(e|es|ion|ions|or|ions?-?service)|seed(er|ing)?|schema-?(tool|manager))$/i;

/** Why a client of a datastore is not one of its owners (null: it is). */
function notOwnerWhy(e: Entity | undefined): string | null {
  if (!e) return null;
  const image = isRecord(e.attributes.image) ? e.attributes.image.repo : e.attributes.image;
  const last = typeof image === 'string' ? (image.split('/').pop() ?? '') : '';
  if (STORE_CONSOLES.test(last)) return `a console of the store (image ${String(image)})`;
  if (SCHEMA_TOOL.test(e.name)) return 'a schema or seed tool of its owner';
  return null;
}

/**
 * Clients that reach the store only from separate Aspire application models (each AppHost is an
 * application of its own, which declares its own store under a name another may reuse).
 */
function separateAppModels(ctx: Context, rels: Relationship[]): boolean {
  const hosts = new Map<string, Set<string>>();
  for (const r of rels) {
    const mine = hosts.get(r.source_key) ?? new Set<string>();
    for (const id of r.evidence_ids) {
      const x = ctx.byId.get(id);
      // The service's own code reading the reference (its Program.cs) names no application.
      if (x?.provider === 'aspire') {
        if (/apphost/i.test(x.location.path)) mine.add(x.location.path);
      } else if (x) return false;
    }
    hosts.set(r.source_key, mine);
  }
  const sets = [...hosts.values()];
  if (sets.length < 2 || sets.some((s) => s.size === 0)) return false;
  const seen = new Set<string>();
  for (const s of sets)
    for (const h of s) {
      if (seen.has(h)) return false;
      seen.add(h);
    }
  return true;
}

function noSharedDatabase(ctx: Context): Check[] {
  const kinds = entityKind(ctx);
  const kind = (k: string) => kinds.get(k) ?? keyKind(k);
  const stores = uniqueSorted([
    ...ctx.entities.filter((e) => e.kind === 'datastore').map((e) => e.canonical_key),
    ...ctx.relationships.map((r) => r.target_key).filter((k) => kind(k) === 'datastore'),
  ]);
  const relsTo = new Map<string, Relationship[]>();
  for (const r of ctx.relationships) {
    if (kind(r.source_key) !== 'service' || onlyInTestFiles(ctx, r)) continue;
    const list = relsTo.get(r.target_key);
    if (list) list.push(r);
    else relsTo.set(r.target_key, [r]);
  }
  const entities = new Map(ctx.entities.map((e) => [e.canonical_key, e]));
  return stores.map((store) => {
    const rels = relsTo.get(store) ?? [];
    const clients = uniqueSorted(rels.map((r) => r.source_key));
    const owners = clients.filter((c) => notOwnerWhy(entities.get(c)) === null);
    const separate = separateAppModels(ctx, rels);
    const shared = owners.length >= 2 && !separate;
    return graphCheck(
      ctx,
      'single-owner-datastore',
      shared ? 'fail' : 'pass',
      [store],
      rels.flatMap((r) => r.evidence_ids),
      shared
        ? `${store} is shared by ${owners.join(', ')}`
        : owners.length >= 2
          ? `${store} is declared by separate application models (${clients.join(', ')}), one store each`
          : `${store} has ${owners.length} owning service(s)${
              clients.length > owners.length
                ? ` (${clients
                    .filter((c) => !owners.includes(c))
                    .map((c) => `${c}: ${notOwnerWhy(entities.get(c))}`)
                    .join('; ')})`
                : ''
            }`,
      { store, clients, owners, separate },
    );
  });
}

/**
 * Strongly connected components (Tarjan), deterministic over sorted nodes and edges. Iterative,
 * with an explicit stack of (node, next edge) frames: a dependency chain as long as the system
 * (10,000 services) must not overflow the call stack (issue 24).
 */
function cycles(nodes: string[], edges: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const enter = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    on.add(v);
  };
  for (const root of nodes) {
    if (idx.has(root)) continue;
    enter(root);
    const frames: Array<{ v: string; next: number }> = [{ v: root, next: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const v = frame.v;
      const succ = edges.get(v) ?? [];
      if (frame.next < succ.length) {
        const w = succ[frame.next]!;
        frame.next += 1;
        if (!idx.has(w)) {
          enter(w);
          frames.push({ v: w, next: 0 });
        } else if (on.has(w)) low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0));
        continue;
      }
      // All of v's edges done: close v, then report its low link to its caller.
      frames.pop();
      if (low.get(v) === idx.get(v)) {
        const comp: string[] = [];
        let w: string | undefined;
        do {
          w = stack.pop();
          if (w === undefined) break;
          on.delete(w);
          comp.push(w);
        } while (w !== v);
        const selfLoop = succ.includes(v);
        if (comp.length > 1 || selfLoop) out.push(comp.sort(compareStrings));
      }
      const caller = frames[frames.length - 1];
      if (caller) low.set(caller.v, Math.min(low.get(caller.v) ?? 0, low.get(v) ?? 0));
    }
  }
  return out.sort((a, b) => compareStrings(a.join(','), b.join(',')));
}

/** The OpenTelemetry exporter settings (the specification's variables): their target collects telemetry. */
const EXPORTER_VARIABLE = /^OTEL_EXPORTER_(OTLP(_(TRACES|METRICS|LOGS))?|JAEGER|ZIPKIN)_ENDPOINT$/;

/**
 * Telemetry collectors: services other services reach through OpenTelemetry exporter settings.
 * What a collector reaches in turn (a health check of the entry proxy, a scrape, an export to a
 * tracing backend) is monitoring: no request of the system waits on it, so it makes no cycle.
 */
function telemetrySinks(ctx: Context): Set<string> {
  const out = new Set<string>();
  for (const r of ctx.relationships) {
    const vars = r.attributes.variables;
    if (Array.isArray(vars) && vars.some((v) => EXPORTER_VARIABLE.test(String(v))))
      out.add(r.target_key);
  }
  return out;
}

function noServiceCycle(ctx: Context): Check[] {
  const kinds = entityKind(ctx);
  const kind = (k: string) => kinds.get(k) ?? keyKind(k);
  const services = uniqueSorted([
    ...ctx.entities.filter((e) => e.kind === 'service').map((e) => e.canonical_key),
  ]);
  if (services.length === 0) return [];
  const sinks = telemetrySinks(ctx);
  const rels = ctx.relationships.filter(
    (r) =>
      kind(r.source_key) === 'service' &&
      kind(r.target_key) === 'service' &&
      !sinks.has(r.source_key),
  );
  // Targets gathered, then sorted once per node (re-sorting a copy per edge is quadratic).
  const edges = new Map<string, string[]>();
  for (const r of rels) {
    const list = edges.get(r.source_key);
    if (list) list.push(r.target_key);
    else edges.set(r.source_key, [r.target_key]);
  }
  for (const [k, list] of edges) edges.set(k, uniqueSorted(list));
  const nodes = uniqueSorted([...services, ...rels.flatMap((r) => [r.source_key, r.target_key])]);
  const found = cycles(nodes, edges);
  if (found.length === 0)
    return [
      graphCheck(
        ctx,
        'acyclic-service-graph',
        'pass',
        ['acyclic'],
        rels.flatMap((r) => r.evidence_ids),
        `${services.length} service(s), ${rels.length} service relationship(s), no cycle`,
        { services: nodes, edges: rels.map((r) => r.canonical_key).sort(compareStrings) },
      ),
    ];
  // Each relationship inside a cycle, by cycle: one pass, not one scan of rels per cycle.
  const cycleOf = new Map<string, number>();
  found.forEach((members, i) => members.forEach((m) => cycleOf.set(m, i)));
  const relsOf = found.map((): typeof rels => []);
  for (const r of rels) {
    const i = cycleOf.get(r.source_key);
    if (i !== undefined && cycleOf.get(r.target_key) === i) relsOf[i]!.push(r);
  }
  return found.map((members, i) => {
    const inCycle = relsOf[i]!;
    return graphCheck(
      ctx,
      'acyclic-service-graph',
      'fail',
      members,
      inCycle.flatMap((r) => r.evidence_ids),
      `dependency cycle among ${members.join(', ')}`,
      { cycle: members, edges: inCycle.map((r) => r.canonical_key).sort(compareStrings) },
    );
  });
}

function ownersDeclared(ctx: Context): Check[] {
  if (ctx.files.length === 0) return [];
  const found = ctx.files
    .filter((f) => CODEOWNERS_PATHS.includes(f.replace(/^\.\//, '')))
    .sort(compareStrings);
  return [
    {
      requirement: 'codeowners-file',
      verdict: found.length > 0 ? 'pass' : 'fail',
      evidence_ids: [],
      facts: { codeowners: found },
      title: found.length > 0 ? `owners declared in ${found.join(', ')}` : 'no CODEOWNERS file',
      subject: 'CODEOWNERS',
      entity_key: null,
      location: found[0] ? { path: found[0], start_line: 1, end_line: 1 } : null,
    },
  ];
}

export const ARCHITECTURE_CONTROLS: ControlSpec[] = [
  {
    control: {
      key: 'no-shared-database',
      title: 'No database shared between services',
      description: 'Each datastore is reached by at most one service.',
      domain: 'architecture',
      severity: 'medium',
      requirements: [
        {
          key: 'single-owner-datastore',
          description: 'No datastore has two or more client services.',
        },
      ],
    },
    evaluate: noSharedDatabase,
    notApplicable: 'no datastore found',
  },
  {
    control: {
      key: 'no-service-dependency-cycle',
      title: 'No service dependency cycle',
      description: 'Service-to-service relationships form no cycle.',
      domain: 'architecture',
      severity: 'medium',
      requirements: [
        { key: 'acyclic-service-graph', description: 'The service dependency graph is acyclic.' },
      ],
    },
    evaluate: noServiceCycle,
    notApplicable: 'no service found',
  },
  {
    control: {
      key: 'owners-declared',
      title: 'Code owners declared',
      description: 'A CODEOWNERS file exists (repository root, .github/ or docs/).',
      domain: 'architecture',
      severity: 'low',
      requirements: [{ key: 'codeowners-file', description: 'A CODEOWNERS file is committed.' }],
    },
    evaluate: ownersDeclared,
    notApplicable: 'no file list available',
  },
];
