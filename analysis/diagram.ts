/**
 * Architecture diagrams from a reconciled graph: Mermaid flowchart source, and a standalone SVG
 * laid out by dagre. Pure and deterministic: the same entities and relationships (in any order)
 * always give the same text.
 */
import { plainLine } from '../domain/output/plain';
import type * as Dagre from '@dagrejs/dagre' with { 'resolution-mode': 'import' };
import { compareStrings } from './shared/text';

// dagre ships ES module types but a CommonJS build too; this project is CommonJS (module node16),
// which refuses a static import of an ES module's types, so: types by import, code by require.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { graphlib, layout } = require('@dagrejs/dagre') as typeof Dagre;

/** The parts of an entity a diagram shows (a reconcile Entity or a stored snapshot entity). */
export interface DiagramEntity {
  canonical_key: string;
  kind: string;
  name: string;
}

/** The parts of a relationship a diagram shows. */
export interface DiagramRelationship {
  canonical_key: string;
  source_key: string;
  target_key: string;
  kind: string;
}

export interface DiagramGraph {
  entities: readonly DiagramEntity[];
  relationships: readonly DiagramRelationship[];
}

/**
 * A stored snapshot's entities and relationships (free JSON objects) as the renderers read
 * them; a missing text field becomes ''.
 */
export function diagramGraphOf(snapshot: {
  entities: ReadonlyArray<object>;
  relationships: ReadonlyArray<object>;
}): DiagramGraph {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  type Fields = Partial<Record<keyof DiagramRelationship | 'name', unknown>>;
  return {
    entities: (snapshot.entities as Fields[]).map((e) => ({
      canonical_key: text(e.canonical_key),
      kind: text(e.kind),
      name: text(e.name),
    })),
    relationships: (snapshot.relationships as Fields[]).map((r) => ({
      canonical_key: text(r.canonical_key),
      source_key: text(r.source_key),
      target_key: text(r.target_key),
      kind: text(r.kind),
    })),
  };
}

interface KindStyle {
  /** The Mermaid subgraph title. */
  group: string;
  /** Mermaid node shape: text before and after the quoted label. */
  open: string;
  close: string;
  fill: string;
  stroke: string;
}

/** Known kinds in diagram order (reconcile's GRAPH_KINDS, grouped by role). */
const KINDS: Record<string, KindStyle> = {
  service: { group: 'Services', open: '[', close: ']', fill: '#dbeafe', stroke: '#2563eb' },
  datastore: { group: 'Datastores', open: '[(', close: ')]', fill: '#dcfce7', stroke: '#16a34a' },
  queue: { group: 'Queues', open: '>', close: ']', fill: '#fef3c7', stroke: '#d97706' },
  bucket: { group: 'Buckets', open: '[/', close: '/]', fill: '#ffedd5', stroke: '#ea580c' },
  cluster: { group: 'Clusters', open: '[[', close: ']]', fill: '#e0f2fe', stroke: '#0284c7' },
  network: { group: 'Networks', open: '([', close: '])', fill: '#ecfeff', stroke: '#0891b2' },
  ingress: { group: 'Ingresses', open: '[/', close: '\\]', fill: '#fce7f3', stroke: '#db2777' },
  external: {
    group: 'External systems',
    open: '((',
    close: '))',
    fill: '#f3f4f6',
    stroke: '#6b7280',
  },
  pipeline: { group: 'Pipelines', open: '{{', close: '}}', fill: '#ede9fe', stroke: '#7c3aed' },
  job: { group: 'Jobs', open: '[[', close: ']]', fill: '#fae8ff', stroke: '#c026d3' },
  environment: {
    group: 'Environments',
    open: '(',
    close: ')',
    fill: '#f1f5f9',
    stroke: '#475569',
  },
};
const KIND_ORDER = Object.keys(KINDS);
const OTHER: Omit<KindStyle, 'group'> = {
  open: '[',
  close: ']',
  fill: '#ffffff',
  stroke: '#64748b',
};

const known = (kind: string): KindStyle | undefined =>
  Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
const styleOf = (kind: string): Omit<KindStyle, 'group'> => known(kind) ?? OTHER;

/** Code-unit order, not locale order: the same on every machine. */

interface Node {
  id: string;
  key: string;
  kind: string;
  label: string;
}

interface Edge {
  key: string;
  source: Node;
  target: Node;
  kind: string;
}

/** Entities sorted by key (duplicates dropped) with ids n0, n1...; edges between known nodes. */
function normalize(graph: DiagramGraph): { nodes: Node[]; edges: Edge[] } {
  const byKey = new Map<string, DiagramEntity>();
  for (const e of [...graph.entities].sort((a, b) =>
    compareStrings(a.canonical_key, b.canonical_key),
  )) {
    if (!byKey.has(e.canonical_key)) byKey.set(e.canonical_key, e);
  }
  const nodes: Node[] = [...byKey.values()].map((e, i) => ({
    id: `n${i}`,
    key: e.canonical_key,
    kind: e.kind,
    label: e.name || e.canonical_key,
  }));
  const nodeOf = new Map(nodes.map((n) => [n.key, n]));
  const seen = new Set<string>();
  const edges: Edge[] = [];
  const sorted = [...graph.relationships].sort(
    (a, b) =>
      compareStrings(a.source_key, b.source_key) ||
      compareStrings(a.target_key, b.target_key) ||
      compareStrings(a.kind, b.kind) ||
      compareStrings(a.canonical_key, b.canonical_key),
  );
  for (const r of sorted) {
    const source = nodeOf.get(r.source_key);
    const target = nodeOf.get(r.target_key);
    // A relationship to an entity outside the graph has nowhere to point.
    if (!source || !target || seen.has(r.canonical_key)) continue;
    seen.add(r.canonical_key);
    edges.push({ key: r.canonical_key, source, target, kind: r.kind });
  }
  return { nodes, edges };
}

/** Kinds present, known ones in diagram order, then the rest alphabetically. */
function groups(
  nodes: Node[],
): Array<{ kind: string; slug: string; title: string; nodes: Node[] }> {
  const kinds = [...new Set(nodes.map((n) => n.kind))].sort((a, b) => {
    const ia = KIND_ORDER.indexOf(a);
    const ib = KIND_ORDER.indexOf(b);
    if (ia !== -1 || ib !== -1) return (ia === -1 ? 1e9 : ia) - (ib === -1 ? 1e9 : ib);
    return compareStrings(a, b);
  });
  let other = 0;
  return kinds.map((kind) => ({
    kind,
    slug: known(kind) ? kind : `other${other++}`,
    title: known(kind)?.group ?? (kind || 'other'),
    nodes: nodes.filter((n) => n.kind === kind),
  }));
}

// ---------------------------------------------------------------------------------------------
// Mermaid

/**
 * Mermaid entity codes for every character that could end a quoted label, open a shape, start
 * an entity code, be read as HTML or end an edge label. `#` first in the map: it is what the
 * codes themselves start with, and the replacement is a single pass.
 */
const MERMAID_CODES: Record<string, string> = {
  '#': '#35;',
  '"': '#quot;',
  '&': '#amp;',
  '<': '#lt;',
  '>': '#gt;',
  '[': '#91;',
  ']': '#93;',
  '(': '#40;',
  ')': '#41;',
  '{': '#123;',
  '}': '#125;',
  '|': '#124;',
  '`': '#96;',
};

/** A label as Mermaid's `"..."` quoted text: specials as entity codes, line breaks as spaces. */
export function mermaidLabel(text: string): string {
  const flat = plainLine(text);
  return `"${flat.replace(/[#"&<>[\](){}|`]/g, (c) => MERMAID_CODES[c] ?? c)}"`;
}

/** Mermaid flowchart source: nodes grouped in subgraphs by kind, shaped and colored by kind. */
export function mermaid(graph: DiagramGraph): string {
  const { nodes, edges } = normalize(graph);
  const lines = ['flowchart LR'];
  if (nodes.length === 0) {
    lines.push(`  empty[${mermaidLabel('No entities')}]`);
    return `${lines.join('\n')}\n`;
  }
  const grouped = groups(nodes);
  for (const g of grouped) {
    lines.push(`  subgraph g_${g.slug}[${mermaidLabel(g.title)}]`);
    const { open, close } = styleOf(g.kind);
    for (const n of g.nodes) lines.push(`    ${n.id}${open}${mermaidLabel(n.label)}${close}`);
    lines.push('  end');
  }
  for (const e of edges) {
    lines.push(`  ${e.source.id} -->|${mermaidLabel(e.kind)}| ${e.target.id}`);
  }
  for (const g of grouped) {
    const { fill, stroke } = styleOf(g.kind);
    lines.push(`  classDef k_${g.slug} fill:${fill},stroke:${stroke},color:#111827`);
    lines.push(`  class ${g.nodes.map((n) => n.id).join(',')} k_${g.slug}`);
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// SVG

const FONT = 'ui-sans-serif, system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';
const NAME_SIZE = 13;
const KIND_SIZE = 10;
const EDGE_SIZE = 10;
/** Approximate advance of one character, per pixel of font size (no font metrics here). */
const CHAR_WIDTH = 0.62;
const NODE_HEIGHT = 46;
const MAX_LABEL = 48;
const PAD = 20;

/** Text safe in XML content and attribute values; characters XML 1.0 forbids are dropped. */
export function xmlEscape(text: string): string {
  // DEL, C1 and the bidi controls (which reorder what a reader sees) are dropped too.
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const truncate = (text: string) =>
  [...text].length > MAX_LABEL ? `${[...text].slice(0, MAX_LABEL - 1).join('')}…` : text;
const textWidth = (text: string, size: number) => [...text].length * size * CHAR_WIDTH;
/** Coordinates with one decimal, never `-0`: compact and stable. */
const num = (n: number) => String(Math.round(n * 10) / 10 + 0);

interface Point {
  x: number;
  y: number;
}

/** A path through dagre's points: straight ends, quadratic bends at the inner points. */
function pathThrough(points: Point[]): string {
  const [first, ...rest] = points;
  if (!first) return '';
  const parts = [`M${num(first.x)},${num(first.y)}`];
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i]!;
    const next = rest[i + 1]!;
    parts.push(`Q${num(p.x)},${num(p.y)} ${num((p.x + next.x) / 2)},${num((p.y + next.y) / 2)}`);
  }
  const last = rest[rest.length - 1];
  if (last) parts.push(`L${num(last.x)},${num(last.y)}`);
  return parts.join(' ');
}

export interface SvgOptions {
  /** The document title (`<title>`); defaults to "Architecture diagram". */
  title?: string;
}

function emptySvg(title: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 80" width="240" height="80" role="img">`,
    `<title>${xmlEscape(title)}</title>`,
    `<rect x="0.5" y="0.5" width="239" height="79" rx="6" fill="#ffffff" stroke="#cbd5e1"/>`,
    `<text x="120" y="45" text-anchor="middle" font-family="${FONT}" font-size="${NAME_SIZE}" fill="#64748b">No entities</text>`,
    `</svg>`,
  ].join('\n');
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

interface Drawn {
  edge: Edge;
  points: Point[];
  label: Box;
}

/**
 * Above this many entities plus relationships the SVG is not laid out by dagre: its layered
 * layout grows much faster than the graph (130 services with 260 relationships took 15 s on a loaded 2-core machine, 500 took 90 s;
 * issue 24),
 * and the diagram is rendered on request. Such a graph is placed on a grid instead, in linear
 * time; no one reads the edges of a 10,000-box drawing, but the boxes stay findable.
 */
export const LAYERED_MAX_ITEMS = 250;

/** dagre's layered layout, left to right, sized from the labels. */
function layeredPlacement(
  nodes: Node[],
  edges: Edge[],
  widthOf: (n: Node) => number,
): { boxes: Map<string, Box>; drawn: Drawn[] } {
  const g = new graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 28, ranksep: 80, edgesep: 16, marginx: PAD, marginy: PAD });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: widthOf(n), height: NODE_HEIGHT });
  for (const e of edges) {
    g.setEdge(
      e.source.id,
      e.target.id,
      {
        width: Math.ceil(textWidth(e.kind, EDGE_SIZE) + 8),
        height: EDGE_SIZE + 6,
        labelpos: 'c',
      },
      e.key,
    );
  }
  layout(g);
  const box = (id: string): Box => {
    const n = g.node(id) as { x: number; y: number; width: number; height: number };
    return { x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height };
  };
  const boxes = new Map(nodes.map((n) => [n.id, box(n.id)]));
  const drawn: Drawn[] = edges.map((e) => {
    const d = g.edge(e.source.id, e.target.id, e.key) as {
      points: Point[];
      x: number;
      y: number;
      width: number;
      height: number;
    };
    return {
      edge: e,
      points: d.points,
      label: { x: d.x - d.width / 2, y: d.y - d.height / 2, width: d.width, height: d.height },
    };
  });
  return { boxes, drawn };
}

/**
 * A grid: the kinds in diagram order, each starting a new row, about as many columns as rows;
 * each relationship a straight line from its source's right side to its target's left side.
 */
function gridPlacement(
  nodes: Node[],
  edges: Edge[],
  widthOf: (n: Node) => number,
): { boxes: Map<string, Box>; drawn: Drawn[] } {
  const columns = Math.max(1, Math.ceil(Math.sqrt(nodes.length)));
  const cellWidth = nodes.reduce((m, n) => Math.max(m, widthOf(n)), 0) + 80;
  const cellHeight = NODE_HEIGHT + 40;
  const boxes = new Map<string, Box>();
  let row = 0;
  for (const group of groups(nodes)) {
    group.nodes.forEach((n, i) => {
      if (i > 0 && i % columns === 0) row += 1;
      boxes.set(n.id, {
        x: PAD + (i % columns) * cellWidth,
        y: PAD + row * cellHeight,
        width: widthOf(n),
        height: NODE_HEIGHT,
      });
    });
    row += 1;
  }
  const drawn: Drawn[] = edges.map((e) => {
    const s = boxes.get(e.source.id)!;
    const t = boxes.get(e.target.id)!;
    const from = { x: s.x + s.width, y: s.y + s.height / 2 };
    const to = { x: t.x, y: t.y + t.height / 2 };
    const width = Math.ceil(textWidth(e.kind, EDGE_SIZE) + 8);
    const height = EDGE_SIZE + 6;
    const mid = { x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 };
    return {
      edge: e,
      points: [from, to],
      label: { x: mid.x - width / 2, y: mid.y - height / 2, width, height },
    };
  });
  return { boxes, drawn };
}

/**
 * A standalone SVG of the graph. dagre computes every position (left to right, sized from the
 * labels); this only draws what it computed: a rounded box per entity, a path along dagre's
 * points per relationship, with an arrowhead and its kind at dagre's label position.
 */
export function svg(graph: DiagramGraph, options: SvgOptions = {}): string {
  const title = options.title ?? 'Architecture diagram';
  const { nodes, edges } = normalize(graph);
  if (nodes.length === 0) return emptySvg(title);

  const shown = new Map(nodes.map((n) => [n.id, truncate(n.label)]));
  const widthOf = (n: Node) =>
    Math.ceil(
      Math.max(96, textWidth(shown.get(n.id)!, NAME_SIZE) + 28, textWidth(n.kind, KIND_SIZE) + 28),
    );
  // dagre routes self loops oddly when laid out left to right: they are drawn from the node's box.
  const loops = edges.filter((e) => e.source === e.target);
  const straight = edges.filter((e) => e.source !== e.target);
  const layered = nodes.length + straight.length <= LAYERED_MAX_ITEMS;
  const { boxes, drawn } = layered
    ? layeredPlacement(nodes, straight, widthOf)
    : gridPlacement(nodes, straight, widthOf);
  for (const e of loops) {
    const b = boxes.get(e.source.id)!;
    const right = b.x + b.width;
    const top = b.y;
    const lw = Math.ceil(textWidth(e.kind, EDGE_SIZE) + 8);
    drawn.push({
      edge: e,
      points: [
        { x: right - 24, y: top },
        { x: right - 24, y: top - 22 },
        { x: right + 22, y: top - 22 },
        { x: right + 22, y: top + 18 },
        { x: right, y: top + 18 },
      ],
      label: { x: right + 24, y: top - 22 - (EDGE_SIZE + 6), width: lw, height: EDGE_SIZE + 6 },
    });
  }
  drawn.sort((a, b) => compareStrings(a.edge.key, b.edge.key));

  // The canvas: everything dagre placed, plus the margin.
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  const cover = (x: number, y: number) => {
    minX = Math.min(minX, x);
    minY = Math.min(minY, y);
    maxX = Math.max(maxX, x);
    maxY = Math.max(maxY, y);
  };
  for (const b of [...boxes.values(), ...drawn.map((d) => d.label)]) {
    cover(b.x, b.y);
    cover(b.x + b.width, b.y + b.height);
  }
  for (const d of drawn) for (const p of d.points) cover(p.x, p.y);
  const vx = Math.floor(minX - PAD);
  const vy = Math.floor(minY - PAD);
  const vw = Math.ceil(maxX + PAD) - vx;
  const vh = Math.ceil(maxY + PAD) - vy;

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${vx} ${vy} ${vw} ${vh}" width="${vw}" height="${vh}" role="img" font-family="${FONT}">`,
    `<title>${xmlEscape(title)}</title>`,
    `<desc>${nodes.length} entities, ${edges.length} relationships${layered ? '' : ' (too many for a layered layout: placed on a grid by kind)'}</desc>`,
    '<defs>',
    '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">',
    '<path d="M0,0 L10,5 L0,10 z" fill="#475569"/>',
    '</marker>',
    '</defs>',
    `<rect x="${vx}" y="${vy}" width="${vw}" height="${vh}" fill="#ffffff"/>`,
    '<g class="edges">',
  ];
  for (const d of drawn) {
    out.push(
      `<path class="edge" data-key="${xmlEscape(d.edge.key)}" d="${pathThrough(d.points)}" fill="none" stroke="#475569" stroke-width="1.4" marker-end="url(#arrow)"/>`,
    );
  }
  for (const d of drawn) {
    const l = d.label;
    out.push(
      `<g class="edge-label" data-key="${xmlEscape(d.edge.key)}">` +
        `<rect x="${num(l.x)}" y="${num(l.y)}" width="${num(l.width)}" height="${num(l.height)}" rx="3" fill="#ffffff" fill-opacity="0.85"/>` +
        `<text x="${num(l.x + l.width / 2)}" y="${num(l.y + l.height / 2)}" dominant-baseline="central" text-anchor="middle" font-size="${EDGE_SIZE}" fill="#334155">${xmlEscape(d.edge.kind)}</text>` +
        '</g>',
    );
  }
  out.push('</g>', '<g class="nodes">');
  for (const n of nodes) {
    const b = boxes.get(n.id)!;
    const { fill, stroke } = styleOf(n.kind);
    const cx = b.x + b.width / 2;
    out.push(
      `<g class="node" data-key="${xmlEscape(n.key)}" data-kind="${xmlEscape(n.kind)}">` +
        `<title>${xmlEscape(n.key)}</title>` +
        `<rect x="${num(b.x)}" y="${num(b.y)}" width="${num(b.width)}" height="${num(b.height)}" rx="8" ry="8" fill="${fill}" stroke="${stroke}" stroke-width="1.5"/>` +
        `<text x="${num(cx)}" y="${num(b.y + 19)}" text-anchor="middle" font-size="${NAME_SIZE}" font-weight="600" fill="#111827">${xmlEscape(shown.get(n.id)!)}</text>` +
        `<text x="${num(cx)}" y="${num(b.y + 35)}" text-anchor="middle" font-size="${KIND_SIZE}" fill="#475569">${xmlEscape(n.kind)}</text>` +
        '</g>',
    );
  }
  out.push('</g>', '</svg>');
  return out.join('\n');
}
