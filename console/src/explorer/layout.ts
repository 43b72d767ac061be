/**
 * Where the explorer puts each entity, in three steps so that a large snapshot is usable at once:
 * 1. a cached layout of this very graph (sessionStorage, keyed by audit, comparison and filters),
 * 2. else a quick layered layout computed here in a few milliseconds (longest-path layers, one
 *    barycentre sweep), shown immediately,
 * 3. while ELK's layered layout runs in a Web Worker (elkjs's own worker script, emitted by the
 *    build under /app/assets/ and allowed by the CSP's worker-src 'self'); its result replaces the
 *    quick one and is cached.
 * ELK on the main thread froze the page for seconds with 500 entities (docs/benchmarks.md).
 */
import ELK from 'elkjs/lib/elk-api.js';
import elkWorkerUrl from 'elkjs/lib/elk-worker.min.js?url';

export const WIDTH = 190;
export const HEIGHT = 46;
const GAP_X = 60;
const GAP_Y = 24;

export type Positions = Map<string, { x: number; y: number }>;
export interface GraphShape {
  nodes: string[];
  edges: Array<{ id: string; source: string; target: string }>;
}

/**
 * A layered layout in linear time: each node one layer right of its furthest predecessor (nodes
 * on a cycle are placed in model order), each layer ordered by its predecessors' mean row, and a
 * layer taller than the graph is wide folded into several columns.
 */
export function quickLayout(graph: GraphShape): Positions {
  const preds = new Map<string, string[]>(graph.nodes.map((n) => [n, []]));
  const succs = new Map<string, string[]>(graph.nodes.map((n) => [n, []]));
  for (const e of graph.edges) {
    if (!preds.has(e.source) || !preds.has(e.target) || e.source === e.target) continue;
    preds.get(e.target)!.push(e.source);
    succs.get(e.source)!.push(e.target);
  }
  // Kahn's order; what a cycle leaves over follows in model order.
  const indegree = new Map(graph.nodes.map((n) => [n, preds.get(n)!.length]));
  const order: string[] = [];
  const queue = graph.nodes.filter((n) => indegree.get(n) === 0);
  const placed = new Set<string>();
  for (let i = 0; i < queue.length; i++) {
    const n = queue[i]!;
    order.push(n);
    placed.add(n);
    for (const s of succs.get(n)!) {
      const d = indegree.get(s)! - 1;
      indegree.set(s, d);
      if (d === 0) queue.push(s);
    }
  }
  for (const n of graph.nodes) if (!placed.has(n)) order.push(n);
  const layer = new Map<string, number>();
  for (const n of order) {
    let l = 0;
    for (const p of preds.get(n)!) {
      const pl = layer.get(p);
      if (pl !== undefined) l = Math.max(l, pl + 1);
    }
    layer.set(n, l);
  }
  const layers: string[][] = [];
  for (const n of graph.nodes) (layers[layer.get(n)!] ??= []).push(n);
  // One sweep: a layer's nodes by the mean row of their predecessors (stable for ties).
  const row = new Map<string, number>();
  const maxRows = Math.max(8, Math.ceil(Math.sqrt(graph.nodes.length) * 1.5));
  const positions: Positions = new Map();
  let column = 0;
  for (const members of layers) {
    if (!members) continue;
    const mean = (n: string) => {
      const rows = preds
        .get(n)!
        .map((p) => row.get(p))
        .filter((r): r is number => r !== undefined);
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : Infinity;
    };
    const sorted = members
      .map((n, i) => ({ n, i, m: mean(n) }))
      .sort((a, b) => (a.m === b.m ? a.i - b.i : a.m < b.m ? -1 : 1));
    sorted.forEach(({ n }, i) => {
      const r = i % maxRows;
      row.set(n, r);
      positions.set(n, {
        x: (column + Math.floor(i / maxRows)) * (WIDTH + GAP_X),
        y: r * (HEIGHT + GAP_Y),
      });
    });
    column += Math.ceil(sorted.length / maxRows);
  }
  return positions;
}

let elk: InstanceType<typeof ELK> | null = null;

/** ELK's layered layout (left to right), computed in a Web Worker. */
export async function elkLayout(graph: GraphShape): Promise<Positions> {
  elk ??= new ELK({ workerFactory: () => new Worker(elkWorkerUrl) });
  const ids = new Set(graph.nodes);
  const large = graph.nodes.length > 150;
  const result = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.spacing.nodeNode': String(GAP_Y),
      'elk.layered.spacing.nodeNodeBetweenLayers': String(GAP_X),
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      // React Flow draws the edges itself: ELK's cheapest routing is enough.
      'elk.edgeRouting': 'POLYLINE',
      // Large graphs: one crossing-minimisation pass, no greedy switch (bench:console).
      ...(large
        ? {
            'elk.layered.thoroughness': '1',
            'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
          }
        : {}),
    },
    children: graph.nodes.map((id) => ({ id, width: WIDTH, height: HEIGHT })),
    edges: graph.edges
      .filter((e) => ids.has(e.source) && ids.has(e.target))
      .map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  });
  return new Map((result.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}

const PREFIX = 'archaudit.layout.v1|';

/** A layout this session computed for the same graph, if it is still stored and complete. */
export function cachedLayout(key: string, graph: GraphShape): Positions | null {
  try {
    const raw = sessionStorage.getItem(PREFIX + key);
    if (!raw) return null;
    const entries = JSON.parse(raw) as Array<[string, number, number]>;
    const positions: Positions = new Map(entries.map(([id, x, y]) => [id, { x, y }]));
    return graph.nodes.every((n) => positions.has(n)) ? positions : null;
  } catch {
    return null;
  }
}

export function storeLayout(key: string, positions: Positions): void {
  const entries = [...positions].map(([id, p]) => [id, Math.round(p.x), Math.round(p.y)]);
  try {
    sessionStorage.setItem(PREFIX + key, JSON.stringify(entries));
  } catch {
    // Storage full or refused: drop the older layouts, then go without the cache.
    for (const k of Object.keys(sessionStorage))
      if (k.startsWith(PREFIX)) sessionStorage.removeItem(k);
  }
}
