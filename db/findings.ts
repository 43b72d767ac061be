/**
 * What each audit observed of each finding (audit_findings, with the finding as that audit saw
 * it), the status each observation had when its audit completed, and the resolution of findings
 * an audit no longer observed: set-based statements, a bounded number per 1,000 findings.
 */
import type { Knex } from 'knex';
import { type FindingLocation, type FindingRow } from './controls';
import { insertJsonRows } from './json-rows';

/** A finding as one audit's controls stage produced it. */
export interface FindingObservation {
  finding_id: string;
  severity: string;
  title: string;
  detail: string;
  entity_key: string | null;
  evidence_ids: string[];
  locations: FindingLocation[];
}

/**
 * Records that an audit observed these findings, and what it observed of each (1,000 per
 * statement). A repeat changes nothing: the first record of an audit's observation stands.
 */
export async function linkAuditFindings(
  db: Knex,
  audit: { id: string; workspace_id: string },
  observations: readonly FindingObservation[],
): Promise<void> {
  await insertJsonRows(
    db,
    'audit_findings',
    observations.map((o) => ({ audit_id: audit.id, workspace_id: audit.workspace_id, ...o })),
    'ON CONFLICT (audit_id, finding_id) DO NOTHING',
  );
}

/**
 * Which status an audit's report shows for a finding it observed (SQL over `f`, the finding,
 * and `af`, the observation): what a person set follows the finding (set aside, reopened or
 * resolved by hand: a draft report changes with the triage); a resolution by another audit
 * does not (that audit looked at other code), and the observation keeps the status it had when
 * its audit completed.
 */
const REPORTED_STATUS = `CASE
  WHEN f.status = 'resolved' AND f.resolved_audit_id IS NOT NULL
       AND f.resolved_audit_id <> af.audit_id THEN coalesce(af.status, 'open')
  ELSE f.status END`;

/**
 * Records, as an audit completes, the status of each finding it observed (one statement): the
 * finding's, except that one resolved by another audit in the meantime was open as this audit
 * saw it.
 */
export async function settleObservations(db: Knex, auditId: string): Promise<void> {
  await db.raw(
    `UPDATE audit_findings af SET status = ${REPORTED_STATUS}
       FROM findings f
      WHERE af.audit_id = ? AND f.id = af.finding_id`,
    [auditId],
  );
}

/** The findings of an audit as that audit observed them (the report's rows). */
export async function findingsAsObserved(
  db: Knex,
  auditId: string,
): Promise<
  Array<
    Pick<FindingRow, 'id' | 'control_key' | 'fingerprint' | 'status' | 'evidence_ids'> &
      Pick<FindingRow, 'severity' | 'title' | 'detail' | 'entity_key' | 'locations'>
  >
> {
  // An observation recorded before its columns existed (none after the backfill) reads the
  // finding's own fields.
  const { rows } = await db.raw(
    `SELECT f.id, f.control_key, f.fingerprint,
            coalesce(af.severity, f.severity) AS severity,
            coalesce(af.title, f.title) AS title,
            coalesce(af.detail, f.detail) AS detail,
            CASE WHEN af.severity IS NULL THEN f.entity_key ELSE af.entity_key END AS entity_key,
            coalesce(af.evidence_ids, f.evidence_ids) AS evidence_ids,
            coalesce(af.locations, f.locations) AS locations,
            ${REPORTED_STATUS} AS status
       FROM audit_findings af JOIN findings f ON f.id = af.finding_id
      WHERE af.audit_id = ?
      ORDER BY f.fingerprint`,
    [auditId],
  );
  return rows;
}

/** A finding an audit resolved, for its audit event. */
export type ResolvedFinding = Pick<FindingRow, 'id' | 'control_key' | 'title' | 'fingerprint'>;

/**
 * Resolves the open findings of the scope that `audit` did not observe and that no newer audit
 * (by creation) saw last, in one statement: the rows are locked in fingerprint order (as
 * persistControls locks them: no deadlock between two audits of one repository) and checked
 * again once locked. Returns them in fingerprint order.
 */
export async function resolveUnobserved(
  db: Knex,
  audit: { id: string; workspace_id: string; created_at: Date },
  scopeKey: string,
): Promise<ResolvedFinding[]> {
  const { rows } = await db.raw(
    `WITH stale AS (
       SELECT f.id FROM findings f
        WHERE f.workspace_id = :workspace AND f.scope_key = :scope AND f.status = 'open'
          AND (SELECT seen.created_at FROM audits seen WHERE seen.id = f.last_seen_audit_id)
              <= :createdAt
          AND NOT EXISTS (SELECT 1 FROM audit_findings af
                           WHERE af.audit_id = :audit AND af.finding_id = f.id)
        ORDER BY f.fingerprint
        FOR UPDATE OF f)
     UPDATE findings f SET status = 'resolved', resolved_audit_id = :audit,
            resolved_at = now(), updated_at = now()
       FROM stale WHERE f.id = stale.id
     RETURNING f.id, f.control_key, f.title, f.fingerprint`,
    {
      workspace: audit.workspace_id,
      scope: scopeKey,
      createdAt: audit.created_at,
      audit: audit.id,
    },
  );
  return (rows as ResolvedFinding[]).sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : 1));
}
