/**
 * The `changes` stage's evaluation in the analysis pool (issue 24, fair sharing): the two
 * snapshots' graphs come as JSON text, are parsed and diffed here and the gate applied, so that
 * the worker's main thread only moves strings; what comes back is the gate (its changed items)
 * and, against a previous snapshot, the observed changes and their reach in the current graph.
 */
import type { DependencyGraph } from './dependencies';
import { impactOf, normalizeObserved, type NormalizedChange } from '../domain/changes/change-sets';
import {
  evaluateChangeGate,
  type ChangeEvaluation,
  type GateContext,
  type GateSide,
} from '../domain/changes/service';

/** One side of the gate with its graph as JSON text. */
export interface GateSideText {
  id: string;
  sources: string[];
  entities: string;
  relationships: string;
}

export interface ChangeGateInput {
  current: GateSideText;
  previous: GateSideText | null;
  context: GateContext;
  changeRefs: string[];
}

const sideOf = (s: GateSideText): GateSide => ({
  id: s.id,
  sources: s.sources,
  entities: JSON.parse(s.entities) as GateSide['entities'],
  relationships: JSON.parse(s.relationships) as GateSide['relationships'],
});

export interface ChangeGateOutput extends ChangeEvaluation {
  /** Against a previous snapshot: what changed, as an observed change set holds it. */
  observed: { normalized: NormalizedChange[]; impact: ReturnType<typeof impactOf> } | null;
}

export function changeGate(input: ChangeGateInput): ChangeGateOutput {
  const current = sideOf(input.current);
  const evaluated = evaluateChangeGate(
    current,
    input.previous ? sideOf(input.previous) : null,
    input.context,
    input.changeRefs,
  );
  if (!input.previous) return { ...evaluated, observed: null };
  const normalized = normalizeObserved(evaluated.gate.items);
  const impact = impactOf(current as unknown as DependencyGraph, normalized);
  return { ...evaluated, observed: { normalized, impact } };
}

/** The task's size in characters of input (the graphs' text). */
export function changeGateWeight(input: ChangeGateInput): number {
  let chars = 0;
  for (const s of [input.current, input.previous])
    if (s) chars += s.entities.length + s.relationships.length;
  return chars;
}
