/**
 * The architecture explorer: the snapshot of an audit as a graph (React Flow, laid out by ELK),
 * filtered by kind and source and searchable. An entity opens its attributes, confidence,
 * sources and contradictions; an edge opens its evidence: file, line range, the cited lines,
 * the SHA-256 and whether the lines still verify. Edges are focusable: Enter selects one.
 */
import { useEffect, useMemo, useState } from 'react';
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
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import ELK from 'elkjs/lib/elk.bundled.js';
import type { Schemas } from '../api/client';
import { useArchitecture, useEvidence } from '../api/queries';
import { Badge, Loading, Problem } from '../components';
import { Link, useTitle } from '../router';

type Truth = Schemas['ArchitectureTruthResponse'];
type Entity = Truth['entities'][number];
type Relationship = Truth['relationships'][number];

const WIDTH = 190;
const HEIGHT = 46;
const elk = new ELK();

/** Positions of the entities, laid out by ELK's layered algorithm (left to right). */
async function layout(entities: Entity[], relationships: Relationship[]) {
  const ids = new Set(entities.map((e) => e.canonical_key));
  const graph = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.spacing.nodeNode': '24',
      'elk.layered.spacing.nodeNodeBetweenLayers': '60',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      // Large graphs: a single crossing-minimisation pass, no greedy switch (bench:console).
      ...(entities.length > 150
        ? {
            'elk.layered.thoroughness': '1',
            'elk.layered.crossingMinimization.greedySwitch.type': 'OFF',
          }
        : {}),
      // Very large graphs keep the model order within each layer (no crossing minimisation):
      // the layout is then about three times faster, and such a graph is read through the
      // filters and the search anyway.
      ...(entities.length > 300 ? { 'elk.layered.crossingMinimization.strategy': 'NONE' } : {}),
    },
    children: entities.map((e) => ({ id: e.canonical_key, width: WIDTH, height: HEIGHT })),
    edges: relationships
      .filter((r) => ids.has(r.source_key) && ids.has(r.target_key))
      .map((r) => ({ id: r.canonical_key, sources: [r.source_key], targets: [r.target_key] })),
  });
  return new Map((graph.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}

type Selected = { kind: 'entity'; entity: Entity } | { kind: 'edge'; relationship: Relationship };

export function Explorer({ ws, audit }: { ws: string; audit: string }) {
  useTitle('Architecture explorer');
  const truth = useArchitecture(ws, audit);
  const [kind, setKind] = useState('all');
  const [source, setSource] = useState('all');
  const [search, setSearch] = useState('');
  const [positions, setPositions] = useState<Map<string, { x: number; y: number }> | null>(null);
  const [selected, setSelected] = useState<Selected | null>(null);

  const visible = useMemo(() => {
    if (!truth.data) return { entities: [], relationships: [] };
    const q = search.trim().toLowerCase();
    const entities = truth.data.entities.filter(
      (e) =>
        (kind === 'all' || e.kind === kind) &&
        (source === 'all' || e.sources.includes(source as Entity['sources'][number])) &&
        (!q || e.name.toLowerCase().includes(q) || e.canonical_key.toLowerCase().includes(q)),
    );
    const keys = new Set(entities.map((e) => e.canonical_key));
    const relationships = truth.data.relationships.filter(
      (r) => keys.has(r.source_key) && keys.has(r.target_key),
    );
    return { entities, relationships };
  }, [truth.data, kind, source, search]);

  useEffect(() => {
    let live = true;
    setPositions(null);
    void layout(visible.entities, visible.relationships).then((p) => live && setPositions(p));
    return () => {
      live = false;
    };
  }, [visible]);

  const nodes: Node[] = useMemo(
    () =>
      visible.entities.map((e) => ({
        id: e.canonical_key,
        position: positions?.get(e.canonical_key) ?? { x: 0, y: 0 },
        data: { label: `${e.name} · ${e.kind}` },
        ariaLabel: `${e.kind} ${e.name}`,
        style: { width: WIDTH },
        // ELK lays the graph out left to right: edges leave on the right, arrive on the left.
        sourcePosition: Position.Right,
        targetPosition: Position.Left,
        className: `node-${e.kind.replace(/[^a-z]/g, '')}`,
      })),
    [visible, positions],
  );
  const edges: Edge[] = useMemo(
    () =>
      visible.relationships.map((r) => ({
        id: r.canonical_key,
        source: r.source_key,
        target: r.target_key,
        label: r.kind,
        ariaLabel: `${r.kind} from ${r.source_key} to ${r.target_key}`,
        markerEnd: { type: MarkerType.ArrowClosed },
        interactionWidth: 16,
      })),
    [visible],
  );

  if (truth.isError) return <Problem error={truth.error} />;
  if (truth.isPending) return <Loading />;
  const t = truth.data;
  const kinds = [...new Set(t.entities.map((e) => e.kind))].sort();
  const openEdge = (id: string) => {
    const r = t.relationships.find((x) => x.canonical_key === id);
    if (r) setSelected({ kind: 'edge', relationship: r });
  };
  const openEntity = (id: string) => {
    const en = t.entities.find((x) => x.canonical_key === id);
    if (en) setSelected({ kind: 'entity', entity: en });
  };
  // The graph is controlled: a selection (a click, or Enter on a focused element) arrives as a
  // `select` change, which opens the element's details.
  const onEdgesChange = (changes: EdgeChange[]) => {
    for (const c of changes) if (c.type === 'select' && c.selected) openEdge(c.id);
  };
  const onNodesChange = (changes: NodeChange[]) => {
    for (const c of changes) if (c.type === 'select' && c.selected) openEntity(c.id);
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
      </div>
      <div className="explorer">
        <div
          className="graph"
          aria-label="Architecture graph"
          data-ready={positions ? 'true' : 'false'}
        >
          {positions && (
            <ReactFlow
              nodes={nodes}
              edges={edges}
              fitView
              minZoom={0.05}
              onlyRenderVisibleElements={nodes.length > 150}
              nodesDraggable={false}
              nodesConnectable={false}
              onEdgesChange={onEdgesChange}
              onNodesChange={onNodesChange}
              onEdgeClick={(_, edge) => openEdge(edge.id)}
              onNodeClick={(_, node) => openEntity(node.id)}
              proOptions={{ hideAttribution: true }}
            >
              <Background />
              <Controls />
            </ReactFlow>
          )}
        </div>
        <aside className="panel" aria-live="polite" aria-label="Details" tabIndex={0}>
          {!selected && (
            <p className="muted">Select an entity or a relationship (click, or Tab then Enter).</p>
          )}
          {selected?.kind === 'entity' && <EntityPanel entity={selected.entity} />}
          {selected?.kind === 'edge' && (
            <EdgePanel ws={ws} audit={audit} relationship={selected.relationship} />
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
                onClick={() => setSelected({ kind: 'edge', relationship: r })}
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

function EntityPanel({ entity }: { entity: Entity }) {
  return (
    <>
      <h2>{entity.name}</h2>
      <p>
        <Badge value={entity.kind} /> confidence {entity.confidence} · sources{' '}
        {entity.sources.join(', ')}
      </p>
      <p>
        <code>{entity.canonical_key}</code>
      </p>
      {Object.keys(entity.attributes).length > 0 && (
        <pre className="attrs" tabIndex={0} aria-label="Attributes">
          {JSON.stringify(entity.attributes, null, 2)}
        </pre>
      )}
      {entity.contradictions.length > 0 && (
        <>
          <h3>Contradictions</h3>
          <ul>
            {entity.contradictions.map((c, i) => (
              <li key={i}>{JSON.stringify(c)}</li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function EdgePanel({
  ws,
  audit,
  relationship,
}: {
  ws: string;
  audit: string;
  relationship: Relationship;
}) {
  return (
    <>
      <h2>
        {relationship.kind}: {relationship.source_key} → {relationship.target_key}
      </h2>
      <p>
        confidence {relationship.confidence} · sources {relationship.sources.join(', ')}
      </p>
      <h3>Evidence ({relationship.evidence_ids.length})</h3>
      {relationship.evidence_ids.map((id) => (
        <EvidenceItem key={id} ws={ws} audit={audit} id={id} />
      ))}
    </>
  );
}

function EvidenceItem({ ws, audit, id }: { ws: string; audit: string; id: string }) {
  const ev = useEvidence(ws, audit, id);
  if (ev.isPending) return <Loading />;
  if (ev.isError) return <Problem error={ev.error} />;
  const e = ev.data;
  return (
    <article className="evidence" data-verification={e.verification}>
      <p>
        <strong>{e.evidence.summary}</strong>
      </p>
      <p>
        <code className="path">{e.path ?? 'no location'}</code>
        {e.start_line !== null && (
          <>
            {' '}
            lines {e.start_line}–{e.end_line}
          </>
        )}
      </p>
      {e.lines.length > 0 && (
        <pre className="cited" aria-label="Cited lines" tabIndex={0}>
          {e.lines.map((l) => (
            <span key={l.number} className="cited-line">
              <span className="ln" aria-hidden="true">
                {l.number}
              </span>
              {l.text}
              {'\n'}
            </span>
          ))}
        </pre>
      )}
      <p className="hash">
        SHA-256 <code>{e.evidence.content_sha256}</code> <Badge value={e.verification} />
      </p>
    </article>
  );
}
