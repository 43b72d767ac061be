/**
 * Load-or-404 of the resources many families' operations start from: the audit or the
 * repository a path (or a body) names, in the caller's workspace. Another workspace's is a 404.
 */
import type { Knex } from 'knex';
import { findAudit, type AuditRow } from '../../db/audits';
import { findRepository } from '../../db/repositories';
import { found } from './parts';

/** The audit `auditId` of the workspace, or 404 not_found ("Audit <id>"). */
export function loadAudit(db: Knex, workspaceId: string, auditId: string): Promise<AuditRow> {
  return found(findAudit(db, workspaceId, auditId), `Audit ${auditId}`);
}

/** The repository `repositoryId` of the workspace, or 404 not_found ("Repository <id>"). */
export function loadRepository(db: Knex, workspaceId: string, repositoryId: string) {
  return found(findRepository(db, workspaceId, repositoryId), `Repository ${repositoryId}`);
}
