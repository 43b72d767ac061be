/**
 * Routing an assistant question (pure): which question family it is (`route`), which specialist
 * answers it, and which entities of the graph it names. The question is data: it is only
 * matched against fixed phrases and the graph's own keys and names, never executed.
 */
import type { AssistantSpecialist } from '../contract/values';

export type AssistantRoute =
  | 'dependents'
  | 'dependencies'
  | 'datastore_access'
  | 'changes'
  | 'blocking_uncertainty'
  | 'decisions'
  | 'findings'
  | 'general';

const SPECIALIST: Record<AssistantRoute, AssistantSpecialist> = {
  dependents: 'graph',
  dependencies: 'graph',
  datastore_access: 'graph',
  changes: 'changes',
  blocking_uncertainty: 'decisions',
  decisions: 'decisions',
  findings: 'findings',
  general: 'general',
};

/** The question as the cache compares it: case, spacing and closing punctuation do not count. */
export function normalizeQuestion(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s?!.]+$/, '');
}

/** Ordered: the first family whose pattern matches wins. */
const FAMILIES: Array<[AssistantRoute, RegExp]> = [
  [
    'datastore_access',
    /\b(who|which|what)\b.*\b(writes?|reads?|accesse?s?|uses?|connects?)\b|\bwriters?\b|\breaders?\b/,
  ],
  [
    'changes',
    /\b(what|which)\b.*\b(changed|changes)\b|\bsince the last (audit|snapshot)\b|\bdiff\b/,
  ],
  ['blocking_uncertainty', /\bblock(ed|ing|s)?\b|\buncertaint(y|ies)\b|\bopen questions?\b/],
  ['decisions', /\bdecisions?\b|\badrs?\b/],
  ['findings', /\bfindings?\b|\bcontrols?\b.*\bfail/],
  [
    'dependents',
    /\bbreaks?\b|\bgoes away\b|\bgo down\b|\bgoes down\b|\bdepends? on\b|\bdependents\b|\bupstream\b|\bimpact\b|\baffected\b/,
  ],
  [
    'dependencies',
    /\bdoes\b.*\bdepend on\b|\bdependencies\b|\bdownstream\b|\bneeds?\b|\brel(y|ies) on\b/,
  ],
];

export interface RoutedQuestion {
  route: AssistantRoute;
  specialist: AssistantSpecialist;
}

/**
 * The family of a question. "What does X depend on" is `dependencies` (X's own needs); "what
 * depends on X" / "what breaks if X goes away" is `dependents`.
 */
export function routeQuestion(question: string): RoutedQuestion {
  const q = normalizeQuestion(question);
  let route: AssistantRoute = 'general';
  if (/\bwhat does\b.*\bdepend on\b|\bdependencies of\b/.test(q)) route = 'dependencies';
  else {
    for (const [family, pattern] of FAMILIES) {
      if (pattern.test(q)) {
        route = family;
        break;
      }
    }
  }
  // "Who uses orders-db" reads as datastore access only when it names a datastore; the caller
  // settles that once entities are matched (see settleRoute).
  return { route, specialist: SPECIALIST[route] };
}

/** A datastore-access question that names no datastore asks about dependents instead. */
export function settleRoute(routed: RoutedQuestion, matchedKinds: string[]): RoutedQuestion {
  if (routed.route === 'datastore_access' && !matchedKinds.some((k) => DATA_KINDS.has(k)))
    return { route: 'dependents', specialist: SPECIALIST.dependents };
  return routed;
}

/** Entity kinds that hold data (writers and readers make sense for them). */
export const DATA_KINDS = new Set(['datastore', 'queue', 'bucket', 'cache', 'topic']);

const WORD = '[a-z0-9]';

/**
 * The entities a question names, by canonical key (`datastore:orders-db`) or by name
 * (`orders-db`) as a whole word; a longer name wins over one it contains (`orders-db` over
 * `orders`). Sorted by where they appear in the question.
 */
export function matchEntities<E extends { canonical_key: string; name: string; kind: string }>(
  question: string,
  entities: readonly E[],
): E[] {
  const q = normalizeQuestion(question);
  const hits: Array<{ entity: E; at: number; end: number }> = kindPhrases(q, entities);
  for (const entity of entities) {
    for (const needle of [entity.canonical_key.toLowerCase(), entity.name.toLowerCase()]) {
      if (needle.length < 2) continue;
      const re = new RegExp(`(?<!${WORD}|-)${escape(needle)}(?!${WORD}|-${WORD})`);
      const m = re.exec(q);
      if (m) {
        hits.push({ entity, at: m.index, end: m.index + needle.length });
        break;
      }
    }
  }
  // Drop a hit lying inside a longer one (the name `orders` inside `orders-db`).
  const kept = hits.filter(
    (h) =>
      !hits.some((o) => o !== h && o.at <= h.at && o.end >= h.end && o.end - o.at > h.end - h.at),
  );
  return kept.sort((a, b) => a.at - b.at).map((h) => h.entity);
}

/** Words that name a kind of entity after a name ("the orders database", "the billing queue"). */
const KIND_WORDS: Array<[string, ReadonlySet<string>]> = [
  ['databases?|dbs?|datastores?|data stores?|stores?|storage', new Set(['datastore', 'cache'])],
  ['caches?', new Set(['cache', 'datastore'])],
  ['queues?|brokers?|topics?|streams?|bus', new Set(['queue', 'topic'])],
  ['buckets?', new Set(['bucket'])],
];

/**
 * "The orders database" names the datastore whose name has the word `orders` (`orders-db`,
 * `orders_postgres`), not the service `orders`: a name followed by a kind word resolves among
 * the entities of that kind, the one with the fewest other words first. The hit spans both
 * words, so it wins over the bare name inside it.
 */
function kindPhrases<E extends { canonical_key: string; name: string; kind: string }>(
  q: string,
  entities: readonly E[],
): Array<{ entity: E; at: number; end: number }> {
  const out: Array<{ entity: E; at: number; end: number }> = [];
  for (const [words, kinds] of KIND_WORDS) {
    const re = new RegExp(`(?<!${WORD})(${WORD}+) (?:${words})(?!${WORD})`, 'g');
    for (const m of q.matchAll(re)) {
      const word = m[1]!;
      const candidates = entities
        .filter((e) => kinds.has(e.kind))
        .map((e) => ({
          e,
          words: e.name
            .toLowerCase()
            .split(/[^a-z0-9]+/)
            .filter(Boolean),
        }))
        .filter((c) => c.words.includes(word))
        .sort(
          (a, b) =>
            a.words.length - b.words.length || (a.e.canonical_key < b.e.canonical_key ? -1 : 1),
        );
      if (candidates[0])
        out.push({ entity: candidates[0].e, at: m.index, end: m.index + m[0].length });
    }
  }
  return out;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
