/**
 * The architecture explorer: the snapshot of an audit as a graph (React Flow), filtered by kind
 * and source and searchable. Usable at once with 500 entities: a quick layered layout is drawn
 * first, ELK's layout follows from a Web Worker and is cached for the session
 * (explorer/layout.ts). An entity opens its details and lights its upstream and downstream
 * paths (the rest dimmed); an edge opens its evidence with the cited lines highlighted. Another
 * snapshot of the repository can be compared: added, removed, changed and not re-observed
 * elements are drawn differently, each with a symbol and a legend besides the colour.
 * Keyboard: Tab reaches nodes and edges, Enter selects, Escape clears the selection.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import {
  Background,
  Controls,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type EdgeChange,
  type NodeChange,
  type ReactFlowInstance,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import '../explorer/explorer.css';
import { useArchitecture, useAudit } from '../api/queries';
import { Loading, Problem } from '../components';
import { Link, useTitle } from '../router';
import {
  compare,
  DIFF_LEGEND,
  type DiffStatus,
  type Entity,
  type Relationship,
} from '../explorer/compare';
import {
  cachedLayout,
  elkLayout,
  quickLayout,
  storeLayout,
  WIDTH,
  type Positions,
} from '../explorer/layout';
import { reach } from '../explorer/paths';
import { EdgePanel, EntityPanel } from '../explorer/panels';
import { useChanges, useSnapshots } from '../explorer/queries';

type Selected = { kind: 'entity'; key: string } | { kind: 'edge'; key: string };

/** Besides the colour, a lit node's label starts with the direction of its path. */
const PATH_MARK: Record<string, string> = {
  'path-up': '← ',
  'path-down': '→ ',
  'path-up path-down': '↔ ',
};

/**
 * A large graph opens at a readable zoom on its centre, not shrunk whole to illegible boxes; only
 * what is in view is drawn (onlyRenderVisibleElements), so it is usable sooner. Zoom out or the
 * fit button shows it all.
 */
const fitOptions = (count: number) => (count > 150 ? { minZoom: 0.3 } : undefined);

const cls = (s: string) => s.replace(/[^a-z]/g, '');

/**
 * The same object for an element whose drawing did not change, so that React Flow redraws only
 * what a selection or a comparison changed (500 nodes and 800 edges otherwise all redraw).
 */
function useStable<T extends { id: string }>(items: T[]): T[] {
  const cache = useRef(new Map<string, { sig: string; item: T }>());
  return useMemo(() => {
    const next = new Map<string, { sig: string; item: T }>();
    const out = items.map((item) => {
      const sig = JSON.stringify(item);
      const prev = cache.current.get(item.id);
      const kept = prev && prev.sig === sig ? prev.item : item;
      next.set(item.id, { sig, item: kept });
      return kept;
    });
    cache.current = next;
    return out;
  }, [items]);
}

export function Explorer({ ws, audit }: { ws: string; audit: string }) {
  useTitle('Architecture explorer');
  const truth = useArchitecture(ws, audit);
  const auditRow = useAudit(ws, audit);
  const repository = auditRow.data?.repository_id ?? null;
  const snapshots = useSnapshots(ws, repository);
  const [kind, setKind] = useState('all');
  const [source, setSource] = useState('all');
  const [search, setSearch] = useState('');
  const [against, setAgainst] = useState('');
  const [paths, setPaths] = useState(true);
  const [selected, setSelected] = useState<Selected | null>(null);
  const flow = useRef<ReactFlowInstance | null>(null);
  const moved = useRef(false);
  const panel = useRef<HTMLElement | null>(null);

  const items = snapshots.data?.items ?? [];
  const current = items.find((s) => s.audit_id === audit) ?? null;
  const other = items.find((s) => s.id === against) ?? null;
  const otherTruth = useArchitecture(ws, other?.audit_id ?? '');
  const changes = useChanges(ws, repository, other?.id ?? null, current?.id ?? null);
  const comparing = other !== null && otherTruth.data !== undefined && changes.data !== undefined;

  const compared = useMemo(
    () =>
      truth.data
        ? compare(
            truth.data,
            comparing ? otherTruth.data! : null,
            comparing ? changes.data!.changes : null,
          )
        : null,
    [truth.data, comparing, otherTruth.data, changes.data],
  );

  const visible = useMemo(() => {
    if (!compared) return { entities: [] as Entity[], relationships: [] as Relationship[] };
    const q = search.trim().toLowerCase();
    const entities = compared.entities.filter(
      (e) =>
        (kind === 'all' || e.kind === kind) &&
        (source === 'all' || e.sources.includes(source as Entity['sources'][number])) &&
        (!q || e.name.toLowerCase().includes(q) || e.canonical_key.toLowerCase().includes(q)),
    );
    const keys = new Set(entities.map((e) => e.canonical_key));
    const relationships = compared.relationships.filter(
      (r) => keys.has(r.source_key) && keys.has(r.target_key),
    );
    return { entities, relationships };
  }, [compared, kind, source, search]);

  // The layout: cached, else quick at once, then ELK's from the worker.
  const layoutKey = [audit, comparing ? against : '', kind, source, search.trim()].join('|');
  const shape = useMemo(
    () => ({
      nodes: visible.entities.map((e) => e.canonical_key),
      edges: visible.relationships.map((r) => ({
        id: r.canonical_key,
        source: r.source_key,
        target: r.target_key,
      })),
    }),
    [visible],
  );
  const first = useMemo(() => {
    const cached = cachedLayout(layoutKey, shape);
    return cached
      ? { positions: cached, final: true }
      : { positions: quickLayout(shape), final: false };
  }, [shape]);
  const [refined, setRefined] = useState<{ key: string; positions: Positions } | null>(null);
  useEffect(() => {
    if (first.final || shape.nodes.length === 0) return;
    let live = true;
    const key = layoutKey;
    // ELK starts once the quick layout is drawn and the page idle: its worker (1.6 MB of script
    // to parse, then the layout) would otherwise take the CPU the first clicks need.
    const start = () =>
      elkLayout(shape).then(
        (positions) => {
          storeLayout(key, positions);
          if (live) setRefined({ key, positions });
        },
        () => undefined, // The quick layout stays.
      );
    // Safari has no requestIdleCallback: a short delay there.
    const idle =
      typeof requestIdleCallback === 'function'
        ? requestIdleCallback(() => void start(), { timeout: 1000 })
        : null;
    const timer = idle === null ? setTimeout(() => void start(), 200) : null;
    return () => {
      live = false;
      if (idle !== null) cancelIdleCallback(idle);
      if (timer !== null) clearTimeout(timer);
    };
  }, [first, shape]);
  const layout = refined?.key === layoutKey ? { positions: refined.positions, final: true } : first;
  useEffect(() => {
    // The better layout arrived: fit it in view unless the reader has moved the graph.
    if (refined && !moved.current) void flow.current?.fitView(fitOptions(refined.positions.size));
  }, [refined]);

  // Escape clears the selection wherever the focus is (a panel button it used may be gone).
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key === 'Escape') setSelected(null);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const names = useMemo(
    () => new Map((compared?.entities ?? []).map((e) => [e.canonical_key, e.name])),
    [compared],
  );
  // The selected entity's paths: listed in its panel; drawn while "Highlight paths" is on.
  const reached = useMemo(
    () => (selected?.kind === 'entity' ? reach(selected.key, shape.edges) : null),
    [selected, shape],
  );
  const lit = paths ? reached : null;

  const status = compared?.status ?? new Map<string, DiffStatus>();
  const nodes: Node[] = useStable(
    useMemo(
      () =>
        visible.entities.map((e) => {
          const s = status.get(e.canonical_key);
          const mark = s && s !== 'same' ? DIFF_LEGEND[s] : null;
          const role = !lit
            ? ''
            : e.canonical_key === (selected as Selected).key
              ? 'path-root'
              : lit.upstream.has(e.canonical_key) && lit.downstream.has(e.canonical_key)
                ? 'path-up path-down'
                : lit.upstream.has(e.canonical_key)
                  ? 'path-up'
                  : lit.downstream.has(e.canonical_key)
                    ? 'path-down'
                    : '';
          return {
            id: e.canonical_key,
            position: layout.positions.get(e.canonical_key) ?? { x: 0, y: 0 },
            data: {
              label: `${PATH_MARK[role] ?? ''}${mark ? `${mark.symbol} ` : ''}${e.name} · ${e.kind}`,
            },
            ariaLabel: [
              `${e.kind} ${e.name}`,
              mark?.label,
              role.includes('path-up') ? 'upstream of the selection' : '',
              role.includes('path-down') ? 'downstream of the selection' : '',
            ]
              .filter(Boolean)
              .join(', '),
            style: { width: WIDTH },
            // Laid out left to right: edges leave on the right, arrive on the left.
            sourcePosition: Position.Right,
            targetPosition: Position.Left,
            className: [`node-${cls(e.kind)}`, s ? `diff-${s}` : '', role].join(' ').trim(),
          };
        }),
      [visible, layout, lit, compared],
    ),
  );
  const labelAll = visible.relationships.length <= 150;
  const edges: Edge[] = useStable(
    useMemo(
      () =>
        visible.relationships.map((r) => {
          const s = status.get(r.canonical_key);
          const mark = s && s !== 'same' ? DIFF_LEGEND[s] : null;
          const role = !lit
            ? ''
            : lit.upstreamEdges.has(r.canonical_key)
              ? 'path-up'
              : lit.downstreamEdges.has(r.canonical_key)
                ? 'path-down'
                : '';
          return {
            id: r.canonical_key,
            source: r.source_key,
            target: r.target_key,
            // A large graph labels only the edges that stand out: 800 labels, each measured by
            // the browser, cost seconds and cannot be read at that zoom anyway.
            label:
              labelAll || selected?.key === r.canonical_key
                ? `${mark ? `${mark.symbol} ` : ''}${r.kind}`
                : undefined,
            ariaLabel: [`${r.kind} from ${r.source_key} to ${r.target_key}`, mark?.label]
              .filter(Boolean)
              .join(', '),
            markerEnd: { type: MarkerType.ArrowClosed },
            interactionWidth: 16,
            className: [s ? `diff-${s}` : '', role].join(' ').trim(),
          };
        }),
      [visible, lit, compared, labelAll, selected],
    ),
  );

  if (truth.isError) return <Problem error={truth.error} />;
  if (truth.isPending || !compared) return <Loading />;
  const t = truth.data;
  const kinds = [...new Set(compared.entities.map((e) => e.kind))].sort();
  const entity =
    selected?.kind === 'entity'
      ? compared.entities.find((x) => x.canonical_key === selected.key)
      : undefined;
  const relationship =
    selected?.kind === 'edge'
      ? compared.relationships.find((x) => x.canonical_key === selected.key)
      : undefined;
  const pick = (key: string) => {
    setSelected({ kind: 'entity', key });
    // The button pressed may leave the list: the focus stays in the panel.
    panel.current?.focus();
    void flow.current?.fitView({ nodes: [{ id: key }], maxZoom: 1.2, duration: 200 });
  };
  // The graph is controlled: a selection (a click, or Enter on a focused element) arrives as a
  // `select` change, which opens the element's details.
  const onEdgesChange = (changes: EdgeChange[]) => {
    for (const c of changes)
      if (c.type === 'select' && c.selected) setSelected({ kind: 'edge', key: c.id });
  };
  const onNodesChange = (changes: NodeChange[]) => {
    for (const c of changes)
      if (c.type === 'select' && c.selected) setSelected({ kind: 'entity', key: c.id });
  };
  const counts = new Map<DiffStatus, number>();
  if (comparing) for (const s of compared.status.values()) counts.set(s, (counts.get(s) ?? 0) + 1);
  // Snapshots of the repository's other completed audits (a partial snapshot compares too).
  const others = items.filter((s) => s.audit_id !== audit && s.audit_status === 'completed');
  const removedSide = (key: string) => {
    const s = compared.status.get(key);
    return comparing && (s === 'removed' || s === 'unseen');
  };

  return (
    <>
      <p className="crumbs">
        <Link to={`/app/w/${ws}`}>Home</Link> / <Link to={`/app/w/${ws}/a/${audit}`}>audit</Link> /
        architecture
      </p>
      <h1>Architecture</h1>
      <p className="muted">
        {t.entity_count} entities · {t.relationship_count} relationships · sources{' '}
        {t.sources.join(', ') || 'none'}
      </p>
      <div className="filters" role="search">
        <label>
          Kind{' '}
          <select value={kind} onChange={(e) => setKind(e.target.value)}>
            <option value="all">all</option>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source{' '}
          <select value={source} onChange={(e) => setSource(e.target.value)}>
            <option value="all">all</option>
            <option value="code">code</option>
            <option value="cloud">cloud</option>
            <option value="cicd">cicd</option>
          </select>
        </label>
        <label>
          Search <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <label>
          Compare with{' '}
          <select
            value={against}
            onChange={(e) => setAgainst(e.target.value)}
            disabled={others.length === 0 || !current}
          >
            <option value="">no other snapshot</option>
            {others.map((s) => (
              <option key={s.id} value={s.id}>
                {new Date(s.generated_at).toLocaleString()}
                {s.commit_sha ? ` · ${s.commit_sha.slice(0, 8)}` : ''} · {s.entity_count} entities
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={paths} onChange={(e) => setPaths(e.target.checked)} />{' '}
          Highlight paths
        </label>
      </div>
      {other && !comparing && (changes.isError ? <Problem error={changes.error} /> : <Loading />)}
      {comparing && (
        <ul className="legend" aria-label="Comparison legend">
          {(Object.keys(DIFF_LEGEND) as Array<Exclude<DiffStatus, 'same'>>).map((s) => (
            <li key={s} className={`diff-${s}`}>
              <span className="swatch" aria-hidden="true">
                {DIFF_LEGEND[s].symbol}
              </span>{' '}
              {DIFF_LEGEND[s].label}: {counts.get(s) ?? 0}
            </li>
          ))}
        </ul>
      )}
      {lit && (
        <ul className="legend" aria-label="Paths legend">
          <li className="path-up">
            <span className="swatch" aria-hidden="true">
              ←
            </span>{' '}
            upstream: {lit.upstream.size}
          </li>
          <li className="path-down">
            <span className="swatch" aria-hidden="true">
              →
            </span>{' '}
            downstream: {lit.downstream.size}
          </li>
          <li className="muted">others dimmed · Escape clears</li>
        </ul>
      )}
      <div className="explorer">
        <div
          className="graph"
          aria-label="Architecture graph"
          data-ready="true"
          data-layout={layout.final ? 'final' : 'quick'}
          data-comparing={comparing ? 'true' : 'false'}
          data-paths={lit ? 'true' : 'false'}
        >
          <ReactFlow
            nodes={nodes}
            edges={edges}
            fitView
            fitViewOptions={fitOptions(nodes.length)}
            minZoom={0.05}
            onlyRenderVisibleElements={nodes.length > 150}
            nodesDraggable={false}
            nodesConnectable={false}
            onInit={(instance) => {
              flow.current = instance;
            }}
            onMoveStart={(event) => {
              if (event) moved.current = true;
            }}
            onEdgesChange={onEdgesChange}
            onNodesChange={onNodesChange}
            onEdgeClick={(_, edge) => setSelected({ kind: 'edge', key: edge.id })}
            onNodeClick={(_, node) => setSelected({ kind: 'entity', key: node.id })}
            onPaneClick={() => setSelected(null)}
            proOptions={{ hideAttribution: true }}
          >
            <Background />
            <Controls />
          </ReactFlow>
        </div>
        <aside className="panel" aria-live="polite" aria-label="Details" tabIndex={0} ref={panel}>
          {!entity && !relationship && (
            <p className="muted">
              Select an entity or a relationship (click, or Tab then Enter; Escape clears).
            </p>
          )}
          {entity && (
            <EntityPanel
              ws={ws}
              repository={repository}
              audit={audit}
              entity={entity}
              status={compared.status.get(entity.canonical_key)}
              fields={compared.fields.get(entity.canonical_key)}
              upstream={[...(reached?.upstream ?? [])]}
              downstream={[...(reached?.downstream ?? [])]}
              relationshipKeys={t.relationships
                .filter(
                  (r) =>
                    r.source_key === entity.canonical_key || r.target_key === entity.canonical_key,
                )
                .map((r) => r.canonical_key)}
              names={names}
              onPick={pick}
            />
          )}
          {relationship && (
            <EdgePanel
              ws={ws}
              audit={removedSide(relationship.canonical_key) ? other!.audit_id : audit}
              relationship={relationship}
              status={compared.status.get(relationship.canonical_key)}
              fields={compared.fields.get(relationship.canonical_key)}
            />
          )}
        </aside>
      </div>
      <details>
        <summary>Relationships as a list</summary>
        <ul className="rel-list">
          {visible.relationships.map((r) => (
            <li key={r.canonical_key}>
              <button
                type="button"
                className="link"
                onClick={() => setSelected({ kind: 'edge', key: r.canonical_key })}
              >
                {r.source_key} —{r.kind}→ {r.target_key}
              </button>
            </li>
          ))}
        </ul>
      </details>
    </>
  );
}
