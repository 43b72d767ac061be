/**
 * Uncertainty case candidates from one architecture snapshot: what the audit could not settle.
 * Pure and deterministic; the store decides whether a candidate opens a new case or updates the
 * one with the same identity. The rules (documented in docs/decisions.md):
 *
 * - `conflicting_evidence` (scope `attribute`, field = the attribute): each ConflictingClaim of an
 *   entity or relationship; one alternative per claimed value. Blocking when the field decides
 *   what runs (image tag, container port, engine, engine version); a replica count disagreement is not blocking.
 * - `low_confidence` (scope `entity` / `relationship`): confidence below LOW_CONFIDENCE (0.50),
 *   i.e. only inferred from one kind of weak evidence. Never blocking.
 * - `unresolved_reference` (scope `entity`): a service, datastore, queue or bucket that something
 *   references (a URL, a dependency, a route) but that no file declares. Not blocking.
 * - `missing_source` (scope `source`, subject `source:<type>`): a source type the audit asked
 *   for and found no evidence of. Blocking: the architecture is known only in part.
 * - `ambiguous_identity` (scope `entity`): identity conflicts of reconcile, deployables that
 *   evidence would have merged. One case per shared cause (the identity they all claim: one
 *   build context, one image, one alias), subject that identity, listing every deployable it
 *   affects (as alternatives); a lone conflict keeps the first entity kept apart as subject.
 *   Not blocking; the snapshot is `partial` (architectureStatus).
 * - `conflicting_evidence` (scope `relationship`, subject `calls:<source>-><target>`): a runtime
 *   call observed by ingested evidence that no code or configuration declares
 *   (domain/architecture/ingested.ts). Not blocking.
 */
import crypto from 'node:crypto';
import { uniqueSorted } from './shared/text';
import { confidence, type StoredEvidence } from './reconcile';

export const LOW_CONFIDENCE = 0.5;
/** Contradicted fields that block a decision: they change what actually runs. */
export const BLOCKING_FIELDS = new Set(['image_tag', 'container_port', 'engine', 'engine_version']);
/** Kinds a reference must resolve to a declaration of. Externals are declared by being called. */
const DECLARABLE = new Set(['service', 'datastore', 'queue', 'bucket']);

export interface SnapshotEvidence {
  id: string;
  source_type: string;
  provider: string;
  evidence_kind: string;
  subject_key: string;
  object_key: string | null;
  location: { path: string; start_line: number; end_line: number } | null;
  content_sha256: string;
  attributes: Record<string, unknown>;
}

interface Claim {
  value: unknown;
  evidence_ids: string[];
  sources: string[];
}
export interface SnapshotItem {
  canonical_key: string;
  kind: string;
  confidence: string;
  evidence_ids: string[];
  attributes: Record<string, unknown>;
  contradictions: Array<{ field: string; claims: Claim[] }>;
}

/** One value a source claims for a contested field. */
export interface ClaimAlternative {
  value: unknown;
  confidence: string;
  evidence_ids: string[];
  sources: string[];
}

export interface CaseCandidate {
  reason:
    | 'conflicting_evidence'
    | 'low_confidence'
    | 'unresolved_reference'
    | 'missing_source'
    | 'ambiguous_identity';
  scope: 'entity' | 'relationship' | 'attribute' | 'source';
  subject_key: string;
  field: string | null;
  detail: string;
  blocking: boolean;
  source_keys: string[];
  evidence_ids: string[];
  alternatives: ClaimAlternative[];
  /** SHA-256 over the cited lines and claimed values: the same evidence gives the same print. */
  fingerprint: string;
}

/** An identity conflict of reconcile (analysis/reconcile.ts IdentityConflict). */
export interface SnapshotConflict {
  keys: string[];
  rule: string;
  evidence_ids: string[];
  detail: string;
  /** The identity both sides claimed (reconcile's shared cause); conflicts sharing it are one case. */
  shared?: string;
}

/**
 * Analyzer gap reasons that mean a deployment or pipeline description was seen but not read, or
 * read to nothing: the graph lacks what it declares, so the snapshot cannot be `complete`.
 * (A binary or oversized file, or a broken package manifest, is a gap too, but says nothing
 * about what is deployed.)
 */
export const UNREAD_DESCRIPTION_REASONS = new Set([
  'yaml_parse_error',
  'yaml_not_a_mapping',
  'terraform_parse_error',
  'template_not_rendered',
  'helm_template_not_rendered',
  'helm_values_not_read',
  'dockerfile_no_from',
  'analyzer_error',
  'compose_no_services',
  'compose_invalid',
  'compose_include_not_read',
  'compose_env_file_missing',
  'compose_extends_not_resolved',
  'kubernetes_no_objects',
]);

/**
 * The snapshot's status: `partial` when a source type is missing, reconcile had to keep
 * deployables apart (an identity conflict: the graph holds a guess), it guessed which deployment
 * variant is the primary one, a deployment description could not be read, or a budget left files
 * unread (`budgetCut`); else `complete`.
 */
export function architectureStatus(input: {
  missingSources: string[];
  conflicts?: SnapshotConflict[];
  gaps?: Array<{ reason: string }>;
  guessedVariant?: boolean;
  budgetCut?: boolean;
}): 'complete' | 'partial' {
  return input.missingSources.length > 0 ||
    (input.conflicts?.length ?? 0) > 0 ||
    input.guessedVariant === true ||
    input.budgetCut === true ||
    (input.gaps ?? []).some((g) => UNREAD_DESCRIPTION_REASONS.has(g.reason))
    ? 'partial'
    : 'complete';
}

/** A choice between deployment variants (analysis/variants.ts VariantChoice). */
export interface SnapshotVariant {
  family: string;
  primary: string;
  others: string[];
  guessed: boolean;
  evidence_ids: string[];
  detail: string;
}

/** A runtime call seen by ingested evidence that nothing declares. */
export interface UndeclaredCall {
  source_key: string;
  target_key: string;
  evidence_ids: string[];
  providers: string[];
  last_observed_at: string;
}

export function uncertaintyCandidates(input: {
  entities: SnapshotItem[];
  relationships: SnapshotItem[];
  evidence: SnapshotEvidence[];
  missingSources: string[];
  conflicts?: SnapshotConflict[];
  undeclaredCalls?: UndeclaredCall[];
  variants?: SnapshotVariant[];
}): CaseCandidate[] {
  const byId = new Map(input.evidence.map((e) => [e.id, e]));
  const cited = (ids: string[]) =>
    ids.map((id) => byId.get(id)).filter((e): e is SnapshotEvidence => e !== undefined);
  const where = (e: SnapshotEvidence) =>
    e.location ? `${e.location.path}:${e.location.start_line}-${e.location.end_line}` : e.provider;
  const fingerprint = (ids: string[], extra: unknown) =>
    crypto
      .createHash('sha256')
      .update(
        JSON.stringify([
          uniqueSorted(cited(ids).map((e) => `${where(e)}@${e.content_sha256}`)),
          extra ?? null,
        ]),
      )
      .digest('hex');
  const paths = (ids: string[]) =>
    uniqueSorted(cited(ids).map((e) => e.location?.path ?? e.provider));
  const out: CaseCandidate[] = [];
  const items = [
    ...input.entities.map((x) => ({ x, scope: 'entity' as const })),
    ...input.relationships.map((x) => ({ x, scope: 'relationship' as const })),
  ];

  for (const { x } of items) {
    for (const c of x.contradictions) {
      const alternatives = c.claims.map((claim) => {
        const ev = cited(claim.evidence_ids);
        return {
          value: claim.value,
          confidence: ev.length ? confidence(ev as unknown as StoredEvidence[], 0) : '0.05',
          evidence_ids: [...claim.evidence_ids].sort(),
          sources: uniqueSorted(ev.map((e) => e.source_type)),
        };
      });
      const ids = uniqueSorted(c.claims.flatMap((claim) => claim.evidence_ids));
      const said = c.claims
        .map(
          (claim) =>
            `${JSON.stringify(claim.value)} (${uniqueSorted(cited(claim.evidence_ids).map(where)).join(', ')})`,
        )
        .join(' vs ');
      out.push({
        reason: 'conflicting_evidence',
        scope: 'attribute',
        subject_key: x.canonical_key,
        field: c.field,
        detail: `Sources disagree on ${c.field} of ${x.canonical_key}: ${said}.`,
        blocking: BLOCKING_FIELDS.has(c.field),
        source_keys: paths(ids),
        evidence_ids: ids,
        alternatives,
        fingerprint: fingerprint(
          ids,
          alternatives.map((a) => a.value),
        ),
      });
    }
  }

  for (const { x, scope } of items) {
    if (Number(x.confidence) >= LOW_CONFIDENCE) continue;
    const ids = uniqueSorted(x.evidence_ids);
    const kinds = uniqueSorted(cited(ids).map((e) => e.evidence_kind));
    out.push({
      reason: 'low_confidence',
      scope,
      subject_key: x.canonical_key,
      field: null,
      detail: `${x.canonical_key} has confidence ${x.confidence} (below ${LOW_CONFIDENCE.toFixed(2)}): only ${kinds.join(', ') || 'no'} evidence, from one source type.`,
      blocking: false,
      source_keys: paths(ids),
      evidence_ids: ids,
      alternatives: [],
      fingerprint: fingerprint(ids, x.confidence),
    });
  }

  for (const e of input.entities) {
    if (!DECLARABLE.has(e.kind)) continue;
    const names = new Set([
      e.canonical_key,
      ...(Array.isArray(e.attributes.aliases) ? (e.attributes.aliases as string[]) : []),
    ]);
    const ev = cited(e.evidence_ids);
    if (ev.some((r) => names.has(r.subject_key))) continue;
    const ids = uniqueSorted(ev.map((r) => r.id));
    out.push({
      reason: 'unresolved_reference',
      scope: 'entity',
      subject_key: e.canonical_key,
      field: null,
      detail: `${e.canonical_key} is referenced (${uniqueSorted(ev.map(where)).join(', ')}) but no file declares it.`,
      blocking: false,
      source_keys: paths(ids),
      evidence_ids: ids,
      alternatives: [],
      fingerprint: fingerprint(ids, null),
    });
  }

  // One question per shared cause: every conflict over the same claimed identity (one build
  // context, one image, one alias) is one case listing every deployable it affects.
  const groups = new Map<string, SnapshotConflict[]>();
  for (const c of input.conflicts ?? []) {
    const cause = `${c.rule}\u0000${c.shared ?? c.keys.join('\u0000')}`;
    groups.set(cause, [...(groups.get(cause) ?? []), c]);
  }
  for (const list of groups.values()) {
    const first = list[0]!;
    const ids = uniqueSorted(list.flatMap((c) => c.evidence_ids));
    const subjects = uniqueSorted(list.flatMap((c) => c.keys));
    const affected = first.shared ? subjects.filter((k) => k !== first.shared) : subjects;
    out.push({
      reason: 'ambiguous_identity',
      scope: 'entity',
      subject_key: (list.length > 1 ? first.shared : undefined) ?? first.keys[0] ?? 'unknown',
      field: null,
      detail:
        list.length === 1
          ? `${first.detail} (${uniqueSorted(cited(ids).map(where)).join(', ')})`
          : `${affected.length} deployables claim the identity of ${first.shared} (rule ${first.rule}): ${affected.join(', ')}. They were kept apart, and only one of them took it. One question for all of them: which deployable is ${first.shared}? (${uniqueSorted(cited(ids).map(where)).join(', ')})`,
      blocking: false,
      source_keys: paths(ids),
      evidence_ids: ids,
      alternatives:
        list.length === 1
          ? []
          : affected.map((key) => {
              const mine = uniqueSorted(
                list.filter((c) => c.keys.includes(key)).flatMap((c) => c.evidence_ids),
              );
              const ev = cited(mine);
              return {
                value: key,
                confidence: ev.length ? confidence(ev as unknown as StoredEvidence[], 0) : '0.05',
                evidence_ids: mine,
                sources: uniqueSorted(ev.map((e) => e.source_type)),
              };
            }),
      fingerprint: fingerprint(ids, list.length === 1 ? first.keys : [first.shared, subjects]),
    });
  }

  // A guessed primary deployment variant: which deployment the graph describes is a guess.
  for (const v of input.variants ?? []) {
    if (!v.guessed) continue;
    const ids = uniqueSorted(v.evidence_ids);
    out.push({
      reason: 'conflicting_evidence',
      scope: 'source',
      subject_key: `deployment:${v.family}/${v.primary}`,
      field: null,
      detail: v.detail,
      blocking: false,
      source_keys: [v.primary, ...v.others],
      evidence_ids: ids,
      alternatives: [v.primary, ...v.others].map((root, i) => ({
        value: root,
        confidence: i === 0 ? '0.50' : '0.25',
        evidence_ids: i === 0 ? ids : [],
        sources: ['cloud'],
      })),
      fingerprint: fingerprint(ids, [v.family, v.primary, ...v.others]),
    });
  }

  for (const c of input.undeclaredCalls ?? []) {
    const ids = uniqueSorted(c.evidence_ids);
    out.push({
      reason: 'conflicting_evidence',
      scope: 'relationship',
      subject_key: `calls:${c.source_key}->${c.target_key}`,
      field: null,
      detail: `Runtime evidence (${c.providers.join(', ')}) observed ${c.source_key} calling ${c.target_key} (last at ${c.last_observed_at}), but no code or configuration declares a relationship from ${c.source_key} to ${c.target_key}.`,
      blocking: false,
      source_keys: [...c.providers].sort(),
      evidence_ids: ids,
      alternatives: [],
      fingerprint: fingerprint(ids, ['runtime-call', c.source_key, c.target_key]),
    });
  }

  for (const type of [...input.missingSources].sort()) {
    out.push({
      reason: 'missing_source',
      scope: 'source',
      subject_key: `source:${type}`,
      field: null,
      detail: `The audit found no ${type} evidence, so the ${type} part of the architecture is unknown and source coverage is lowered.`,
      blocking: true,
      source_keys: [type],
      evidence_ids: [],
      alternatives: [],
      fingerprint: fingerprint([], type),
    });
  }
  return out;
}
