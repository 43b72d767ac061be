/**
 * Asking an audit's workflow to cancel (cancelAudit, and the webhooks withdrawing the audit of a
 * pull request head a newer push superseded or its closing ended): the running stage ends
 * `cancelled`, later stages `skipped`, the audit `cancelled`. A workflow Temporal no longer has
 * is marked cancelled directly.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { updateAudit } from '../../db/audits';
import type { AppServices } from '../services';

export async function requestAuditCancel(
  services: Pick<AppServices, 'temporal'>,
  db: Knex,
  audit: { id: string; workflow_id: string | null },
): Promise<void> {
  try {
    const client = await services.temporal.client();
    await client.workflow.getHandle(audit.workflow_id!).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    await updateAudit(db, audit.id, {
      status: 'cancelled',
      error_code: 'cancelled',
      completed_at: new Date(),
    });
  }
}
