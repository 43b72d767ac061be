/** The control catalog rows, assessments per audit, and findings per repository. */
import { coversWholeRepository } from '../domain/audits/source-scope';
import { SOURCE_TYPES } from '../domain/contract/values';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { keyset, type Keyset } from './paginate';
import { insertJsonRows } from './json-rows';
import { storableJsonText } from '../domain/text';
import { CONTROL_CATALOG_VERSION, CONTROLS, type Control } from '../analysis/controls';

export interface ControlRow {
  id: string;
  mapping_version_id: string;
  catalog_version: string;
  key: string;
  title: string;
  description: string;
  domain: string;
  severity: string;
  requirements: Control['requirements'];
  created_at: Date;
}

export interface AssessmentRow {
  id: string;
  audit_id: string;
  workspace_id: string;
  control_id: string;
  mapping_version_id: string;
  control_key: string;
  title: string;
  description: string;
  domain: string;
  severity: string;
  status: string;
  calculation_version: string;
  input_hash: string;
  rationale: string;
  applicability: string;
  applicability_rationale: string | null;
  confidence: string;
  evidence_ids: string[];
  finding_ids: string[];
  architecture_relationship_ids: string[];
  stale_evidence_ids: string[];
  conflicting_evidence_ids: string[];
  missing_requirement_keys: string[];
  exception_id: string | null;
  requirements: Array<Record<string, unknown>>;
  overlay_version: number;
  calculated_at: Date;
  created_at: Date;
}

export interface FindingLocation {
  path: string;
  start_line: number;
  end_line: number;
}

export interface FindingRow {
  id: string;
  workspace_id: string;
  repository_id: string | null;
  scope_key: string;
  control_id: string;
  control_key: string;
  severity: string;
  title: string;
  detail: string;
  fingerprint: string;
  status: 'open' | 'accepted_risk' | 'false_positive' | 'resolved';
  note: string | null;
  entity_key: string | null;
  evidence_ids: string[];
  locations: FindingLocation[];
  first_seen_audit_id: string;
  last_seen_audit_id: string;
  first_seen_at: Date;
  last_seen_at: Date;
  occurrences: number;
  resolved_audit_id: string | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A uuid derived from a name (sha256, version nibble 5): the same name always gives the same id. */
export function nameUuid(name: string): string {
  const h = crypto.createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const mappingVersionId = (version: string) => nameUuid(`control-catalog:${version}`);
export const controlId = (version: string, key: string) => nameUuid(`control:${version}:${key}`);

/** Writes the built-in catalog's rows for its version (idempotent); returns them by key. */
export async function ensureCatalog(db: Knex): Promise<Map<string, ControlRow>> {
  const version = CONTROL_CATALOG_VERSION;
  const now = Date.now();
  // One millisecond apart, earliest last: newest-first keyset pages list the catalog by key.
  const sorted = [...CONTROLS].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  await db('controls')
    .insert(
      sorted.map((c, i) => ({
        id: controlId(version, c.key),
        mapping_version_id: mappingVersionId(version),
        catalog_version: version,
        key: c.key,
        title: c.title,
        description: c.description,
        domain: c.domain,
        severity: c.severity,
        requirements: JSON.stringify(c.requirements),
        created_at: new Date(now - i),
      })),
    )
    .onConflict(['catalog_version', 'key'])
    .ignore();
  const rows = await db<ControlRow>('controls').where({ catalog_version: version });
  return new Map(rows.map((r) => [r.key, r]));
}

export function controlsQuery(db: Knex, version: string): Keyset<ControlRow> {
  return keyset(
    db('controls').select('controls.*').where('controls.catalog_version', version),
    'controls',
  );
}

export function assessmentsQuery(db: Knex, auditId: string): Keyset<AssessmentRow> {
  return keyset(
    db('control_assessments')
      .select('control_assessments.*')
      .where('control_assessments.audit_id', auditId),
    'control_assessments',
  );
}

export async function assessmentCount(db: Knex, auditId: string): Promise<number> {
  const [row] = await db('control_assessments')
    .where({ audit_id: auditId })
    .count<{ n: string }[]>('* as n');
  return Number(row?.n ?? 0);
}

export interface FindingFilter {
  status?: string;
  severity?: string;
  repository_id?: string;
  control_key?: string;
  /** `upload`: findings of upload audits that named no repository; `repository`: the others. */
  source?: 'repository' | 'upload';
}

/** A finding with what says where it comes from: its repository's name, or its upload's. */
export type SourcedFindingRow = FindingRow & {
  repository_name: string | null;
  upload_id: string | null;
  upload_filename: string | null;
};

/** Selects a finding's columns and its source's names (repository, or the upload of its audit). */
function withSource(db: Knex): Knex.QueryBuilder {
  return db('findings')
    .leftJoin('repositories as source_repository', 'source_repository.id', 'findings.repository_id')
    .leftJoin('audits as source_audit', 'source_audit.id', 'findings.first_seen_audit_id')
    .leftJoin('uploads as source_upload', 'source_upload.id', 'source_audit.upload_id')
    .select(
      'findings.*',
      'source_repository.name as repository_name',
      'source_audit.upload_id as upload_id',
      'source_upload.filename as upload_filename',
    );
}

export function findingsQuery(
  db: Knex,
  workspaceId: string,
  filter: FindingFilter = {},
): Keyset<SourcedFindingRow> {
  const q = withSource(db).where('findings.workspace_id', workspaceId);
  if (filter.status) q.andWhere('findings.status', filter.status);
  if (filter.severity) q.andWhere('findings.severity', filter.severity);
  if (filter.repository_id) q.andWhere('findings.repository_id', filter.repository_id);
  if (filter.control_key) q.andWhere('findings.control_key', filter.control_key);
  if (filter.source === 'upload') q.whereNull('findings.repository_id');
  if (filter.source === 'repository') q.whereNotNull('findings.repository_id');
  return keyset(q, 'findings');
}

/** The findings an audit observed. */
export function auditFindingsQuery(db: Knex, auditId: string): Keyset<SourcedFindingRow> {
  return keyset(
    withSource(db)
      .join('audit_findings', 'audit_findings.finding_id', 'findings.id')
      .where('audit_findings.audit_id', auditId),
    'findings',
  );
}

export async function findFinding(
  db: Knex,
  workspaceId: string,
  id: string,
  forUpdate = false,
): Promise<FindingRow | undefined> {
  const q = db<FindingRow>('findings').where({ workspace_id: workspaceId, id }).first();
  if (forUpdate) q.forUpdate();
  return q as Promise<FindingRow | undefined>;
}

/** A finding with its source's names (for presenting it). */
export async function findSourcedFinding(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<SourcedFindingRow | undefined> {
  return withSource(db)
    .where({ 'findings.workspace_id': workspaceId, 'findings.id': id })
    .first() as Promise<SourcedFindingRow | undefined>;
}

/**
 * Whether an audit looked at its whole source: one narrowed by include/exclude, max_files or
 * fewer source types did not look everywhere a finding could be, so it never resolves findings.
 * The rule is domain/audits/source-scope.ts's (remediation verification applies it too). An
 * upload audit that names a repository looked at a folder, not known to be the whole of that
 * repository: it adds and reopens the repository's findings, never resolves them.
 */
export function coversWholeSource(audit: {
  source_scope: unknown;
  audit_type: string;
  repository_id: string | null;
}): boolean {
  if (audit.audit_type !== 'repository' && audit.repository_id) return false;
  return coversWholeRepository(
    (audit.source_scope ?? {}) as Parameters<typeof coversWholeRepository>[0],
    SOURCE_TYPES,
  );
}

/** Coverage gaps that say a file of the source was listed but not (fully) read. */
const UNREAD_GAPS = new Set(['truncated', 'large_files']);
/** Analyzer gaps that say a file could not be read at all (not what it says, but whether). */
const UNREAD_ANALYZER_REASONS = new Set([
  'file_too_large',
  'yaml_parse_error',
  'terraform_parse_error',
  'manifest_parse_error',
  'invalid_file',
  'invalid_input',
  'analyzer_error',
]);

/**
 * Whether an audit saw everything a finding could rest on: its whole source (coversWholeSource)
 * and every file of it read (none over the size limit, none an analyzer failed to read). A
 * partial read resolves no finding: what it did not see may still be there.
 */
export function readWholeSource(
  audit: Parameters<typeof coversWholeSource>[0] & { coverage_gaps: unknown },
): boolean {
  if (!coversWholeSource(audit)) return false;
  const gaps = (Array.isArray(audit.coverage_gaps) ? audit.coverage_gaps : []) as Array<{
    kind?: string;
    reason?: string;
  }>;
  return !gaps.some(
    (g) =>
      UNREAD_GAPS.has(g.kind ?? '') ||
      (g.kind === 'analyzer' && UNREAD_ANALYZER_REASONS.has(g.reason ?? '')),
  );
}

/**
 * Whether the newest completed whole-source audit of the finding's repository (that ran the
 * controls stage) observed it; true when there is none yet (nothing says it is gone).
 */
export async function isObservedByLatestAudit(db: Knex, f: FindingRow): Promise<boolean> {
  const recent = (await db('audits as a')
    .select('a.id', 'a.source_scope', 'a.coverage_gaps', 'a.audit_type', 'a.repository_id')
    .where('a.workspace_id', f.workspace_id)
    .andWhere(
      f.repository_id ? { 'a.repository_id': f.repository_id } : { 'a.id': f.first_seen_audit_id },
    )
    .andWhere('a.status', 'completed')
    .whereExists(db('control_assessments as ca').whereRaw('ca.audit_id = a.id'))
    .orderBy([
      { column: 'a.created_at', order: 'desc' },
      { column: 'a.id', order: 'desc' },
    ])
    .limit(50)) as Array<
    { id: string; coverage_gaps: unknown } & Parameters<typeof coversWholeSource>[0]
  >;
  const latest = recent.find(readWholeSource);
  if (!latest) return true;
  const seen = await db('audit_findings').where({ audit_id: latest.id, finding_id: f.id }).first();
  return !!seen;
}

export type NewFinding = Omit<
  FindingRow,
  'note' | 'resolved_audit_id' | 'resolved_at' | 'created_at' | 'updated_at'
>;

/**
 * Inserts findings whose fingerprint the scope does not have yet; the others are left alone.
 * Returns the fingerprints inserted. A concurrent insert of the same fingerprint makes this wait
 * for it, then skip the row.
 */
export async function insertNewFindings(
  db: Knex,
  rows: readonly NewFinding[],
): Promise<Set<string>> {
  const inserted = await insertJsonRows<{ fingerprint: string }>(
    db,
    'findings',
    rows,
    'ON CONFLICT (workspace_id, scope_key, fingerprint) DO NOTHING RETURNING fingerprint',
  );
  return new Set(inserted.map((r) => r.fingerprint));
}

/**
 * Rows in batches of 1,000: one statement may bind at most 65,535 values, and a system of
 * 10,000 services has tens of thousands of findings (issue 24).
 */
export function batches<T>(rows: readonly T[], size = 1000): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** The scope's findings with these fingerprints, locked, in fingerprint order. */
export async function lockFindings(
  db: Knex,
  workspaceId: string,
  scopeKey: string,
  fingerprints: readonly string[],
): Promise<FindingRow[]> {
  const out: FindingRow[] = [];
  // Batches in fingerprint order, each locked in that order: the whole stays in one order.
  for (const batch of batches([...fingerprints].sort(), 10_000)) {
    const rows = await db<FindingRow>('findings')
      .where({ workspace_id: workspaceId, scope_key: scopeKey })
      .whereIn('fingerprint', batch)
      .orderBy('fingerprint')
      .forUpdate();
    for (const r of rows) out.push(r);
  }
  return out;
}

/** What a sighting of a known finding changes, besides counting it (recordSightings). */
export interface Sighting {
  id: string;
  /** The finding as this audit saw it, when no newer audit saw it last (else unchanged). */
  seen: Pick<
    FindingRow,
    'control_id' | 'severity' | 'title' | 'detail' | 'entity_key' | 'evidence_ids' | 'locations'
  > | null;
  /** A resolved finding seen again: open once more. */
  reopen: boolean;
}

/**
 * Counts one more sighting of each finding at `at` by `auditId` and applies what each sighting
 * changes: one UPDATE per 1,000 findings (a 10,000-service system has tens of thousands of
 * findings; one statement each held the rows' locks for minutes).
 */
export async function recordSightings(
  db: Knex,
  auditId: string,
  at: Date,
  sightings: readonly Sighting[],
): Promise<void> {
  /** A column takes the sighting's value where `flag` holds, else keeps its own. */
  const when = (flag: 'newer' | 'reopen', column: string, value: string) =>
    `${column} = CASE WHEN v.${flag} THEN ${value} ELSE f.${column} END`;
  const seen = [
    'control_id',
    'severity',
    'title',
    'detail',
    'entity_key',
    'evidence_ids',
    'locations',
  ];
  for (const batch of batches(sightings)) {
    const rows = batch.map((x) => ({
      id: x.id,
      newer: x.seen !== null,
      reopen: x.reopen,
      ...(x.seen ?? {}),
    }));
    await db.raw(
      `UPDATE findings AS f SET
         occurrences = f.occurrences + 1,
         updated_at = :at,
         ${seen.map((c) => when('newer', c, `v.${c}`)).join(',\n         ')},
         ${when('newer', 'last_seen_audit_id', 'CAST(:auditId AS uuid)')},
         ${when('newer', 'last_seen_at', ':at')},
         ${when('reopen', 'status', `'open'`)},
         ${when('reopen', 'resolved_audit_id', 'NULL')},
         ${when('reopen', 'resolved_at', 'NULL')}
       FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v(
         id uuid, newer boolean, reopen boolean, control_id uuid, severity text, title text,
         detail text, entity_key text, evidence_ids jsonb, locations jsonb)
       WHERE f.id = v.id`,
      { at, auditId, rows: storableJsonText(JSON.stringify(rows)) },
    );
  }
}

/** An assessment as written: its requirements as the assessment produced them. */
export type NewAssessment = Omit<AssessmentRow, 'requirements'> & {
  requirements: readonly object[];
};

export async function insertAssessments(db: Knex, rows: readonly NewAssessment[]): Promise<void> {
  await insertJsonRows(db, 'control_assessments', rows);
}

/**
 * A person's triage: sets status and note. Newly resolved: resolved now, by no audit; any other
 * status clears the resolution; resolved again keeps the first.
 */
export async function updateFindingStatus(
  db: Knex,
  before: Pick<FindingRow, 'id' | 'status'>,
  status: FindingRow['status'],
  note: string | null,
): Promise<FindingRow> {
  const [after] = await db<FindingRow>('findings')
    .where({ id: before.id })
    .update({
      status,
      note,
      updated_at: db.fn.now() as unknown as Date,
      ...(status === 'resolved' && before.status !== 'resolved'
        ? { resolved_at: db.fn.now() as unknown as Date, resolved_audit_id: null }
        : {}),
      ...(status !== 'resolved' ? { resolved_at: null, resolved_audit_id: null } : {}),
    })
    .returning('*');
  return after!;
}
