/**
 * The assistant: conversations about a repository, questions (each a durable
 * AssistantRunWorkflow, admitted atomically against the workspace's limits), runs and their
 * cancellation. The API admits and starts; the worker routes, answers and records.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import {
  admitQuestion,
  conversationsQuery,
  endRun,
  findConversation,
  findRun,
  insertConversation,
  messagesQuery,
  type RunRow,
} from '../../db/assistant';
import { latestSnapshotId } from '../../db/architecture';
import { snapshotPlace } from '../../db/changes';
import { findRepository } from '../../db/repositories';
import { admission, reservationUsd } from '../../domain/assistant/limits';
import { assistantRunWorkflowId, WORKFLOW_TYPES } from '../../domain/contract/workflows';
import { WORKSPACE_ID } from '../../domain/workflow-starts';
import type { AssistantRunWorkflow } from '../../workflows/assistant';
import { ApiError, problems } from '../errors';
import {
  created,
  defineOperation,
  ok,
  operationGroup,
  route,
  started,
} from '../registry/operation';
import { AcceptedResponse, WorkspaceParams } from '../schema-kit';
import { commitThenStart, recordPrincipalWrite } from '../shared';
import { presentConversation, presentMessage, presentRun } from './present';
import {
  AssistantRunResponse,
  ConversationCreate,
  ConversationListQuery,
  ConversationPage,
  ConversationParams,
  ConversationResponse,
  MessagePage,
  QuestionCreate,
  RunParams,
} from './schemas';
import { PageQuery } from '../schema-kit';
import { found, listOperation, recordedWrite } from '../registry/parts';

const ACTIVE = new Set(['queued', 'running']);

const ASSISTANT = operationGroup('Assistant');

export const listAssistantConversations = listOperation({
  operationId: 'listAssistantConversations',
  ...route.get('/v1/workspaces/{workspace_id}/assistant/conversations'),
  summary: 'List assistant conversations',
  description: 'Newest first; `repository_id` keeps those about one repository.',
  ...ASSISTANT.scope('audits:read'),
  params: WorkspaceParams,
  query: ConversationListQuery,
  success: ok('A page of conversations.', ConversationPage),
  rows: ({ db, params, query }) => conversationsQuery(db, params.workspace_id, query.repository_id),
  present: presentConversation,
});

export const createAssistantConversation = defineOperation({
  operationId: 'createAssistantConversation',
  ...route.post('/v1/workspaces/{workspace_id}/assistant/conversations'),
  summary: 'Start an assistant conversation about a repository',
  description:
    "Questions of the conversation are answered from `snapshot_id` when given (a snapshot of that repository), else from the repository's latest architecture (its default branch's latest full audit: a completed audit of the default branch whose source scope narrows nothing; a feature-branch or scoped audit only while there is none) at the time of each question.",
  ...ASSISTANT.scope('audits:read'),
  params: WorkspaceParams,
  body: ConversationCreate,
  success: created('The conversation.', ConversationResponse),
  handler: async ({ db, params, body, principal, requestId, koa, newId }) => {
    const repo = await findRepository(db, params.workspace_id, body.repository_id);
    if (!repo)
      throw problems.validationFailed([
        { in: 'body', path: '/repository_id', message: 'no such repository in this workspace' },
      ]);
    if (body.snapshot_id) {
      const place = await snapshotPlace(db, params.workspace_id, body.snapshot_id);
      if (!place || place.repository_id !== repo.id)
        throw problems.validationFailed([
          { in: 'body', path: '/snapshot_id', message: 'is not a snapshot of repository_id' },
        ]);
    }
    const row = await db.transaction(async (trx) => {
      const created = await insertConversation(trx, {
        id: newId(),
        workspace_id: params.workspace_id,
        repository_id: repo.id,
        snapshot_id: body.snapshot_id ?? null,
        title: body.title,
        created_by: principal.memberId,
      });
      return recordedWrite(trx, principal, requestId, created, {
        action: 'assistant_conversation.created',
        details: { title: created.title, repository_id: repo.id },
      });
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/assistant/conversations/${row.id}`);
    return presentConversation(row);
  },
});

async function loadConversation(
  db: Parameters<typeof findConversation>[0],
  workspaceId: string,
  id: string,
) {
  return found(findConversation(db, workspaceId, id), `Conversation ${id}`);
}

export const listAssistantMessages = listOperation({
  operationId: 'listAssistantMessages',
  ...route.get('/v1/workspaces/{workspace_id}/assistant/conversations/{conversation_id}/messages'),
  summary: "A conversation's messages, newest first",
  ...ASSISTANT.scope('audits:read'),
  params: ConversationParams,
  query: PageQuery,
  success: ok('A page of messages.', MessagePage),
  rows: async ({ db, params }) => {
    const conversation = await loadConversation(db, params.workspace_id, params.conversation_id);
    return messagesQuery(db, conversation.id);
  },
  present: presentMessage,
});

export const askAssistant = defineOperation({
  operationId: 'askAssistant',
  ...route.post('/v1/workspaces/{workspace_id}/assistant/conversations/{conversation_id}/messages'),
  summary: 'Ask a question (starts a durable assistant run)',
  description:
    "Admits the question against the workspace's assistant limits (getAssistantLimits) in one step under a per-workspace lock, so concurrent questions never overshoot: per-member and per-workspace questions per day (in the limits' time zone), questions being answered at once per member and per workspace, and the monthly budget: with a model configured, a question sets aside the most it can cost (its input bound and max_output_tokens at the model's price) until it ends. A refusal is 429 with a stable code (assistant_user_daily_limit, assistant_workspace_daily_limit, assistant_user_active_runs, assistant_workspace_active_runs, assistant_monthly_budget_exhausted with `remaining_usd`) and Retry-After, and writes nothing. An admitted question is answered by the `AssistantRunWorkflow` (workflow id `assistant-run-<id>`): route, specialist, context from the snapshot (`context_snapshot_id`), answer, record. Follow it with getAssistantRun. 409 no_architecture_snapshot while the repository has no completed audit.",
  ...ASSISTANT.scope('audits:read'),
  params: ConversationParams,
  body: QuestionCreate,
  idempotent: true,
  errors: [409, 503],
  success: started('The queued run.', AssistantRunResponse),
  handler: async ({ services, db, params, body, principal, requestId, koa, newId }) => {
    const conversation = await loadConversation(db, params.workspace_id, params.conversation_id);
    const snapshotId =
      conversation.snapshot_id ??
      (await latestSnapshotId(db, params.workspace_id, conversation.repository_id));
    if (!snapshotId)
      throw problems.conflict(
        'no_architecture_snapshot',
        `Repository ${conversation.repository_id} has no completed audit to answer from.`,
        'Run an audit of the repository (createAudit) and ask again when it has completed.',
      );
    const { config } = services;
    const model = config.model;
    const price = model ? config.modelPrices[model.modelId] : undefined;
    const runId = newId();
    const run = await commitThenStart<RunRow>(services.log, 'assistant_run', {
      commit: () =>
        db.transaction(async (trx) => {
          const row = await admitQuestion(
            trx,
            {
              runId,
              workspaceId: params.workspace_id,
              conversation,
              memberId: principal.memberId,
              content: body.content,
              contextSnapshotId: snapshotId,
              modelId: model?.modelId ?? null,
              workflowId: assistantRunWorkflowId(runId),
            },
            (limits, counts) => {
              const reservedUsd = model ? reservationUsd(price, limits.max_output_tokens) : '0';
              const refusal = admission(limits, counts, reservedUsd);
              if (refusal)
                throw new ApiError({
                  status: 429,
                  code: refusal.code,
                  title: 'Assistant limit reached',
                  detail: refusal.detail,
                  hint: refusal.hint,
                  headers: refusal.retryAfter ? { 'Retry-After': String(refusal.retryAfter) } : {},
                  extensions: refusal.extensions,
                });
              return { reservedUsd };
            },
          );
          return recordedWrite(trx, principal, requestId, row, {
            action: 'assistant_question.asked',
            resourceType: 'assistant_run',
            details: { conversation_id: conversation.id, snapshot_id: snapshotId },
          });
        }),
      needsStart: (row) => row.status === 'queued',
      start: async (row) => {
        const client = await services.temporal.client();
        await client.workflow.start<typeof AssistantRunWorkflow>(WORKFLOW_TYPES.assistantRun, {
          workflowId: row.workflow_id,
          taskQueue: config.taskQueue,
          args: [{ runId: row.id }],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          typedSearchAttributes: [{ key: WORKSPACE_ID, value: row.workspace_id }],
        });
      },
      ifStartFails: (row, cause) =>
        endRun(db, row.id, {
          status: 'failed',
          errorCode: 'workflow_start_failed',
          errorMessage: cause,
        }),
      unavailable:
        'The question was recorded but its run could not be started; the run is marked failed.',
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/assistant/runs/${run.id}`);
    return presentRun(run);
  },
});

async function loadRun(db: Parameters<typeof findRun>[0], workspaceId: string, id: string) {
  return found(findRun(db, workspaceId, id), `Assistant run ${id}`);
}

export const getAssistantRun = defineOperation({
  operationId: 'getAssistantRun',
  ...route.get('/v1/workspaces/{workspace_id}/assistant/runs/{run_id}'),
  summary: 'An assistant run: status, route, specialist, tokens, cost, error code',
  description:
    'Status: queued, running, completed (answered; the answer is `assistant_message_id`), failed (`error_code`, e.g. model_unavailable after the retries), cancelled, or refused (it could not answer: `model_not_configured` for a free-form question without a model).',
  ...ASSISTANT.scope('audits:read'),
  params: RunParams,
  success: ok('The run.', AssistantRunResponse),
  handler: async ({ db, params }) =>
    presentRun(await loadRun(db, params.workspace_id, params.run_id)),
});

export const cancelAssistantRun = defineOperation({
  operationId: 'cancelAssistantRun',
  ...route.post('/v1/workspaces/{workspace_id}/assistant/runs/{run_id}/cancel'),
  summary: 'Cancel a queued or running assistant run',
  description:
    'A queued run ends `cancelled` at once; a running one when its workflow stops (a model call under way is abandoned; tokens already spent stay counted). A finished run answers 409 run_finished.',
  ...ASSISTANT.scope('audits:read'),
  params: RunParams,
  errors: [409, 503],
  success: { status: 202, description: 'Cancellation requested.', schema: AcceptedResponse },
  handler: async ({ services, db, params, principal, requestId }) => {
    const run = await loadRun(db, params.workspace_id, params.run_id);
    if (!ACTIVE.has(run.status))
      throw problems.conflict(
        'run_finished',
        `Assistant run ${run.id} is already ${run.status}.`,
        'Only queued or running runs can be cancelled.',
        { current_status: run.status },
      );
    if (run.status === 'queued')
      await endRun(db, run.id, { status: 'cancelled', errorCode: 'cancelled' });
    try {
      const client = await services.temporal.client();
      await client.workflow.getHandle(run.workflow_id).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      await endRun(db, run.id, { status: 'cancelled', errorCode: 'cancelled' });
    }
    await recordPrincipalWrite(db, principal, requestId, {
      action: 'assistant_run.cancel_requested',
      resourceType: 'assistant_run',
      resourceId: run.id,
    });
    return { status: 'accepted' };
  },
});
