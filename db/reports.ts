/**
 * What an audit's report is built from (snapshot, assessments, findings, uncertainty cases,
 * gate), and report approvals: one per audit, holding the approved content.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import {
  buildReport,
  reportContentSha256,
  type AuditReportContent,
  type ReportInput,
} from '../domain/reports/report';
import type { AuditRow } from './audits';
import { findingsAsObserved } from './findings';
import { memberLogins } from './workspaces';

export interface ReportApprovalRow {
  id: string;
  workspace_id: string;
  audit_id: string;
  report_version: string;
  content_sha256: string;
  content: AuditReportContent;
  actor_id: string;
  actor_role: string;
  authorization_scope: string;
  policy_version: number | null;
  rationale: string;
  created_at: Date;
}

/** The rows of a completed audit's report; undefined when the audit has no snapshot. */
export async function reportInputOf(db: Knex, audit: AuditRow): Promise<ReportInput | undefined> {
  const snapshot = await db('architecture_snapshots').where({ audit_id: audit.id }).first();
  if (!snapshot) return undefined;
  // One query after another: the caller may hold a transaction (one connection).
  const repository = audit.repository_id
    ? await db('repositories').where({ id: audit.repository_id }).first('id', 'name', 'url')
    : undefined;
  const upload = audit.upload_id
    ? await db('uploads').where({ id: audit.upload_id }).first('id', 'filename')
    : undefined;
  const assessments = await db('control_assessments')
    .where({ audit_id: audit.id })
    .select(
      'control_key',
      'title',
      'domain',
      'severity',
      'status',
      'confidence',
      'rationale',
      'finding_ids',
      'stale_evidence_ids',
    );
  // The findings as this audit observed them (a later audit moves a finding on, not this view).
  const findings = await findingsAsObserved(db, audit.id);
  // The cases as this snapshot observed them (a later audit moves a case row on, not this view).
  const uncertainty = await db('uncertainty_observations')
    .where({ snapshot_id: snapshot.id })
    .orderBy([{ column: 'subject_key' }, { column: 'case_id' }])
    .select('case_id as id', 'reason', 'subject_key', 'detail', 'blocking', 'state');
  const gate = await db('audit_gates').where({ audit_id: audit.id }).first('result');
  const stored = gate?.result as
    { response?: { outcome: string; reasons: Array<{ text: string }> } } | undefined;
  return {
    audit,
    repository: repository ?? null,
    upload: upload ?? null,
    snapshot,
    assessments,
    findings,
    uncertainty,
    gate: stored?.response ?? null,
  };
}

export async function approvalOfAudit(
  db: Knex,
  auditId: string,
): Promise<ReportApprovalRow | undefined> {
  return db<ReportApprovalRow>('report_approvals').where({ audit_id: auditId }).first();
}

/** Inserts the approval; undefined when the audit's report was approved already. */
export async function insertReportApproval(
  db: Knex,
  row: Omit<ReportApprovalRow, 'id' | 'created_at'>,
): Promise<ReportApprovalRow | undefined> {
  const [inserted] = await db('report_approvals')
    .insert({ id: crypto.randomUUID(), ...row, content: JSON.stringify(row.content) })
    .onConflict('audit_id')
    .ignore()
    .returning('*');
  return inserted as ReportApprovalRow | undefined;
}

/** A report as served: the approved content when there is one, else built from the rows. */
export interface CurrentReport {
  content: AuditReportContent;
  content_sha256: string;
  approval: ReportApprovalRow | null;
  /** The approver's login (for the renderings). */
  approverLogin: string | null;
}

export async function currentReport(db: Knex, audit: AuditRow): Promise<CurrentReport | undefined> {
  const approval = await approvalOfAudit(db, audit.id);
  if (approval) {
    const logins = await memberLogins(db, [approval.actor_id]);
    return {
      content: approval.content,
      content_sha256: approval.content_sha256,
      approval,
      approverLogin: logins.get(approval.actor_id) ?? approval.actor_id,
    };
  }
  const input = await reportInputOf(db, audit);
  if (!input) return undefined;
  const content = buildReport(input);
  return {
    content,
    content_sha256: reportContentSha256(content),
    approval: null,
    approverLogin: null,
  };
}
