/**
 * What every control evaluator shares: a check on one subject, the assessment context, and the
 * helpers that turn evidence into checks (analysis/controls.ts assesses; evaluators live beside).
 */
import type { EvidenceLocation } from '../evidence';
import type { Entity, Relationship, StoredEvidence } from '../reconcile';
import { compareStrings, uniqueSorted } from '../shared/text';
import { isRecord } from '../shared/values';

export type Verdict = 'pass' | 'fail' | 'unknown';

export interface Check {
  requirement: string;
  verdict: Verdict;
  evidence_ids: string[];
  /** The facts the verdict used (hashed into input_hash). */
  facts: unknown;
  /** What was observed about this subject (finding title when it fails). */
  title: string;
  /** Stable subject, the fingerprint input (never ids or line numbers). */
  subject: string;
  entity_key: string | null;
  location: EvidenceLocation | null;
}

export interface Context {
  evidence: StoredEvidence[];
  byId: Map<string, StoredEvidence>;
  entityOf: Map<string, string>;
  entities: Entity[];
  relationships: Relationship[];
  files: string[];
}

export const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

export function compareLocation(a: EvidenceLocation, b: EvidenceLocation): number {
  return compareStrings(a.path, b.path) || a.start_line - b.start_line || a.end_line - b.end_line;
}

/** A check on one piece of evidence; `extra` evidence ids and the discriminator are optional. */
export function onEvidence(
  ctx: Context,
  e: StoredEvidence,
  c: {
    requirement: string;
    verdict: Verdict;
    title: string;
    facts: unknown;
    discriminator?: string;
    extra?: string[];
  },
): Check {
  return {
    requirement: c.requirement,
    verdict: c.verdict,
    evidence_ids: uniqueSorted([e.id, ...(c.extra ?? [])]),
    facts: c.facts,
    title: c.title,
    subject: [
      e.location.path,
      e.evidence_kind,
      e.subject_key,
      e.object_key ?? '',
      c.discriminator ?? '',
    ].join('\u0000'),
    entity_key: ctx.entityOf.get(e.id) ?? null,
    location: { ...e.location },
  };
}

export function ofKind(ctx: Context, ...kinds: string[]): StoredEvidence[] {
  return ctx.evidence.filter((e) => kinds.includes(e.evidence_kind));
}

/** Containers as (evidence, container facts, discriminator) from compose and Kubernetes. */
export function containers(
  ctx: Context,
): Array<{ e: StoredEvidence; c: Record<string, unknown>; name: string; label: string }> {
  const out: Array<{ e: StoredEvidence; c: Record<string, unknown>; name: string; label: string }> =
    [];
  for (const e of ofKind(ctx, 'service-declared')) {
    if (e.provider !== 'docker-compose') continue;
    out.push({ e, c: e.attributes, name: '', label: `compose service ${e.subject_key}` });
  }
  for (const e of ofKind(ctx, 'workload-declared')) {
    for (const group of ['containers', 'init_containers'] as const) {
      const list = e.attributes[group];
      if (!Array.isArray(list)) continue;
      list.filter(isRecord).forEach((c, i) => {
        const name = typeof c.name === 'string' ? c.name : `#${i}`;
        out.push({ e, c, name: `${group}/${name}`, label: `${e.subject_key} container ${name}` });
      });
    }
  }
  return out;
}
