/**
 * Upstream and downstream of an entity: everything it reaches along relationships (downstream)
 * and everything that reaches it (upstream), with the relationships on those paths.
 */
export interface Reach {
  upstream: Set<string>;
  downstream: Set<string>;
  /** Relationship ids on an upstream path, and on a downstream path. */
  upstreamEdges: Set<string>;
  downstreamEdges: Set<string>;
}

export function reach(
  root: string,
  edges: ReadonlyArray<{ id: string; source: string; target: string }>,
): Reach {
  const out = new Map<string, Array<{ id: string; to: string }>>();
  const inc = new Map<string, Array<{ id: string; to: string }>>();
  for (const e of edges) {
    (out.get(e.source) ?? out.set(e.source, []).get(e.source)!).push({ id: e.id, to: e.target });
    (inc.get(e.target) ?? inc.set(e.target, []).get(e.target)!).push({ id: e.id, to: e.source });
  }
  const walk = (adjacency: typeof out) => {
    const nodes = new Set<string>();
    const via = new Set<string>();
    const queue = [root];
    for (let i = 0; i < queue.length; i++) {
      for (const step of adjacency.get(queue[i]!) ?? []) {
        via.add(step.id);
        if (step.to === root || nodes.has(step.to)) continue;
        nodes.add(step.to);
        queue.push(step.to);
      }
    }
    return { nodes, via };
  };
  const down = walk(out);
  const up = walk(inc);
  return {
    upstream: up.nodes,
    downstream: down.nodes,
    upstreamEdges: up.via,
    downstreamEdges: down.via,
  };
}
