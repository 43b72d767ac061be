/**
 * Tool results an AI client can hold. MCP clients cut or refuse results far smaller than what a
 * whole architecture or a long page weighs (a 97-entity graph with its evidence is ~2.8 MB of
 * JSON), so every tool result is bounded to TOOL_RESULT_MAX_CHARS characters of JSON (~15,000
 * to 20,000 tokens), and what does not fit becomes a summary that says what was left out and how
 * to get it:
 * - a page (`items`) keeps the items that fit, with `has_more` and a `next_cursor` after the last
 *   one kept, so the client pages on as it would over REST;
 * - an architecture graph (`entities` and `relationships`) becomes compact keys with counts;
 *   `explain_entity` gives one entity with its evidence and paths;
 * - anything else keeps its fields, with its longest lists cut to what fits.
 */
import { encodeCursor } from '../../domain/pagination';

/** The most characters of JSON one tool result carries (README: MCP gateway). */
export const TOOL_RESULT_MAX_CHARS = 60_000;
/** The page size list tools use when the client gives no `limit`. */
export const TOOL_DEFAULT_PAGE_SIZE = 20;

const size = (value: unknown) => JSON.stringify(value)?.length ?? 0;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** The largest n in [0, total] for which fits(n) holds, fits being monotone (binary search). */
function largestFitting(total: number, fits: (n: number) => boolean): number {
  let lo = 0;
  let hi = total;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function boundPage(body: Json & { items: unknown[] }, max: number): Json {
  const page = (n: number): Json => {
    const kept = body.items.slice(0, n);
    const last = kept[kept.length - 1];
    const cursor =
      isObject(last) && typeof last.created_at === 'string' && typeof last.id === 'string'
        ? encodeCursor({ createdAt: last.created_at, id: last.id })
        : null;
    return {
      ...body,
      items: kept,
      has_more: true,
      ...(cursor ? { next_cursor: cursor } : {}),
      truncated: {
        reason: `The page was cut to ${n} of ${body.items.length} items to stay under ${max} characters.`,
        hint: cursor
          ? 'Call the tool again with cursor set to next_cursor, or with a smaller limit.'
          : 'Call the tool again with a smaller limit.',
      },
    };
  };
  return page(largestFitting(body.items.length, (n) => size(page(n)) <= max));
}

interface GraphEntity {
  canonical_key?: string;
  kind?: string;
  confidence?: string;
}
interface GraphRelationship {
  source_key?: string;
  target_key?: string;
  kind?: string;
  confidence?: string;
}

function boundGraph(
  body: Json & { entities: GraphEntity[]; relationships: GraphRelationship[] },
  max: number,
): Json {
  const scalars = Object.fromEntries(
    Object.entries(body).filter(([, v]) => v === null || typeof v !== 'object'),
  );
  const byKind: Record<string, number> = {};
  for (const e of body.entities)
    byKind[e.kind ?? 'unknown'] = (byKind[e.kind ?? 'unknown'] ?? 0) + 1;
  const entities = body.entities.map((e) => `${e.canonical_key} (${e.confidence ?? '?'})`);
  const relationships = body.relationships.map(
    (r) => `${r.source_key} -${r.kind}-> ${r.target_key} (${r.confidence ?? '?'})`,
  );
  const summary = (ne: number, nr: number): Json => ({
    ...scalars,
    summary: true,
    counts: {
      entities: body.entities.length,
      relationships: body.relationships.length,
      evidence: Array.isArray(body.evidence) ? body.evidence.length : undefined,
      entities_by_kind: byKind,
    },
    entities: entities.slice(0, ne),
    relationships: relationships.slice(0, nr),
    truncated: {
      reason: `The whole graph is over ${max} characters: entities as "key (confidence)", relationships as "source -kind-> target (confidence)"${
        ne < entities.length || nr < relationships.length
          ? `, ${entities.length - ne} entities and ${relationships.length - nr} relationships left out`
          : ''
      }; evidence and attributes left out.`,
      hint: 'Call explain_entity with an entity key for its attributes, evidence (file, lines, hash) and dependency paths.',
    },
  });
  // Entities first (every key the client can ask about), then as many relationships as fit.
  const ne = largestFitting(entities.length, (n) => size(summary(n, 0)) <= max);
  const nr = largestFitting(relationships.length, (n) => size(summary(ne, n)) <= max);
  return summary(ne, nr);
}

/** The lists of an object, at any depth up to four objects down, with their paths. */
function listsOf(body: Json, prefix: string[] = []): Array<{ path: string[]; list: unknown[] }> {
  const out: Array<{ path: string[]; list: unknown[] }> = [];
  for (const [k, v] of Object.entries(body)) {
    if (Array.isArray(v) && v.length) out.push({ path: [...prefix, k], list: v });
    else if (isObject(v) && prefix.length < 4) out.push(...listsOf(v, [...prefix, k]));
  }
  return out;
}

function withList(body: Json, path: string[], list: unknown[]): Json {
  const [head, ...rest] = path;
  if (!rest.length) return { ...body, [head!]: list };
  return { ...body, [head!]: withList(body[head!] as Json, rest, list) };
}

/** Cuts the longest lists of an object (at any depth) until it fits, naming each cut. */
function boundObject(body: Json, max: number): Json {
  let out: Json = { ...body };
  const cuts: string[] = [];
  const budget = max - 1000; // room for the note saying what was cut
  for (let round = 0; round < 50 && size(out) > budget; round++) {
    const lists = listsOf(out);
    if (!lists.length) break;
    const { path, list } = lists.reduce((a, b) => (size(a.list) >= size(b.list) ? a : b));
    const base = out;
    const keep = largestFitting(
      list.length - 1,
      (n) => size(withList(base, path, list.slice(0, n))) <= budget,
    );
    out = withList(out, path, list.slice(0, keep));
    cuts.push(`${path.join('.')}: ${keep} of ${list.length}`);
  }
  if (cuts.length)
    out.truncated = {
      reason: `Lists cut to stay under ${max} characters (${cuts.join('; ')}).`,
      hint: 'Narrow the request (filters, a smaller limit) or read it over REST.',
    };
  return out;
}

/** Text past the cap, cut at a character boundary with a marker saying how much was left out. */
export function boundText(text: string, max = TOOL_RESULT_MAX_CHARS): string {
  if (text.length <= max) return text;
  const marker = `\n[... ${text.length - max} more characters left out: narrow the request or read it over REST]`;
  return text.slice(0, max - marker.length) + marker;
}

/** A tool result's JSON body, bounded to `max` characters of JSON. */
export function boundToolBody(body: unknown, max = TOOL_RESULT_MAX_CHARS): unknown {
  if (size(body) <= max || !isObject(body)) return body;
  let bounded: Json;
  if (Array.isArray(body.items)) bounded = boundPage(body as Json & { items: unknown[] }, max);
  else if (Array.isArray(body.entities) && Array.isArray(body.relationships))
    bounded = boundGraph(
      body as Json & { entities: GraphEntity[]; relationships: GraphRelationship[] },
      max,
    );
  else bounded = boundObject(body, max);
  // A body whose scalars alone are too long (a huge string) is cut as text by the caller.
  return bounded;
}
