/**
 * The audit recovery sweep's activity: which queued audits have waited past the grace period,
 * with what their AuditWorkflow's start needs.
 */
import type { Knex } from 'knex';
import { staleQueuedAudits } from '../../db/audits';
import type { AuditStart } from '../../domain/workflow-starts';
import { admissionOn, type Config } from '../../platform/config';

export function createRecoveryActivities(deps: { db: Knex; config: Config }) {
  return {
    async findUnstartedAudits(input: {
      graceSeconds: number;
      limit: number;
    }): Promise<AuditStart[]> {
      const rows = await staleQueuedAudits(deps.db, input.graceSeconds, input.limit);
      return rows.map((row) => ({
        auditId: row.id,
        workflowId: row.workflow_id!,
        workspaceId: row.workspace_id,
        repositoryId: row.repository_id,
        heartbeatTimeoutSeconds: deps.config.agentHeartbeatTimeoutSeconds,
        maxAttempts: deps.config.agentMaxAttempts,
        admission: admissionOn(deps.config),
      }));
    },
  };
}

export type RecoveryActivities = ReturnType<typeof createRecoveryActivities>;
