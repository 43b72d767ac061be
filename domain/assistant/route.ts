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
export function matchEntities<E extends { canonical_key: string; name: string }>(
  question: string,
  entities: readonly E[],
): E[] {
  const q = normalizeQuestion(question);
  const hits: Array<{ entity: E; at: number; end: number }> = [];
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

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
