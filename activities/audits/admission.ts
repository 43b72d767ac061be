/**
 * The admission activity of the audit workflow: asks for a running slot (db/admission.ts) and
 * says where the audit stands; the workflow waits on a durable timer between asks, so an audit
 * in line holds no activity slot of any worker.
 */
import type { Knex } from 'knex';
import { requestAdmission, type Admission } from '../../db/admission';
import { appendLog } from '../../db/audits';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { auditsWaiting } from '../../platform/metrics';

export function createAdmissionActivities(deps: { db: Knex; config: Config; log: Logger }) {
  return {
    /** One ask; `first`: the audit's first, which logs its place in line when it must wait. */
    async admitAudit(auditId: string, first: boolean): Promise<Admission> {
      const { config } = deps;
      const limits = {
        fleet: config.maxRunningAudits,
        workspace: config.maxRunningAuditsPerWorkspace,
      };
      if (limits.fleet === null && limits.workspace === null)
        return { admitted: true, position: null, waiting: 0 };
      const answer = await requestAdmission(deps.db, auditId, limits);
      auditsWaiting.set(answer.waiting);
      if (!answer.admitted && first) {
        deps.log.info(
          { audit_id: auditId, position: answer.position },
          'audit waits for admission',
        );
        await appendLog(deps.db, auditId, {
          level: 'info',
          source: 'stage',
          message: `waiting for a running slot: position ${answer.position} in line`,
          details: {
            position: answer.position,
            max_running_audits: limits.fleet,
            max_running_audits_per_workspace: limits.workspace,
          },
        });
      }
      return answer;
    },
  };
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
