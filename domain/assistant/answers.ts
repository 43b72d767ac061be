/**
 * The graph specialist without a model (pure): answers the structured question families from the
 * context snapshot, citing every key and id it rests on, and says plainly when a question needs
 * a model.
 */
import {
  blockingCases,
  changeFacts,
  datastoreClients,
  decisionsAffecting,
  dependencyFacts,
  emptyGrounding,
  findingsFor,
  holdsData,
  type AssistantContext,
  type Grounding,
} from './facts';
import { plainLine } from '../output/plain';
import { matchEntities, settleRoute, type AssistantRoute, type RoutedQuestion } from './route';

export type GraphAnswer =
  | { kind: 'answer'; routed: RoutedQuestion; text: string; grounding: Grounding }
  /** Only a model can answer this family (free-form questions). */
  | { kind: 'needs_model'; routed: RoutedQuestion };

const ids = (list: string[]) => (list.length ? ` [${list.join(', ')}]` : '');
/**
 * Repository- or member-written text quoted in an answer: one line, control characters removed,
 * between quotes, so it cannot pose as a line of the answer or carry an escape sequence.
 */
const q = (text: string) => JSON.stringify(plainLine(text));

/** Answers `question` from the graph when its family allows; else `needs_model`. */
export function answerFromGraph(
  ctx: AssistantContext,
  question: string,
  first: RoutedQuestion,
): GraphAnswer {
  const named = matchEntities(question, ctx.snapshot.graph.entities);
  const routed = settleRoute(
    first,
    named.map((e) => e.kind),
  );
  const route: AssistantRoute = routed.route;
  if (route === 'general') return { kind: 'needs_model', routed };
  const entity = route === 'datastore_access' ? named.find((e) => holdsData(e.kind)) : named[0];
  const snap = `snapshot ${ctx.snapshot.id}`;
  const answer = (text: string, grounding: Grounding) =>
    ({ kind: 'answer', routed, text, grounding }) as const;

  if (route === 'changes') {
    const f = changeFacts(ctx);
    if (!f.data.from_snapshot_id)
      return answer(
        `There is no earlier completed snapshot of this repository to compare ${snap} with.`,
        f.grounding,
      );
    const lines = f.data.changes.map((c) => `- ${c.change_type}: ${c.key}${ids(c.evidence_ids)}`);
    return answer(
      [
        `From snapshot ${f.data.from_snapshot_id} to ${snap}: ${f.data.changes.length} change(s).`,
        ...lines,
      ].join('\n'),
      f.grounding,
    );
  }
  if (route === 'blocking_uncertainty' || route === 'decisions' || route === 'findings') {
    const key = entity?.canonical_key;
    const about = key ? ` affecting ${key}` : '';
    if (route === 'blocking_uncertainty') {
      const f = blockingCases(ctx, key);
      const decisions = decisionsAffecting(ctx, key).data.decisions.filter(
        (d) => d.status === 'in_review' || d.status === 'proposed',
      );
      const lines = f.data.cases.map(
        (c) => `- case ${c.id} (${c.state}, ${c.reason}) on ${q(c.subject_key)}: ${q(c.detail)}`,
      );
      const pending = decisions.map(
        (d) => `- decision ${d.id} (#${d.number} ${q(d.title)}, ${d.status}) waits on them`,
      );
      const g: Grounding = {
        ...f.grounding,
        decision_ids: f.data.cases.length ? decisions.map((d) => d.id).sort() : [],
      };
      return answer(
        f.data.cases.length
          ? [
              `${f.data.cases.length} open blocking uncertainty case(s)${about} (${snap}):`,
              ...lines,
              ...pending,
            ].join('\n')
          : `No open blocking uncertainty case${about}.`,
        g,
      );
    }
    if (route === 'decisions') {
      const f = decisionsAffecting(ctx, key);
      const lines = f.data.decisions.map(
        (d) => `- decision ${d.id} (#${d.number} ${q(d.title)}, ${d.status})`,
      );
      return answer(
        lines.length
          ? [`${lines.length} decision(s)${about}:`, ...lines].join('\n')
          : `No decision${about}.`,
        f.grounding,
      );
    }
    const f = findingsFor(ctx, key);
    const lines = f.data.findings.map(
      (x) =>
        `- finding ${x.id} (${x.severity}, ${x.control_key}) ${q(x.title)}${ids(x.evidence_ids)}`,
    );
    return answer(
      lines.length
        ? [`${lines.length} open finding(s)${about}:`, ...lines].join('\n')
        : `No open finding${about}.`,
      f.grounding,
    );
  }

  // dependents, dependencies, datastore_access: they need an entity.
  if (!entity)
    return answer(
      `The question names no entity of ${snap}. Name one by its key (for example ${
        ctx.snapshot.graph.entities[0]?.canonical_key ?? 'service:api'
      }) or its name.`,
      emptyGrounding(),
    );
  const key = entity.canonical_key;
  if (route === 'datastore_access') {
    const f = datastoreClients(ctx, key);
    const lines = f.data.clients.map(
      (c) =>
        `- ${c.entity_key} via ${c.relationship_keys.join(', ')} (access ${c.access}, since ${c.since} in snapshot ${c.since_snapshot_id})${ids(c.evidence_ids)}`,
    );
    return answer(
      lines.length
        ? [
            `${lines.length} client(s) of ${key} in ${snap}${
              f.data.clients.some((c) => c.access === 'unknown')
                ? ' (where access is unknown the evidence does not tell reads from writes)'
                : ''
            }:`,
            ...lines,
          ].join('\n')
        : `Nothing in ${snap} reads or writes ${key}.`,
      f.grounding,
    );
  }
  const direction = route === 'dependents' ? 'upstream' : 'downstream';
  const f = dependencyFacts(ctx, key, direction);
  const lines = f.data.paths.map(
    (p) =>
      `- ${p.entity_keys.join(' -> ')} via ${p.relationship_keys.join(', ')} (confidence ${p.confidence})${ids(p.evidence_ids)}`,
  );
  const head =
    direction === 'upstream'
      ? `If ${key} goes away, these depend on it (${snap}):`
      : `${key} depends on (${snap}):`;
  return answer(
    lines.length
      ? [head, ...lines].join('\n')
      : direction === 'upstream'
        ? `Nothing in ${snap} depends on ${key}.`
        : `${key} depends on nothing in ${snap}.`,
    f.grounding,
  );
}

/** What the assistant says when a free-form question reaches it without a model. */
export const NEEDS_MODEL_TEXT =
  'This question needs a language model and none is configured (MODEL_BASE_URL, MODEL_ID). ' +
  'Without one I answer: what depends on <entity>, what <entity> depends on, who reads or ' +
  'writes <datastore>, what changed since the last snapshot, open blocking uncertainty cases, ' +
  'decisions affecting <entity>, and open findings.';
