/**
 * The architecture controls, on the reconciled graph and the file list: no shared database, no
 * service dependency cycle, code owners declared.
 */
import { keyKind, type EvidenceLocation } from '../evidence';
import { CODEOWNERS_PATHS } from '../shared/paths';
import { compareStrings, uniqueSorted } from '../shared/text';
import type { Relationship } from '../reconcile';
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

function noSharedDatabase(ctx: Context): Check[] {
  const kinds = entityKind(ctx);
  const kind = (k: string) => kinds.get(k) ?? keyKind(k);
  const stores = uniqueSorted([
    ...ctx.entities.filter((e) => e.kind === 'datastore').map((e) => e.canonical_key),
    ...ctx.relationships.map((r) => r.target_key).filter((k) => kind(k) === 'datastore'),
  ]);
  const relsTo = new Map<string, Relationship[]>();
  for (const r of ctx.relationships) {
    if (kind(r.source_key) !== 'service') continue;
    const list = relsTo.get(r.target_key);
    if (list) list.push(r);
    else relsTo.set(r.target_key, [r]);
  }
  return stores.map((store) => {
    const rels = relsTo.get(store) ?? [];
    const clients = uniqueSorted(rels.map((r) => r.source_key));
    const shared = clients.length >= 2;
    return graphCheck(
      ctx,
      'single-owner-datastore',
      shared ? 'fail' : 'pass',
      [store],
      rels.flatMap((r) => r.evidence_ids),
      shared
        ? `${store} is shared by ${clients.join(', ')}`
        : `${store} has ${clients.length} client service(s)`,
      { store, clients },
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

function noServiceCycle(ctx: Context): Check[] {
  const kinds = entityKind(ctx);
  const kind = (k: string) => kinds.get(k) ?? keyKind(k);
  const services = uniqueSorted([
    ...ctx.entities.filter((e) => e.kind === 'service').map((e) => e.canonical_key),
  ]);
  if (services.length === 0) return [];
  const rels = ctx.relationships.filter(
    (r) => kind(r.source_key) === 'service' && kind(r.target_key) === 'service',
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
