/**
 * Audits: start (a durable AuditWorkflow per audit), read, follow (logs, agent timeline, cost),
 * cancel and retry. The API writes the audit row, commits, then starts the workflow; it never
 * runs analysis itself.
 */
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Knex } from 'knex';
import { admissionOn } from '../../platform/config';
import { runsOfAudit } from '../../db/agents';
import {
  auditLogs,
  auditsQuery,
  createAuditRecord,
  appendLog,
  failQueuedAudit,
  stagesOf,
  type AuditRow,
  type NewAudit,
} from '../../db/audits';
import { findAuditProfile, type AuditProfileRow } from '../../db/profiles';
import { findRepository } from '../../db/repositories';
import { findUpload } from '../../db/uploads';
import { addUsd } from '../../domain/audits/pricing';
import { WORKFLOW_TYPES } from '../../domain/contract/workflows';
import { refNameProblem } from '../../domain/repositories/git-ref';
import { auditStartOptions } from '../../domain/workflow-starts';
import type { AuditWorkflow } from '../../workflows/audits';
import { problems, type FieldError } from '../errors';
import { requestAuditCancel } from './cancel';
import { profileSnapshot, profileVersionMismatch } from '../profiles/operations';
import {
  auditTokenId,
  defineOperation,
  type Principal,
  ok,
  started,
  operationGroup,
  route,
} from '../registry/operation';
import { AcceptedResponse, WorkspaceParams } from '../schema-kit';
import type { AppServices } from '../services';
import { commitThenStart, iso, recordPrincipalWrite } from '../shared';
import { presentAudit, presentRun } from './present';
import {
  AgentTimelineResponse,
  AuditCostResponse,
  AuditCreate,
  AuditListQuery,
  AuditLogQuery,
  AuditLogResponse,
  AuditPage,
  AuditParams,
  AuditResponse,
  type AuditCreate as AuditCreateBody,
} from './schemas';
import { listOperation } from '../registry/parts';
import { loadAudit } from '../registry/loads';

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

async function present(db: Knex, row: AuditRow) {
  return presentAudit(row, (await stagesOf(db, [row.id])).get(row.id) ?? []);
}

/**
 * Checks an AuditCreate beyond its schema: one source, references that exist here. With
 * `profile_id`, the profile's repository, branch_ref and source_scope are the defaults; the
 * request's own branch_ref / commit_sha / source_scope win over them.
 */
async function resolveCreate(
  db: Knex,
  workspaceId: string,
  body: AuditCreateBody,
): Promise<
  Omit<NewAudit, 'workspace_id' | 'created_by' | 'origin' | 'origin_ref' | 'trigger_reason'>
> {
  const errors: FieldError[] = [];
  let profile: AuditProfileRow | undefined;
  if (body.profile_id) {
    profile = await findAuditProfile(db, workspaceId, body.profile_id);
    if (!profile) {
      errors.push({
        in: 'body',
        path: '/profile_id',
        message: 'no such audit profile in this workspace',
      });
    } else if (body.repository_id && body.repository_id !== profile.repository_id) {
      errors.push({
        in: 'body',
        path: '/repository_id',
        message: "is not the repository of profile_id (leave it out to use the profile's)",
      });
    }
    if (body.upload_id)
      errors.push({
        in: 'body',
        path: '/profile_id',
        message: 'applies to repository audits only',
      });
  }
  const repositoryId = body.repository_id ?? profile?.repository_id ?? null;
  const hasRepo = !!repositoryId;
  const hasUpload = !!body.upload_id;
  // Both: an upload audit whose findings belong to that repository (issue 26).
  if (!hasRepo && !hasUpload && !(body.profile_id && !profile)) {
    const message = 'either repository_id or upload_id is required';
    errors.push(
      { in: 'body', path: '/repository_id', message },
      { in: 'body', path: '/upload_id', message },
    );
  }
  if (hasUpload && body.branch_ref)
    errors.push({ in: 'body', path: '/branch_ref', message: 'applies to repository audits only' });
  if (hasUpload && body.commit_sha)
    errors.push({ in: 'body', path: '/commit_sha', message: 'applies to repository audits only' });
  if (body.profile_version != null && !body.profile_id) {
    errors.push({ in: 'body', path: '/profile_version', message: 'needs profile_id' });
  }
  const refProblem = body.branch_ref ? refNameProblem(body.branch_ref) : null;
  if (refProblem) errors.push({ in: 'body', path: '/branch_ref', message: refProblem });
  if (errors.length === 0 && hasRepo && !(await findRepository(db, workspaceId, repositoryId!))) {
    errors.push({
      in: 'body',
      path: body.repository_id ? '/repository_id' : '/profile_id',
      message: body.repository_id
        ? 'no such repository in this workspace'
        : 'the repository of this audit profile was deleted',
    });
  }
  if (errors.length === 0 && hasUpload) {
    const upload = await findUpload(db, workspaceId, body.upload_id!);
    if (!upload)
      errors.push({ in: 'body', path: '/upload_id', message: 'no such upload in this workspace' });
    else if (upload.status !== 'ready')
      errors.push({
        in: 'body',
        path: '/upload_id',
        message: 'the content of this upload has expired; upload the archive again',
      });
  }
  if (errors.length) throw problems.validationFailed(errors);
  if (profile && body.profile_version != null && body.profile_version !== profile.version)
    throw profileVersionMismatch(profile, body.profile_version);
  return {
    repository_id: repositoryId,
    upload_id: body.upload_id ?? null,
    audit_type: hasUpload ? 'upload' : 'repository',
    branch_ref: body.branch_ref ?? profile?.branch_ref ?? null,
    commit_sha: body.commit_sha ? body.commit_sha.toLowerCase() : null,
    deep_review: body.deep_review ?? false,
    source_scope: (body.source_scope ?? profile?.source_scope ?? {}) as Record<string, unknown>,
    profile_snapshot: profile ? profileSnapshot(profile) : null,
  };
}

/** Starts the AuditWorkflow of a committed, queued audit row (once: a second start is refused). */
export async function startAuditWorkflow(services: AppServices, row: AuditRow): Promise<void> {
  const { config } = services;
  const client = await services.temporal.client();
  await client.workflow.start<typeof AuditWorkflow>(WORKFLOW_TYPES.audit, {
    ...auditStartOptions({
      auditId: row.id,
      workflowId: row.workflow_id!,
      workspaceId: row.workspace_id,
      repositoryId: row.repository_id,
      heartbeatTimeoutSeconds: config.agentHeartbeatTimeoutSeconds,
      maxAttempts: config.agentMaxAttempts,
      admission: admissionOn(config),
    }),
    taskQueue: config.taskQueue,
    // An audit id runs once: a second start (a retried request) is refused, not repeated.
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
}

/**
 * Inserts the audit (with its write records), commits, then starts its workflow. When the start
 * fails, an audit whose id an Idempotency-Key reserved (`keyed`) stays queued, bound to the key:
 * the client's retry with the key starts this same audit (the recovery sweep does, after
 * AUDIT_START_GRACE_SECONDS, if no retry comes); an audit without a key ends failed.
 */
export async function startAudit(
  services: AppServices,
  principal: Principal,
  requestId: string,
  id: string,
  input: Omit<NewAudit, 'workspace_id' | 'created_by'>,
  keyed = false,
): Promise<AuditRow> {
  const { db } = services;
  return commitThenStart(services.log, 'audit', {
    commit: () =>
      db.transaction((trx) =>
        createAuditRecord(
          trx,
          { ...input, workspace_id: principal.workspaceId, created_by: principal.memberId },
          {
            actorId: principal.memberId,
            actorLogin: principal.memberLogin,
            tokenId: auditTokenId(principal),
            requestId,
          },
          id,
        ),
      ),
    needsStart: (row) => row.status === 'queued',
    start: (row) => startAuditWorkflow(services, row),
    ifStartFails: (row, cause) =>
      keyed
        ? appendLog(db, row.id, {
            level: 'warning',
            source: 'stage',
            message: `the audit workflow could not be started yet: ${cause}`,
            details: {
              waiting_for: 'a retry with the same Idempotency-Key, or the recovery sweep',
            },
          })
        : failQueuedAudit(db, row.id, cause),
    unavailable: keyed
      ? 'The audit was recorded but its workflow could not be started yet; it stays queued. Retry with the same Idempotency-Key to start this audit (no second audit is made).'
      : 'The audit was recorded but its workflow could not be started; it is marked failed.',
  });
}

const AUDITS = operationGroup('Audits');

export const createAudit = defineOperation({
  operationId: 'createAudit',
  ...route.post('/v1/workspaces/{workspace_id}/audits'),
  summary: 'Start an audit',
  description:
    'Audits a repository (its default branch, `branch_ref`, or an exact `commit_sha`) or an uploaded archive (`upload_id`). An upload audit may also name `repository_id`, the workspace repository the uploaded folder belongs to: its findings are findings of that repository (one finding per fingerprint, with the control exceptions of the repository), but the folder is not known to be the whole repository at any commit, so it resolves none of the findings of the repository, verifies no remediation, and its architecture snapshot stays its own (not the latest architecture of the repository, no gate baseline, no change set). Without repository_id the findings of an upload audit are its own (`source: upload`). The audit runs durably in the `AuditWorkflow` with workflow id `audit-<id>`; follow it with getAudit, getAuditLogs and getAuditAgentTimeline. An unknown branch or commit fails the audit with error_code `branch_not_found` / `commit_not_found`. With `profile_id` the audit runs on the repository of the profile with its branch_ref and source_scope and keeps the profile as it was in `profile_snapshot`; repository_id may be left out (if given it must be the profile repository), and a branch_ref, commit_sha or source_scope given in the request overrides the profile value. `profile_version`, when given, must be the current version of the profile, else 409 version_mismatch.',
  ...AUDITS.scope('audits:write'),
  params: WorkspaceParams,
  body: AuditCreate,
  idempotent: true,
  errors: [503],
  success: started('The queued audit.', AuditResponse),
  handler: async ({ services, db, params, body, principal, requestId, koa, newId, keyed }) => {
    const input = await resolveCreate(db, params.workspace_id, body);
    const row = await startAudit(
      services,
      principal,
      requestId,
      newId(),
      { ...input, origin: 'manual', origin_ref: null, trigger_reason: null },
      keyed,
    );
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/audits/${row.id}`);
    return present(db, row);
  },
});

export const listAudits = listOperation({
  operationId: 'listAudits',
  ...route.get('/v1/workspaces/{workspace_id}/audits'),
  summary: 'List audits',
  ...AUDITS.scope('audits:read'),
  params: WorkspaceParams,
  query: AuditListQuery,
  success: ok('A page of audits, newest first.', AuditPage),
  rows: ({ db, params, query }) =>
    auditsQuery(db, params.workspace_id, {
      repositoryId: query.repository_id,
      status: query.status,
      report: query.report_status,
    }),
  presentAll: async (rows, { db }) => {
    const stages = await stagesOf(
      db,
      rows.map((a) => a.id),
    );
    return rows.map((a) => presentAudit(a, stages.get(a.id) ?? []));
  },
});

export const getAudit = defineOperation({
  operationId: 'getAudit',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}'),
  summary: 'Get an audit with its stages, source and coverage gaps',
  ...AUDITS.scope('audits:read'),
  params: AuditParams,
  success: ok('The audit.', AuditResponse),
  handler: async ({ db, params }) =>
    present(db, await loadAudit(db, params.workspace_id, params.audit_id)),
});

export const cancelAudit = defineOperation({
  operationId: 'cancelAudit',
  ...route.post('/v1/workspaces/{workspace_id}/audits/{audit_id}/cancel'),
  summary: 'Cancel a running audit',
  description:
    'The running stage ends `cancelled`, later stages `skipped`, the audit `cancelled`. A finished audit answers 409 audit_finished.',
  ...AUDITS.scope('audits:write'),
  params: AuditParams,
  errors: [409, 503],
  success: { status: 202, description: 'Cancellation requested.', schema: AcceptedResponse },
  handler: async ({ services, db, params, principal, requestId }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    if (FINISHED.has(audit.status)) {
      throw problems.conflict(
        'audit_finished',
        `Audit ${audit.id} is already ${audit.status}.`,
        'Only queued or running audits can be cancelled.',
        { current_status: audit.status },
      );
    }
    await requestAuditCancel(services, db, audit);
    await recordPrincipalWrite(db, principal, requestId, {
      action: 'audit.cancel_requested',
      resourceType: 'audit',
      resourceId: audit.id,
    });
    return { status: 'accepted' };
  },
});

export const retryAudit = defineOperation({
  operationId: 'retryAudit',
  ...route.post('/v1/workspaces/{workspace_id}/audits/{audit_id}/retry'),
  summary: 'Run a finished audit again as a new audit with the same inputs',
  ...AUDITS.scope('audits:write'),
  params: AuditParams,
  idempotent: true,
  errors: [409, 503],
  success: started('The new, queued audit (origin `retry`, origin_ref the old id).', AuditResponse),
  handler: async ({ services, db, params, principal, requestId, koa, newId }) => {
    const old = await loadAudit(db, params.workspace_id, params.audit_id);
    if (!FINISHED.has(old.status)) {
      throw problems.conflict(
        'audit_running',
        `Audit ${old.id} is still ${old.status}.`,
        'Wait for it to finish or cancel it first.',
        { current_status: old.status },
      );
    }
    if (old.repository_id && !(await findRepository(db, old.workspace_id, old.repository_id))) {
      throw problems.conflict(
        'repository_deleted',
        `The repository of audit ${old.id} was deleted.`,
        'Register the repository again and start a new audit.',
      );
    }
    const row = await startAudit(services, principal, requestId, newId(), {
      repository_id: old.repository_id,
      upload_id: old.upload_id,
      audit_type: old.audit_type,
      // Same inputs as requested: a branch is fetched afresh, a requested commit exactly again.
      branch_ref: old.requested_branch_ref,
      commit_sha: old.requested_commit_sha,
      deep_review: old.deep_review,
      source_scope: old.source_scope,
      profile_snapshot: old.profile_snapshot,
      origin: 'retry',
      origin_ref: old.id,
      trigger_reason: `retry of ${old.id}`,
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/audits/${row.id}`);
    return present(db, row);
  },
});

const LEVELS = { info: 0, warning: 1, error: 2 } as const;

export const getAuditLogs = defineOperation({
  operationId: 'getAuditLogs',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/logs'),
  summary: 'The audit log, oldest first',
  ...AUDITS.scope('audits:read'),
  params: AuditParams,
  query: AuditLogQuery,
  success: ok('Log lines.', AuditLogResponse),
  handler: async ({ db, params, query }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    const min = query.level ? LEVELS[query.level] : null;
    const rows = await auditLogs(db, audit.id, {
      limit: query.limit ?? 1000,
      levels:
        min === null
          ? undefined
          : Object.entries(LEVELS)
              .filter(([, n]) => n >= min)
              .map(([k]) => k),
      since: query.since,
    });
    return {
      audit_id: audit.id,
      items: rows.map((r) => ({
        occurred_at: iso(r.occurred_at),
        level: r.level,
        source: r.source,
        message: r.message,
        ...(r.details ? { details: r.details } : {}),
      })),
    };
  },
});

export const getAuditAgentTimeline = defineOperation({
  operationId: 'getAuditAgentTimeline',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/agent-runs'),
  summary: 'Every agent attempt of an audit, in order',
  ...AUDITS.scope('audits:read'),
  params: AuditParams,
  success: ok('The agent timeline.', AgentTimelineResponse),
  handler: async ({ db, params }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    const runs = await runsOfAudit(db, audit.id);
    return { audit_id: audit.id, context_hash: audit.context_hash, runs: runs.map(presentRun) };
  },
});

export const getAuditCost = defineOperation({
  operationId: 'getAuditCost',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/cost'),
  summary: 'What an audit cost: the sum over its agent runs',
  ...AUDITS.scope('audits:read'),
  params: AuditParams,
  success: ok('Cost and token figures.', AuditCostResponse),
  handler: async ({ db, params }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    const runs = await runsOfAudit(db, audit.id);
    let cost = '0.000000';
    let analysis = '0.000000';
    let remediation = '0.000000';
    const models = new Set<string>();
    let calls = 0;
    const tokens = { input: 0, cached: 0, output: 0 };
    for (const run of runs) {
      // A model call happened when a model-backed attempt ran (not served from the cache).
      if (
        run.model_backed &&
        !run.cache_hit &&
        (run.input_tokens > 0 || run.output_tokens > 0 || run.error_code?.startsWith('model_'))
      ) {
        calls += 1;
        models.add(run.model_id);
      }
      tokens.input += run.input_tokens;
      tokens.cached += run.cached_input_tokens;
      tokens.output += run.output_tokens;
      const runCost = Number(run.cost_usd) === 0 ? '0.000000' : run.cost_usd;
      cost = addUsd(cost, runCost);
      if (run.cost_kind === 'remediation') remediation = addUsd(remediation, runCost);
      else analysis = addUsd(analysis, runCost);
    }
    return {
      audit_id: audit.id,
      cost_usd: cost,
      model_calls: calls,
      input_tokens: tokens.input,
      cached_input_tokens: tokens.cached,
      output_tokens: tokens.output,
      models: [...models].sort(),
      analysis_cost_usd: analysis,
      remediation_cost_usd: remediation,
    };
  },
});
