/**
 * The create of a resource its workflow owns and no state of it can call "never started" (a
 * decision, a remediation, a workflow action), as one part: commit the row and its creation
 * record, then start its workflow; a start that fails discards the row (with a
 * `<resource>.discarded` record) and answers 503. The family says only what differs.
 */
import type { Knex } from 'knex';
import { commitThenStart, discardUnstarted, recordPrincipalWrite } from '../shared';
import type { OperationContext } from './operation';
import { startOwnedWorkflow } from './parts';

type OwnedRow = { id: string; workflow_id: string };

/**
 * Creates the resource (id from `ctx.newId()`, so a retry under the same Idempotency-Key finds
 * the row an earlier try committed) and starts its workflow; sets `Location` to
 * `/v1/workspaces/<workspace>/<collection>/<id>` and answers the row.
 */
export async function createWorkflowOwned<Row extends OwnedRow>(
  ctx: OperationContext<{ workspace_id: string }, unknown, unknown>,
  what: {
    resource: 'decision' | 'remediation' | 'workflow_action';
    collection: string;
    /** The row of this id, when an earlier try of the request committed it. */
    find: (trx: Knex, workspaceId: string, id: string) => Promise<Row | null | undefined>;
    insert: (trx: Knex, id: string) => Promise<Row>;
    /** The creation record's action and details. */
    recorded: (row: Row) => { action: string; details: Record<string, unknown> };
    /** False when the committed row needs no workflow (an earlier request's runs it). */
    needsStart?: (row: Row) => boolean;
    workflow: (row: Row) => { type: string; args: unknown[]; repositoryId?: string | null };
    /** Removes the row whose workflow could not start (false when it was not there). */
    discard: (trx: Knex, id: string) => Promise<boolean>;
    discardDetails: (row: Row) => Record<string, unknown>;
    /** The 503's detail. */
    unavailable: string;
  },
): Promise<Row> {
  const { services, db, params, principal, requestId, koa } = ctx;
  const id = ctx.newId();
  const row = await commitThenStart(services.log, what.resource, {
    commit: () =>
      db.transaction(async (trx) => {
        // A retry of a request that died after its commit finds the row it made.
        const earlier = await what.find(trx, params.workspace_id, id);
        if (earlier) return earlier;
        const created = await what.insert(trx, id);
        await recordPrincipalWrite(trx, principal, requestId, {
          ...what.recorded(created),
          resourceType: what.resource,
          resourceId: id,
        });
        return created;
      }),
    ...(what.needsStart ? { needsStart: what.needsStart } : {}),
    start: (created) => {
      const { type, ...start } = what.workflow(created);
      return startOwnedWorkflow(services, type, {
        workflowId: created.workflow_id,
        workspaceId: params.workspace_id,
        ...start,
      });
    },
    ifStartFails: (created) =>
      discardUnstarted(db, principal, requestId, {
        resourceType: what.resource,
        resourceId: created.id,
        discard: (trx) => what.discard(trx, created.id),
        details: what.discardDetails(created),
      }),
    unavailable: what.unavailable,
  });
  koa.set('Location', `/v1/workspaces/${params.workspace_id}/${what.collection}/${row.id}`);
  return row;
}
