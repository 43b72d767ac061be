/**
 * The baseline of a pull request's gate: the default branch audited at the merge-base. When no
 * completed snapshot of that commit exists, one audit of it is recorded (its id derived from the
 * repository and the commit, so every branch forked there, and every retry, finds the same one)
 * and the audit workflow runs it as a child before its `changes` stage.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { auditStatusById, createAuditRecord, findAudit, getAuditById } from '../../db/audits';
import { defaultBranchBaseline, snapshotPlaceOfAudit } from '../../db/changes';
import { memberById } from '../../db/workspaces';
import { findRepository } from '../../db/repositories';
import type { AuditStart } from '../../domain/workflow-starts';

/** Where an audit of another branch left the default branch (written by the source stage). */
export interface SourceBase {
  ref: string;
  merge_base_sha: string | null;
}

export function sourceBaseOf(source: unknown): SourceBase | null {
  return (source as { base?: SourceBase | null } | null)?.base ?? null;
}

/** A UUID (version 5 layout) from a name: the same baseline audit for the same commit. */
function uuidFrom(name: string): string {
  const h = crypto.createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/**
 * The baseline audit to run before the gate of `auditId`, or null: not another branch, no
 * merge-base, a snapshot of the merge-base already there, or its audit already finished.
 */
export async function ensureBaselineAudit(
  db: Knex,
  auditId: string,
  limits: { heartbeatTimeoutSeconds: number; maxAttempts: number },
): Promise<AuditStart | null> {
  const audit = await getAuditById(db, auditId);
  const base = sourceBaseOf(audit.source);
  if (!base?.merge_base_sha || !audit.repository_id) return null;
  const current = await snapshotPlaceOfAudit(db, auditId);
  if (!current) return null;
  const found = await defaultBranchBaseline(db, current, base.ref, base.merge_base_sha);
  if (found?.at_merge_base) return null;
  // The default branch's baseline keeps its first name; another target branch's is its own.
  const repo = await findRepository(db, audit.workspace_id, audit.repository_id);
  const onDefault = !repo || repo.default_branch === base.ref;
  const id = uuidFrom(
    `baseline:${audit.workspace_id}:${audit.repository_id}:${base.merge_base_sha}${onDefault ? '' : `:${base.ref}`}`,
  );
  const existing = await findAudit(db, audit.workspace_id, id);
  if (existing && FINISHED.has(existing.status)) return null;
  const row =
    existing ??
    (await db.transaction(async (trx) =>
      createAuditRecord(
        trx,
        {
          workspace_id: audit.workspace_id,
          repository_id: audit.repository_id,
          upload_id: null,
          created_by: audit.created_by,
          audit_type: 'repository',
          branch_ref: base.ref,
          commit_sha: base.merge_base_sha,
          deep_review: false,
          source_scope: {},
          origin: 'baseline',
          origin_ref: audit.id,
          trigger_reason: `${onDefault ? 'the default branch' : 'the target branch'} ${base.ref} at the merge-base of ${audit.branch_ref ?? 'the audited commit'}, for the change gate of audit ${audit.id}`,
          profile_snapshot: null,
        },
        {
          actorId: audit.created_by,
          actorLogin: audit.created_by
            ? ((await memberById(trx, audit.created_by))?.login ?? null)
            : null,
          tokenId: null,
          requestId: null,
        },
        id,
      ),
    ));
  return {
    auditId: row.id,
    workflowId: row.workflow_id!,
    workspaceId: row.workspace_id,
    repositoryId: row.repository_id,
    ...limits,
    // The audit waiting for it already holds a running slot: a baseline in line behind it for
    // one would never get one (MAX_RUNNING_AUDITS_PER_WORKSPACE=1), so it is not admitted again.
    admission: false,
  };
}

/** Whether an audit has ended (any final status, or no longer exists). */
export async function auditFinished(db: Knex, auditId: string): Promise<boolean> {
  const status = await auditStatusById(db, auditId);
  return status === undefined || FINISHED.has(status);
}
