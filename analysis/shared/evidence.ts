/** Building analyzer evidence and putting an analyzer's output in its one order. */
import {
  cite,
  compareEvidence,
  compareGaps,
  type AnalyzerGap,
  type AnalyzerOutput,
  type Evidence,
  type SourceFile,
  type SourceType,
} from '../evidence';
import { errorMessage } from './text';

/** 1-based inclusive line range. */
export interface Span {
  start: number;
  end: number;
}

export interface EvidenceFields {
  source: SourceType;
  provider: string;
  kind: string;
  subject: string;
  relationship?: string | null;
  object?: string | null;
  summary: string;
  attributes?: Record<string, unknown>;
}

/**
 * One evidence record citing `span` of `file`. A relationship needs an object: without one
 * (an image named only by a variable, say) the record states no relationship either.
 */
export function evidence(file: SourceFile, span: Span, f: EvidenceFields): Evidence {
  const object = f.object ?? null;
  return cite(file, span.start, span.end, {
    source_type: f.source,
    provider: f.provider,
    evidence_kind: f.kind,
    subject_key: f.subject,
    relationship_kind: object === null ? null : (f.relationship ?? null),
    object_key: object,
    summary: f.summary,
    attributes: f.attributes ?? {},
  });
}

/** The relationship fields of an evidence record from an optional `[relationship, object]`. */
export function related(rel: readonly [string, string | null] | null | undefined): {
  relationship: string | null;
  object: string | null;
} {
  return { relationship: rel?.[0] ?? null, object: rel?.[1] ?? null };
}

/** Evidence and gaps in the order analyzers return them (by path, then line, then content). */
export function sortOutput(out: AnalyzerOutput): AnalyzerOutput {
  return {
    evidence: [...out.evidence].sort(compareEvidence),
    gaps: [...out.gaps].sort(compareGaps),
  };
}

/** The coverage gap of a file an analyzer failed on: the failure is said, the other files still count. */
export function analyzerErrorGap(path: string, what: string, err: unknown): AnalyzerGap {
  return { path, reason: 'analyzer_error', message: `${what} failed: ${errorMessage(err)}` };
}
