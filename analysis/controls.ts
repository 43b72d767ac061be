/**
 * The built-in control catalog and its assessment. Pure and deterministic: the same entities, relationships, evidence and file list always give the same
 * assessments, in the same order (by control key), whatever order the inputs arrive in.
 *
 * How a control is assessed. Each control turns the inputs into checks: one per subject it looks
 * at (a third-party action use, a container, a Dockerfile, a datastore...). A check is `pass`,
 * `fail` or `unknown` (the attribute it needs is absent or null) and belongs to one requirement.
 * - not_applicable: no checks at all (nothing the control looks at exists, e.g. no CI workflow).
 * - insufficient_evidence: every check is unknown.
 * - fail: any check on a non-advisory requirement fails.
 * - partial: no failure, but some checks are unknown (the verdict holds only for what was seen).
 * - pass: otherwise. Advisory requirements (e.g. "images pinned by digest") are reported on their
 *   own but never fail or downgrade the control.
 * Requirement status: not_applicable without checks, unmet if any check fails, unknown if any
 * is unknown, else met.
 *
 * Confidence (decimal, 2 places): not_applicable 0.80 (absence is only as good as the coverage);
 * insufficient_evidence 0.00; fail 0.95 (a failing observation is direct evidence); pass and
 * partial 0.50 + 0.45 x (known checks / all checks), so a full pass is 0.95.
 *
 * Finding fingerprint: sha256 (hex) of `control_key` and the stable subject, joined with NUL.
 * For evidence-based findings the subject is the evidence's path, evidence_kind, subject_key,
 * object_key and a per-control discriminator (container name, variable name, workflow job...);
 * for graph findings it is the entity key(s) (the shared datastore, the sorted members of a
 * cycle); for owners-declared it is the literal `CODEOWNERS`. Evidence ids, line numbers and
 * content hashes are left out on purpose, so a finding keeps its fingerprint across audits of
 * unchanged (or merely shifted) code. Findings with the same fingerprint are merged.
 *
 * input_hash: sha256 of the sorted lines `<evidence ids>\t<relevant facts as canonical JSON>`,
 * one line per check.
 */
import type {
  ASSESSMENT_STATUSES,
  CONTROL_DOMAINS,
  CONTROL_SEVERITIES,
  REQUIREMENT_STATUSES,
} from '../domain/contract/values';
import crypto from 'node:crypto';
import { keyKind, type EvidenceLocation } from './evidence';
import { isSha256Digest } from './shared/images';
import { CODEOWNERS_PATHS } from './shared/paths';
import { compareStrings, uniqueSorted } from './shared/text';
import type { Entity, Relationship, StoredEvidence } from './reconcile';
import { isRecord } from './shared/values';
import {
  bool,
  compareLocation,
  containers,
  ofKind,
  onEvidence,
  type Check,
  type Context,
  type Verdict,
} from './controls/check';
import { containersNonRoot } from './controls/effective';
import { scopeNote } from './controls/notes';
import { imagesToJudge, isSecretPlaceholder } from './controls/placeholders';

export const CONTROL_CATALOG_VERSION = '2026.11.1';

export type ControlDomain = (typeof CONTROL_DOMAINS)[number];
export type Severity = (typeof CONTROL_SEVERITIES)[number];
export type AssessmentStatus = (typeof ASSESSMENT_STATUSES)[number];
export type RequirementStatus = (typeof REQUIREMENT_STATUSES)[number];

export interface ControlRequirement {
  key: string;
  description: string;
  /** Advisory requirements are reported but never fail the control. */
  advisory?: boolean;
}

export interface Control {
  key: string;
  title: string;
  description: string;
  domain: ControlDomain;
  severity: Severity;
  requirements: ControlRequirement[];
}

export interface AssessedRequirement {
  key: string;
  description: string;
  status: RequirementStatus;
  evidence_ids: string[];
  rationale: string;
}

export interface Finding {
  fingerprint: string;
  title: string;
  severity: Severity;
  entity_key: string | null;
  evidence_ids: string[];
  location: EvidenceLocation | null;
}

export interface Assessment {
  control_key: string;
  title: string;
  description: string;
  domain: ControlDomain;
  severity: Severity;
  status: AssessmentStatus;
  confidence: string;
  rationale: string;
  applicability: 'applicable' | 'not_applicable';
  applicability_rationale: string;
  evidence_ids: string[];
  failing_evidence_ids: string[];
  requirements: AssessedRequirement[];
  input_hash: string;
  findings: Finding[];
}

export interface ControlInput {
  entities: Entity[];
  relationships: Relationship[];
  evidence: StoredEvidence[];
  /** Paths of the files in the audited source (for file-presence controls such as CODEOWNERS). */
  files: string[];
}

export const CONTROLS: Control[] = [
  {
    key: 'ci-actions-pinned',
    title: 'CI actions pinned to a commit SHA',
    description:
      'Third-party GitHub Actions (and docker:// actions) are referenced by a full commit SHA (or image digest), so a moved tag cannot change what runs.',
    domain: 'cicd',
    severity: 'high',
    requirements: [
      {
        key: 'third-party-actions-sha-pinned',
        description: 'Every third-party action use is pinned to a full commit SHA or digest.',
      },
      {
        key: 'first-party-actions-not-branch',
        description:
          'First-party actions (actions/*, github/*) reference a tag or SHA, not a branch.',
      },
    ],
  },
  {
    key: 'ci-permissions-declared',
    title: 'CI workflow permissions declared',
    description:
      'Each GitHub Actions job runs with permissions declared at workflow or job level, not the repository default, and never write-all.',
    domain: 'cicd',
    severity: 'medium',
    requirements: [
      {
        key: 'permissions-declared',
        description: 'Workflow-level or job-level permissions are declared for every job.',
      },
      { key: 'no-write-all', description: 'No workflow or job is granted write-all.' },
    ],
  },
  {
    key: 'ci-no-risky-triggers',
    title: 'No unguarded privileged CI triggers',
    description:
      'Workflows triggered by pull_request_target or workflow_run (which run with secrets on untrusted input) guard every job with an `if:` condition.',
    domain: 'cicd',
    severity: 'high',
    requirements: [
      {
        key: 'risky-triggers-guarded',
        description: 'Every job of a pull_request_target/workflow_run workflow has an if: guard.',
      },
    ],
  },
  {
    key: 'containers-not-privileged',
    title: 'Containers not privileged',
    description: 'No compose service or Kubernetes container runs privileged.',
    domain: 'cloud',
    severity: 'high',
    requirements: [
      { key: 'no-privileged-containers', description: 'privileged is not set on any container.' },
    ],
  },
  {
    key: 'containers-resource-limits',
    title: 'Container resource limits set',
    description: 'Every compose service and Kubernetes container declares resource limits.',
    domain: 'cloud',
    severity: 'medium',
    requirements: [
      { key: 'resource-limits-set', description: 'Each container declares CPU/memory limits.' },
    ],
  },
  {
    key: 'containers-non-root',
    title: 'Containers run as non-root',
    description:
      'Dockerfiles set a non-root USER; Kubernetes containers set runAsNonRoot (or a non-zero runAsUser); compose services do not set user root.',
    domain: 'cloud',
    severity: 'high',
    requirements: [
      {
        key: 'dockerfile-non-root-user',
        description: 'The final Dockerfile stage sets a non-root USER.',
      },
      {
        key: 'runtime-non-root',
        description:
          'Runtime configuration (Kubernetes securityContext, compose user) is non-root.',
      },
    ],
  },
  {
    key: 'datastores-not-public',
    title: 'Datastores not publicly exposed',
    description:
      'No datastore, queue or bucket is publicly accessible (Terraform settings) or published on a public port (compose, Kubernetes NodePort/LoadBalancer).',
    domain: 'cloud',
    severity: 'high',
    requirements: [
      { key: 'not-publicly-accessible', description: 'No datastore is publicly reachable.' },
    ],
  },
  {
    key: 'storage-encrypted-at-rest',
    title: 'Storage encrypted at rest',
    description: 'Datastores, queues and buckets declared in Terraform are encrypted at rest.',
    domain: 'cloud',
    severity: 'medium',
    requirements: [
      {
        key: 'encryption-at-rest',
        description: 'Each storage resource enables encryption at rest.',
      },
    ],
  },
  {
    key: 'no-committed-secrets',
    title: 'No committed secrets',
    description: 'No secret-looking setting has a literal value committed to the repository.',
    domain: 'code',
    severity: 'high',
    requirements: [
      { key: 'no-literal-secrets', description: 'No literal-secret evidence was found.' },
    ],
  },
  {
    key: 'lockfile-present',
    title: 'Dependency lockfile present',
    description: 'Every code unit with a package manifest commits a lockfile.',
    domain: 'code',
    severity: 'medium',
    requirements: [
      { key: 'lockfile-committed', description: 'Each unit with a manifest has a lockfile.' },
    ],
  },
  {
    key: 'images-pinned',
    title: 'Container images pinned',
    description:
      'Image references carry an explicit tag other than latest; pinning by digest is best.',
    domain: 'cloud',
    severity: 'medium',
    requirements: [
      { key: 'no-latest-tag', description: 'No image is referenced without a tag or as latest.' },
      {
        key: 'digest-pinned',
        description: 'Images are pinned by sha256 digest (advisory).',
        advisory: true,
      },
    ],
  },
  {
    key: 'no-shared-database',
    title: 'No database shared between services',
    description: 'Each datastore is reached by at most one service.',
    domain: 'architecture',
    severity: 'medium',
    requirements: [
      {
        key: 'single-owner-datastore',
        description: 'No datastore has two or more client services.',
      },
    ],
  },
  {
    key: 'no-service-dependency-cycle',
    title: 'No service dependency cycle',
    description: 'Service-to-service relationships form no cycle.',
    domain: 'architecture',
    severity: 'medium',
    requirements: [
      { key: 'acyclic-service-graph', description: 'The service dependency graph is acyclic.' },
    ],
  },
  {
    key: 'owners-declared',
    title: 'Code owners declared',
    description: 'A CODEOWNERS file exists (repository root, .github/ or docs/).',
    domain: 'architecture',
    severity: 'low',
    requirements: [{ key: 'codeowners-file', description: 'A CODEOWNERS file is committed.' }],
  },
];

const sha256 = (s: string): string => crypto.createHash('sha256').update(s).digest('hex');

/** JSON with object keys sorted, so equal facts always hash the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return v === undefined ? 'null' : JSON.stringify(v);
}

const GITHUB = 'github-actions';

function ciActionsPinned(ctx: Context): Check[] {
  return ofKind(ctx, 'action-use')
    .filter((e) => e.attributes.pin !== 'local')
    .map((e) => {
      const a = e.attributes;
      const uses = String(a.uses ?? e.object_key ?? '');
      if (a.first_party === true) {
        const pin = typeof a.pin === 'string' ? a.pin : null;
        return onEvidence(ctx, e, {
          requirement: 'first-party-actions-not-branch',
          verdict: pin === null ? 'unknown' : pin === 'branch' ? 'fail' : 'pass',
          title: `first-party action ${uses} is referenced by ${pin ?? 'an unknown ref'}`,
          facts: { pin, first_party: true },
          discriminator: uses,
        });
      }
      const pinned = bool(a.pinned);
      return onEvidence(ctx, e, {
        requirement: 'third-party-actions-sha-pinned',
        verdict: pinned === null ? 'unknown' : pinned ? 'pass' : 'fail',
        title: pinned
          ? `third-party action ${uses} is pinned`
          : `third-party action ${uses} is not pinned to a commit SHA`,
        facts: { pinned, pin: a.pin ?? null, first_party: a.first_party ?? null },
        discriminator: uses,
      });
    });
}

function ciPermissionsDeclared(ctx: Context): Check[] {
  const out: Check[] = [];
  const jobs = ofKind(ctx, 'job-declared').filter((e) => e.provider === GITHUB);
  const pipelinesWithJobs = new Set(jobs.map((j) => j.object_key));
  for (const e of jobs) {
    const source = e.attributes.permissions_source;
    out.push(
      onEvidence(ctx, e, {
        requirement: 'permissions-declared',
        verdict: typeof source !== 'string' ? 'unknown' : source === 'default' ? 'fail' : 'pass',
        title:
          source === 'default'
            ? `${e.subject_key} runs with the repository default permissions`
            : `${e.subject_key} permissions come from ${String(source ?? 'an unknown source')}`,
        facts: { permissions_source: source ?? null },
      }),
      noWriteAll(ctx, e),
    );
  }
  // Workflows without jobs in the evidence are judged on their own declaration.
  for (const e of ofKind(ctx, 'pipeline-declared')) {
    if (e.provider !== GITHUB || pipelinesWithJobs.has(e.subject_key)) continue;
    const declared = bool(e.attributes.permissions_declared);
    out.push(
      onEvidence(ctx, e, {
        requirement: 'permissions-declared',
        verdict: declared === null ? 'unknown' : declared ? 'pass' : 'fail',
        title: `${e.subject_key} ${declared ? 'declares' : 'does not declare'} permissions`,
        facts: { permissions_declared: declared },
      }),
      noWriteAll(ctx, e),
    );
  }
  return out;
}

/** A job or workflow granted `write-all` fails; any narrower grant passes. */
function noWriteAll(ctx: Context, e: StoredEvidence): Check {
  const perms = e.attributes.permissions;
  return onEvidence(ctx, e, {
    requirement: 'no-write-all',
    verdict: perms === undefined ? 'unknown' : perms === 'write-all' ? 'fail' : 'pass',
    title: `${e.subject_key} is granted ${perms === 'write-all' ? 'write-all' : 'scoped permissions'}`,
    facts: { permissions: perms ?? null },
    discriminator: 'write-all',
  });
}

function ciNoRiskyTriggers(ctx: Context): Check[] {
  const jobs = ofKind(ctx, 'job-declared').filter((e) => e.provider === GITHUB);
  return ofKind(ctx, 'pipeline-declared')
    .filter((e) => e.provider === GITHUB)
    .map((e) => {
      const risky = e.attributes.risky_triggers;
      if (!Array.isArray(risky))
        return onEvidence(ctx, e, {
          requirement: 'risky-triggers-guarded',
          verdict: 'unknown',
          title: `${e.subject_key} triggers are unknown`,
          facts: { risky_triggers: null },
        });
      const mine = jobs.filter((j) => j.object_key === e.subject_key);
      const unguarded = mine.filter((j) => typeof j.attributes.if !== 'string' || !j.attributes.if);
      const fail = risky.length > 0 && (mine.length === 0 || unguarded.length > 0);
      return onEvidence(ctx, e, {
        requirement: 'risky-triggers-guarded',
        verdict: fail ? 'fail' : 'pass',
        title:
          risky.length === 0
            ? `${e.subject_key} has no pull_request_target/workflow_run trigger`
            : fail
              ? `${e.subject_key} runs on ${risky.map(String).join(', ')} without an if: guard on ${unguarded.length ? unguardedNames(unguarded) : 'its jobs'}`
              : `${e.subject_key} runs on ${risky.map(String).join(', ')} with every job guarded`,
        facts: {
          risky_triggers: risky,
          unguarded: uniqueSorted(unguarded.map((j) => j.subject_key)),
        },
        extra: risky.length > 0 ? mine.map((j) => j.id) : [],
      });
    });
}

function unguardedNames(jobs: StoredEvidence[]): string {
  return uniqueSorted(jobs.map((j) => j.subject_key)).join(', ');
}

function containersNotPrivileged(ctx: Context): Check[] {
  return containers(ctx).map(({ e, c, name, label }) => {
    const p = bool(c.privileged);
    return onEvidence(ctx, e, {
      requirement: 'no-privileged-containers',
      verdict: p === null ? 'unknown' : p ? 'fail' : 'pass',
      title: `${label} ${p ? 'runs privileged' : 'is not privileged'}`,
      facts: { privileged: p },
      discriminator: name,
    });
  });
}

function containersResourceLimits(ctx: Context): Check[] {
  return containers(ctx).map(({ e, c, name, label }) => {
    const set = bool(c.resource_limits_set);
    return onEvidence(ctx, e, {
      requirement: 'resource-limits-set',
      verdict: set === null ? 'unknown' : set ? 'pass' : 'fail',
      title: `${label} ${set ? 'declares' : 'does not declare'} resource limits`,
      facts: { resource_limits_set: set },
      discriminator: name,
    });
  });
}

const STORAGE_KINDS = new Set(['datastore', 'queue', 'bucket']);

function security(e: StoredEvidence): Record<string, unknown> | null {
  return isRecord(e.attributes.security) ? e.attributes.security : null;
}

function datastoresNotPublic(ctx: Context): Check[] {
  const out: Check[] = [];
  const declared = ctx.evidence.filter(
    (e) =>
      e.evidence_kind === `${keyKind(e.subject_key)}-declared` &&
      STORAGE_KINDS.has(keyKind(e.subject_key)),
  );
  // Exposures by subject: one pass, not one scan of all evidence per datastore.
  const exposuresOf = new Map<string, StoredEvidence[]>();
  for (const x of ctx.evidence) {
    if (x.evidence_kind !== 'port-exposed' && x.evidence_kind !== 'service-exposed') continue;
    const list = exposuresOf.get(x.subject_key);
    if (list) list.push(x);
    else exposuresOf.set(x.subject_key, [x]);
  }
  for (const e of declared) {
    if (e.provider === 'terraform') {
      const p = bool(security(e)?.publicly_accessible);
      out.push(
        onEvidence(ctx, e, {
          requirement: 'not-publicly-accessible',
          verdict: p === null ? 'unknown' : p ? 'fail' : 'pass',
          title: `${e.subject_key} is ${p ? 'publicly accessible' : p === false ? 'not publicly accessible' : 'of unknown exposure'}`,
          facts: { publicly_accessible: p },
        }),
      );
      continue;
    }
    // compose / Kubernetes: the datastore's service publishes a public port?
    const svc = typeof e.attributes.service_key === 'string' ? e.attributes.service_key : null;
    const exposures = [
      ...new Set([
        ...(svc === null ? [] : (exposuresOf.get(svc) ?? [])),
        ...(exposuresOf.get(e.subject_key) ?? []),
      ]),
    ].filter((x) => x.provider === e.provider);
    const pub = exposures.filter((x) => x.attributes.public === true);
    out.push(
      onEvidence(ctx, e, {
        requirement: 'not-publicly-accessible',
        verdict: pub.length > 0 ? 'fail' : 'pass',
        title:
          pub.length > 0
            ? `${e.subject_key} is published on a public port`
            : `${e.subject_key} is not published publicly`,
        facts: { public_exposures: pub.length },
        extra: exposures.map((x) => x.id),
      }),
    );
  }
  return out;
}

function storageEncrypted(ctx: Context): Check[] {
  const bySubject = new Map<string, StoredEvidence[]>();
  for (const e of ctx.evidence) {
    if (e.provider !== 'terraform' || !STORAGE_KINDS.has(keyKind(e.subject_key))) continue;
    if (
      e.evidence_kind !== `${keyKind(e.subject_key)}-declared` &&
      e.evidence_kind !== 'security-configured'
    )
      continue;
    const list = bySubject.get(e.subject_key) ?? [];
    list.push(e);
    bySubject.set(e.subject_key, list);
  }
  const out: Check[] = [];
  for (const [key, list] of [...bySubject].sort((a, b) => compareStrings(a[0], b[0]))) {
    const decl = list.find((e) => e.evidence_kind !== 'security-configured');
    if (!decl) continue;
    const values = list
      .map((e) => bool(security(e)?.encryption_at_rest))
      .filter((v): v is boolean => v !== null);
    // A companion resource (e.g. a server-side encryption configuration) can enable it.
    const enc = values.includes(true) ? true : values.includes(false) ? false : null;
    out.push(
      onEvidence(ctx, decl, {
        requirement: 'encryption-at-rest',
        verdict: enc === null ? 'unknown' : enc ? 'pass' : 'fail',
        title: `${key} is ${enc ? 'encrypted at rest' : enc === false ? 'not encrypted at rest' : 'of unknown encryption'}`,
        facts: { encryption_at_rest: enc },
        extra: list.map((e) => e.id),
      }),
    );
  }
  return out;
}

function noCommittedSecrets(ctx: Context): Check[] {
  const secrets = ofKind(ctx, 'literal-secret').filter((e) => !isSecretPlaceholder(e));
  if (secrets.length === 0) {
    if (ctx.evidence.length === 0 && ctx.files.length === 0) return [];
    return [
      {
        requirement: 'no-literal-secrets',
        verdict: 'pass',
        evidence_ids: [],
        facts: { literal_secrets: 0 },
        title: 'no literal secret found',
        subject: 'none',
        entity_key: null,
        location: null,
      },
    ];
  }
  return secrets.map((e) => {
    const variable = String(e.attributes.variable ?? e.attributes.name ?? '');
    return onEvidence(ctx, e, {
      requirement: 'no-literal-secrets',
      verdict: 'fail',
      title: `${e.location.path} commits a literal secret${variable ? ` in ${variable}` : ''}`,
      facts: { variable },
      discriminator: variable,
    });
  });
}

function lockfilePresent(ctx: Context): Check[] {
  return ofKind(ctx, 'unit-declared')
    .filter((e) => e.attributes.lockfile_present !== null) // null: no manifest, nothing to lock
    .map((e) => {
      const present = bool(e.attributes.lockfile_present);
      return onEvidence(ctx, e, {
        requirement: 'lockfile-committed',
        verdict: present === null ? 'unknown' : present ? 'pass' : 'fail',
        title: `${e.subject_key} ${present ? 'has' : present === false ? 'has no' : 'has an unknown'} lockfile`,
        facts: { lockfile_present: present },
      });
    });
}

function imagesPinned(ctx: Context): Check[] {
  const out: Check[] = [];
  for (const e of imagesToJudge(ctx).judged) {
    const a = e.attributes;
    const image = String(a.image ?? e.object_key ?? '');
    const digest = typeof a.digest === 'string' ? a.digest : null;
    const tag = typeof a.tag === 'string' ? a.tag : null;
    const unresolved = a.unresolved === true || (a.tag === undefined && a.digest === undefined);
    const latest = !unresolved && digest === null && (tag === null || tag === 'latest');
    const pinned = a.pinned === true || isSha256Digest(digest);
    out.push(
      onEvidence(ctx, e, {
        requirement: 'no-latest-tag',
        verdict: unresolved ? 'unknown' : latest ? 'fail' : 'pass',
        title: latest
          ? `${image} is referenced ${tag ? 'as latest' : 'without a tag'}`
          : `${image} carries an explicit tag or digest`,
        facts: { tag, digest, unresolved },
        discriminator: image,
      }),
      onEvidence(ctx, e, {
        requirement: 'digest-pinned',
        verdict: unresolved ? 'unknown' : pinned ? 'pass' : 'fail',
        title: `${image} is ${pinned ? '' : 'not '}pinned by digest`,
        facts: { pinned },
        discriminator: `${image}\u0000digest`,
      }),
    );
  }
  return out;
}

function relLocation(ctx: Context, ids: string[]): EvidenceLocation | null {
  const locs = ids
    .map((id) => ctx.byId.get(id)?.location)
    .filter((l): l is EvidenceLocation => !!l)
    .sort(compareLocation);
  return locs[0] ? { ...locs[0] } : null;
}

function entityKind(ctx: Context): Map<string, string> {
  return new Map(ctx.entities.map((e) => [e.canonical_key, e.kind]));
}

function graphCheck(
  ctx: Context,
  requirement: string,
  verdict: Verdict,
  subjectKeys: string[],
  evidence_ids: string[],
  title: string,
  facts: unknown,
): Check {
  const ids = uniqueSorted(evidence_ids);
  return {
    requirement,
    verdict,
    evidence_ids: ids,
    facts,
    title,
    subject: subjectKeys.join('\u0000'),
    entity_key: subjectKeys[0] ?? null,
    location: relLocation(ctx, ids),
  };
}

function noSharedDatabase(ctx: Context): Check[] {
  const kinds = entityKind(ctx);
  const kind = (k: string) => kinds.get(k) ?? keyKind(k);
  const stores = uniqueSorted([
    ...ctx.entities.filter((e) => e.kind === 'datastore').map((e) => e.canonical_key),
    ...ctx.relationships.map((r) => r.target_key).filter((k) => kind(k) === 'datastore'),
  ]);
  const relsTo = new Map<string, Relationship[]>();
  for (const r of ctx.relationships) {
    if (kind(r.source_key) !== 'service') continue;
    const list = relsTo.get(r.target_key);
    if (list) list.push(r);
    else relsTo.set(r.target_key, [r]);
  }
  return stores.map((store) => {
    const rels = relsTo.get(store) ?? [];
    const clients = uniqueSorted(rels.map((r) => r.source_key));
    const shared = clients.length >= 2;
    return graphCheck(
      ctx,
      'single-owner-datastore',
      shared ? 'fail' : 'pass',
      [store],
      rels.flatMap((r) => r.evidence_ids),
      shared
        ? `${store} is shared by ${clients.join(', ')}`
        : `${store} has ${clients.length} client service(s)`,
      { store, clients },
    );
  });
}

/**
 * Strongly connected components (Tarjan), deterministic over sorted nodes and edges. Iterative,
 * with an explicit stack of (node, next edge) frames: a dependency chain as long as the system
 * (10,000 services) must not overflow the call stack (issue 24).
 */
function cycles(nodes: string[], edges: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const enter = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    on.add(v);
  };
  for (const root of nodes) {
    if (idx.has(root)) continue;
    enter(root);
    const frames: Array<{ v: string; next: number }> = [{ v: root, next: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const v = frame.v;
      const succ = edges.get(v) ?? [];
      if (frame.next < succ.length) {
        const w = succ[frame.next]!;
        frame.next += 1;
        if (!idx.has(w)) {
          enter(w);
          frames.push({ v: w, next: 0 });
        } else if (on.has(w)) low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0));
        continue;
      }
      // All of v's edges done: close v, then report its low link to its caller.
      frames.pop();
      if (low.get(v) === idx.get(v)) {
        const comp: string[] = [];
        let w: string | undefined;
        do {
          w = stack.pop();
          if (w === undefined) break;
          on.delete(w);
          comp.push(w);
        } while (w !== v);
        const selfLoop = succ.includes(v);
        if (comp.length > 1 || selfLoop) out.push(comp.sort(compareStrings));
      }
      const caller = frames[frames.length - 1];
      if (caller) low.set(caller.v, Math.min(low.get(caller.v) ?? 0, low.get(v) ?? 0));
    }
  }
  return out.sort((a, b) => compareStrings(a.join(','), b.join(',')));
}

function noServiceCycle(ctx: Context): Check[] {
  const kinds = entityKind(ctx);
  const kind = (k: string) => kinds.get(k) ?? keyKind(k);
  const services = uniqueSorted([
    ...ctx.entities.filter((e) => e.kind === 'service').map((e) => e.canonical_key),
  ]);
  if (services.length === 0) return [];
  const rels = ctx.relationships.filter(
    (r) => kind(r.source_key) === 'service' && kind(r.target_key) === 'service',
  );
  // Targets gathered, then sorted once per node (re-sorting a copy per edge is quadratic).
  const edges = new Map<string, string[]>();
  for (const r of rels) {
    const list = edges.get(r.source_key);
    if (list) list.push(r.target_key);
    else edges.set(r.source_key, [r.target_key]);
  }
  for (const [k, list] of edges) edges.set(k, uniqueSorted(list));
  const nodes = uniqueSorted([...services, ...rels.flatMap((r) => [r.source_key, r.target_key])]);
  const found = cycles(nodes, edges);
  if (found.length === 0)
    return [
      graphCheck(
        ctx,
        'acyclic-service-graph',
        'pass',
        ['acyclic'],
        rels.flatMap((r) => r.evidence_ids),
        `${services.length} service(s), ${rels.length} service relationship(s), no cycle`,
        { services: nodes, edges: rels.map((r) => r.canonical_key).sort(compareStrings) },
      ),
    ];
  // Each relationship inside a cycle, by cycle: one pass, not one scan of rels per cycle.
  const cycleOf = new Map<string, number>();
  found.forEach((members, i) => members.forEach((m) => cycleOf.set(m, i)));
  const relsOf = found.map((): typeof rels => []);
  for (const r of rels) {
    const i = cycleOf.get(r.source_key);
    if (i !== undefined && cycleOf.get(r.target_key) === i) relsOf[i]!.push(r);
  }
  return found.map((members, i) => {
    const inCycle = relsOf[i]!;
    return graphCheck(
      ctx,
      'acyclic-service-graph',
      'fail',
      members,
      inCycle.flatMap((r) => r.evidence_ids),
      `dependency cycle among ${members.join(', ')}`,
      { cycle: members, edges: inCycle.map((r) => r.canonical_key).sort(compareStrings) },
    );
  });
}

function ownersDeclared(ctx: Context): Check[] {
  if (ctx.files.length === 0) return [];
  const found = ctx.files
    .filter((f) => CODEOWNERS_PATHS.includes(f.replace(/^\.\//, '')))
    .sort(compareStrings);
  return [
    {
      requirement: 'codeowners-file',
      verdict: found.length > 0 ? 'pass' : 'fail',
      evidence_ids: [],
      facts: { codeowners: found },
      title: found.length > 0 ? `owners declared in ${found.join(', ')}` : 'no CODEOWNERS file',
      subject: 'CODEOWNERS',
      entity_key: null,
      location: found[0] ? { path: found[0], start_line: 1, end_line: 1 } : null,
    },
  ];
}

const EVALUATORS: Record<string, (ctx: Context) => Check[]> = {
  'ci-actions-pinned': ciActionsPinned,
  'ci-permissions-declared': ciPermissionsDeclared,
  'ci-no-risky-triggers': ciNoRiskyTriggers,
  'containers-not-privileged': containersNotPrivileged,
  'containers-resource-limits': containersResourceLimits,
  'containers-non-root': containersNonRoot,
  'datastores-not-public': datastoresNotPublic,
  'storage-encrypted-at-rest': storageEncrypted,
  'no-committed-secrets': noCommittedSecrets,
  'lockfile-present': lockfilePresent,
  'images-pinned': imagesPinned,
  'no-shared-database': noSharedDatabase,
  'no-service-dependency-cycle': noServiceCycle,
  'owners-declared': ownersDeclared,
};

const NOT_APPLICABLE_WHY: Record<string, string> = {
  'ci-actions-pinned': 'no GitHub Actions action use found',
  'ci-permissions-declared': 'no GitHub Actions workflow found',
  'ci-no-risky-triggers': 'no GitHub Actions workflow found',
  'containers-not-privileged': 'no compose service or Kubernetes container found',
  'containers-resource-limits': 'no compose service or Kubernetes container found',
  'containers-non-root': 'no Dockerfile, Kubernetes container or compose user found',
  'datastores-not-public': 'no datastore, queue or bucket found',
  'storage-encrypted-at-rest': 'no Terraform datastore, queue or bucket found',
  'no-committed-secrets': 'no files or evidence to scan',
  'lockfile-present': 'no code unit with a package manifest found',
  'images-pinned': 'no image reference found',
  'no-shared-database': 'no datastore found',
  'no-service-dependency-cycle': 'no service found',
  'owners-declared': 'no file list available',
};

const fixed2 = (n: number): string => (Math.round(n * 100) / 100).toFixed(2);

function requirementOf(req: ControlRequirement, checks: Check[]): AssessedRequirement {
  const mine = checks.filter((c) => c.requirement === req.key);
  const fails = mine.filter((c) => c.verdict === 'fail');
  const unknown = mine.filter((c) => c.verdict === 'unknown');
  const status: RequirementStatus =
    mine.length === 0
      ? 'not_applicable'
      : fails.length > 0
        ? 'unmet'
        : unknown.length > 0
          ? 'unknown'
          : 'met';
  const advisory = req.advisory ? ' (advisory: does not affect the control status)' : '';
  const rationale =
    status === 'not_applicable'
      ? 'nothing to check'
      : status === 'unmet'
        ? `${fails.length} of ${mine.length} failing: ${uniqueSorted(fails.map((c) => c.title)).join('; ')}${advisory}`
        : status === 'unknown'
          ? `${unknown.length} of ${mine.length} without the needed facts${advisory}`
          : `all ${mine.length} checked subject(s) comply`;
  return {
    key: req.key,
    description: req.description,
    status,
    evidence_ids: uniqueSorted(mine.flatMap((c) => c.evidence_ids)),
    rationale,
  };
}

function assessOne(control: Control, ctx: Context): Assessment {
  const evaluate = EVALUATORS[control.key];
  const checks = (evaluate ? evaluate(ctx) : []).sort(
    (a, b) => compareStrings(a.requirement, b.requirement) || compareStrings(a.subject, b.subject),
  );
  const advisory = new Set(control.requirements.filter((r) => r.advisory).map((r) => r.key));
  const binding = checks.filter((c) => !advisory.has(c.requirement));
  const fails = binding.filter((c) => c.verdict === 'fail');
  const unknown = binding.filter((c) => c.verdict === 'unknown');
  const status: AssessmentStatus =
    binding.length === 0
      ? 'not_applicable'
      : unknown.length === binding.length
        ? 'insufficient_evidence'
        : fails.length > 0
          ? 'fail'
          : unknown.length > 0
            ? 'partial'
            : 'pass';
  const known = binding.length - unknown.length;
  const confidence =
    status === 'not_applicable'
      ? 0.8
      : status === 'insufficient_evidence'
        ? 0
        : status === 'fail'
          ? 0.95
          : 0.5 + (0.45 * known) / binding.length;
  const rationale =
    status === 'not_applicable'
      ? `Not applicable: ${NOT_APPLICABLE_WHY[control.key] ?? 'nothing to check'}.`
      : status === 'insufficient_evidence'
        ? `All ${binding.length} subject(s) lack the facts this control needs.`
        : status === 'fail'
          ? `${fails.length} of ${binding.length} check(s) fail: ${uniqueSorted(fails.map((c) => c.title)).join('; ')}.`
          : status === 'partial'
            ? `No failure among ${known} checked subject(s); ${unknown.length} could not be checked.`
            : `All ${binding.length} check(s) pass.`;

  const findings = new Map<string, Finding>();
  for (const c of fails) {
    const fingerprint = sha256(`${control.key}\u0000${c.subject}`);
    const prev = findings.get(fingerprint);
    if (prev) {
      prev.evidence_ids = uniqueSorted([...prev.evidence_ids, ...c.evidence_ids]);
      if (c.location && (!prev.location || compareLocation(c.location, prev.location) < 0))
        prev.location = c.location;
      continue;
    }
    findings.set(fingerprint, {
      fingerprint,
      title: `${control.title}: ${c.title}`,
      severity: control.severity,
      entity_key: c.entity_key,
      evidence_ids: [...c.evidence_ids],
      location: c.location,
    });
  }

  const inputLines = checks
    .map((c) => `${c.requirement}\t${c.evidence_ids.join(',')}\t${canonical(c.facts)}`)
    .sort(compareStrings);
  return {
    control_key: control.key,
    title: control.title,
    description: control.description,
    domain: control.domain,
    severity: control.severity,
    status,
    confidence: fixed2(confidence),
    rationale,
    applicability: status === 'not_applicable' ? 'not_applicable' : 'applicable',
    applicability_rationale:
      (status === 'not_applicable'
        ? (NOT_APPLICABLE_WHY[control.key] ?? 'nothing to check')
        : `${checks.length} check(s) on subjects this control covers`) +
      scopeNote(control.key, ctx),
    evidence_ids: uniqueSorted(checks.flatMap((c) => c.evidence_ids)),
    failing_evidence_ids: uniqueSorted(fails.flatMap((c) => c.evidence_ids)),
    requirements: control.requirements.map((r) => requirementOf(r, checks)),
    input_hash: sha256(`${CONTROL_CATALOG_VERSION}\n${control.key}\n${inputLines.join('\n')}`),
    findings: [...findings.values()].sort((a, b) => compareStrings(a.fingerprint, b.fingerprint)),
  };
}

/** Assesses every catalog control; output ordered by control key. */
export function assessControls(input: ControlInput): Assessment[] {
  const evidence = [...input.evidence].sort(
    (a, b) => compareLocation(a.location, b.location) || compareStrings(a.id, b.id),
  );
  const entities = [...input.entities].sort((a, b) =>
    compareStrings(a.canonical_key, b.canonical_key),
  );
  const relationships = [...input.relationships]
    .sort((a, b) => compareStrings(a.canonical_key, b.canonical_key))
    .map((r) => ({ ...r, evidence_ids: [...r.evidence_ids].sort(compareStrings) }));
  const entityOf = new Map<string, string>();
  for (const e of entities)
    for (const id of e.evidence_ids) if (!entityOf.has(id)) entityOf.set(id, e.canonical_key);
  const ctx: Context = {
    evidence,
    byId: new Map(evidence.map((e) => [e.id, e])),
    entityOf,
    entities,
    relationships,
    files: [...input.files].sort(compareStrings),
  };
  return [...CONTROLS].sort((a, b) => compareStrings(a.key, b.key)).map((c) => assessOne(c, ctx));
}
