/**
 * The webhook receivers of GitHub and GitLab. Public (the forge carries no API token): a delivery
 * is accepted only when signed with its integration's webhook secret (GitHub's HMAC-SHA256 of the
 * raw body, GitLab's token, both compared in constant time), else 401 and nothing is done. A
 * delivery id seen before answers what it answered the first time and does nothing again. A pull
 * request's new head (or a push to the default branch) starts an audit, origin `webhook`; the
 * audit workflow publishes the result back when it ends (workflows/integrations.ts).
 */
import crypto from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { createAuditRecord, failQueuedAudit, type AuditRow } from '../../db/audits';
import {
  deleteDelivery,
  findDelivery,
  insertDelivery,
  insertPublication,
  integrationById,
  upsertReview,
  withdrawRunningAudits,
  type IntegrationRow,
} from '../../db/integrations';
import { closeObservedChangeSet } from '../../db/change-sets';
import { requestAuditCancel } from '../audits/cancel';
import { findRepository } from '../../db/repositories';
import { memberById } from '../../db/workspaces';
import {
  DELIVERY_ID_PATTERN,
  WEBHOOK_BODY_LIMIT_BYTES,
  githubAction,
  githubSignatureValid,
  gitlabAction,
  gitlabTokenValid,
  type Provider,
  type WebhookAction,
} from '../../domain/integrations/webhooks';
import { startAuditWorkflow } from '../audits/operations';
import {
  WORKFLOW_TYPES,
  integrationClosedWorkflowId,
  integrationPendingWorkflowId,
  integrationPublishWorkflowId,
} from '../../domain/contract/workflows';
import type {
  IntegrationClosedWorkflow,
  IntegrationPendingWorkflow,
  IntegrationPublishWorkflow,
} from '../../workflows/integrations';
import { ApiError, problems } from '../errors';
import { defineOperation, type OperationContext } from '../registry/operation';
import type { AppServices } from '../services';
import { commitThenStart } from '../shared';
import { secretBox } from './operations';
import { sealContext } from '../../domain/integrations/sealed';
import { IntegrationParams, WebhookReceipt } from './schemas';

interface Headers {
  signature: string;
  delivery: string;
  event: string;
}

const HEADERS: Record<Provider, Headers> = {
  github: {
    signature: 'X-Hub-Signature-256',
    delivery: 'X-GitHub-Delivery',
    event: 'X-GitHub-Event',
  },
  gitlab: { signature: 'X-Gitlab-Token', delivery: 'X-Gitlab-Event-UUID', event: 'X-Gitlab-Event' },
};

function badSignature(provider: Provider): ApiError {
  return new ApiError({
    status: 401,
    code: 'invalid_webhook_signature',
    title: 'Invalid webhook signature',
    detail:
      provider === 'github'
        ? 'X-Hub-Signature-256 is missing or is not the HMAC-SHA256 of the body under this integration’s webhook secret.'
        : 'X-Gitlab-Token is missing or is not this integration’s webhook secret.',
    hint: 'Give the forge the same webhook secret as the integration (putRepositoryIntegration `webhook_secret`).',
  });
}

function headerProblem(header: string, message: string): ApiError {
  return problems.validationFailed([{ in: 'header', path: `/${header}`, message }]);
}

async function readBody(koa: Context): Promise<Buffer> {
  try {
    return await getRawBody(koa.req, { limit: WEBHOOK_BODY_LIMIT_BYTES });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large')
      throw problems.payloadTooLarge(WEBHOOK_BODY_LIMIT_BYTES);
    throw err;
  }
}

type Receipt = WebhookReceipt;

async function receive(
  provider: Provider,
  ctx: OperationContext<{ integration_id: string }, undefined, undefined>,
): Promise<Receipt> {
  const { db, services, params, koa } = ctx;
  const integration = await integrationById(db, params.integration_id);
  if (!integration || integration.provider !== provider)
    throw problems.notFound(`The ${provider} integration ${params.integration_id}`);
  const box = secretBox(services.config);
  const body = await readBody(koa);
  const names = HEADERS[provider];
  const secret = box.open(
    integration.webhook_secret_sealed,
    sealContext(integration.id, 'webhook_secret'),
  );
  const signature = koa.get(names.signature);
  const valid =
    provider === 'github'
      ? githubSignatureValid(secret, body, signature)
      : gitlabTokenValid(secret, signature);
  if (!valid) throw badSignature(provider);

  const deliveryId = koa.get(names.delivery);
  if (!DELIVERY_ID_PATTERN.test(deliveryId))
    throw headerProblem(names.delivery, 'is required: 1..200 visible ASCII characters');
  const event = koa.get(names.event);
  if (!/^[\x20-\x7e]{1,100}$/.test(event))
    throw headerProblem(names.event, 'is required: 1..100 printable ASCII characters');

  const seen = await findDelivery(db, integration.id, deliveryId);
  if (seen) return { ...(seen.response as unknown as Receipt), replayed: true };

  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw problems.malformedJson((err as Error).message);
  }
  const repository = await findRepository(db, integration.workspace_id, integration.repository_id);
  if (!repository) throw problems.notFound(`The repository of integration ${integration.id}`);
  const decide = provider === 'github' ? githubAction : gitlabAction;
  const action = decide(event, payload, integration.project, repository.default_branch);
  if (action.kind === 'invalid')
    throw problems.validationFailed([{ in: 'body', path: '', message: action.reason }]);

  const receipt = (outcome: Receipt['outcome'], auditId: string | null, reason: string) => ({
    delivery_id: deliveryId,
    event,
    outcome,
    audit_id: auditId,
    reason,
    replayed: false,
  });
  const record = (r: Receipt, trx = db) =>
    insertDelivery(trx, {
      integration_id: integration.id,
      delivery_id: deliveryId,
      event,
      outcome: r.outcome,
      audit_id: r.audit_id,
      response: r as unknown as Record<string, unknown>,
    });
  /** The first answer to this delivery id, when a concurrent request recorded it first. */
  const firstAnswer = async (): Promise<Receipt> => {
    const row = await findDelivery(db, integration.id, deliveryId);
    return { ...(row!.response as unknown as Receipt), replayed: true };
  };

  if (action.kind === 'ignore') {
    const r = receipt('ignored', null, action.reason);
    return (await record(r)) ? r : firstAnswer();
  }
  if (action.kind === 'close') {
    const r: Receipt = receipt('closed', null, action.reason);
    const reason = action.merged ? ('merged' as const) : ('closed' as const);
    const withdrawn = await db
      .transaction(async (trx) => {
        await upsertReview(trx, integration.id, action.number, {
          state: 'closed',
          closed_reason: reason,
        });
        // The pull request's observed change set is closed (spec states stay candidate/observed:
        // closed_at/closed_reason say it), and its audit still running has nothing left to gate.
        await closeObservedChangeSet(trx, integration.repository_id, action.originRef, reason);
        const audits = await withdrawRunningAudits(
          trx,
          integration.id,
          action.number,
          `the ${provider === 'gitlab' ? 'merge request' : 'pull request'} was ${reason}`,
          null,
        );
        if (audits.length) r.cancelled_audit_ids = audits.map((w) => w.id);
        // Recorded last, with the whole answer: a concurrent first delivery rolls this back.
        if (!(await record(r, trx))) throw new ConcurrentDelivery();
        return audits;
      })
      .catch((err: unknown) => {
        if (err instanceof ConcurrentDelivery) return null;
        throw err;
      });
    if (withdrawn === null) return firstAnswer();
    await cancelWithdrawn(services, withdrawn);
    await startClosingNote(services, integration.id, action.number, deliveryId);
    return r;
  }
  const started = await startWebhookAudit(services, integration, action, deliveryId, receipt);
  return started ?? firstAnswer();
}

/**
 * Records the delivery, the audit, what it publishes and the pull request in one transaction,
 * then starts the audit's workflow. Null when a concurrent request recorded this delivery first.
 */
async function startWebhookAudit(
  services: AppServices,
  integration: IntegrationRow,
  action: Extract<WebhookAction, { kind: 'pull_request' | 'push' }>,
  deliveryId: string,
  receipt: (outcome: 'started', auditId: string, reason: string) => Receipt,
): Promise<Receipt | null> {
  const { db } = services;
  const pr = action.kind === 'pull_request';
  const sha = pr ? action.headSha : action.sha;
  let answer: Receipt | null = null;
  let withdrawn: Withdrawn[] = [];
  await commitThenStart<AuditRow>(services.log, 'audit', {
    commit: () =>
      db.transaction(async (trx) => {
        const creator = integration.created_by
          ? await memberById(trx, integration.created_by)
          : undefined;
        const audit = await createAuditRecord(
          trx,
          {
            workspace_id: integration.workspace_id,
            repository_id: integration.repository_id,
            upload_id: null,
            created_by: creator?.id ?? null,
            audit_type: 'repository',
            branch_ref: pr ? action.headRef : action.branch,
            commit_sha: sha,
            deep_review: false,
            source_scope: {},
            origin: 'webhook',
            origin_ref: pr ? action.originRef : null,
            trigger_reason: `${action.reason} (delivery ${deliveryId})`,
            profile_snapshot: null,
          },
          {
            actorId: creator?.id ?? null,
            actorLogin: creator?.login ?? null,
            tokenId: null,
            requestId: null,
          },
        );
        const r: Receipt = receipt('started', audit.id, action.reason);
        // A newer head supersedes the audits of older ones still running: cancelled, they
        // publish `superseded` on their own commit, never a verdict over this one.
        if (pr) {
          withdrawn = await withdrawRunningAudits(
            trx,
            integration.id,
            action.number,
            `superseded by ${sha.slice(0, 12)}`,
            audit.id,
          );
          if (withdrawn.length) r.cancelled_audit_ids = withdrawn.map((w) => w.id);
        }
        const fresh = await insertDelivery(trx, {
          integration_id: integration.id,
          delivery_id: deliveryId,
          event: r.event,
          outcome: r.outcome,
          audit_id: audit.id,
          response: r as unknown as Record<string, unknown>,
        });
        // A concurrent request recorded this delivery first: this one's audit is rolled back.
        if (!fresh) throw new ConcurrentDelivery();
        await insertPublication(trx, {
          audit_id: audit.id,
          integration_id: integration.id,
          number: pr ? action.number : null,
          commit_sha: sha,
          base_ref: pr ? action.baseRef : null,
        });
        if (pr) {
          await upsertReview(trx, integration.id, action.number, {
            state: 'open',
            head_sha: sha,
            base_ref: action.baseRef,
          });
        }
        answer = r;
        return audit;
      }),
    start: (row) => startAuditWorkflow(services, row),
    // The delivery is forgotten with its failed audit, so that the forge's redelivery retries.
    ifStartFails: async (row, cause) => {
      await failQueuedAudit(db, row.id, cause);
      await deleteDelivery(db, integration.id, deliveryId);
    },
    unavailable:
      'The audit was recorded but its workflow could not be started; it is marked failed. Redeliver the webhook to try again.',
  }).catch((err: unknown) => {
    if (!(err instanceof ConcurrentDelivery)) throw err;
  });
  const started = answer as Receipt | null;
  if (started?.audit_id) await startPending(services, started.audit_id);
  if (started) await cancelWithdrawn(services, withdrawn);
  return started;
}

type Withdrawn = Awaited<ReturnType<typeof withdrawRunningAudits>>[number];

/**
 * Cancels withdrawn audits (cancelAudit's path) and starts their publication now: it posts why
 * they have no verdict. Best effort: the withdrawal is recorded, so a publication started later
 * (the audit ending anyway) says the same.
 */
async function cancelWithdrawn(services: AppServices, audits: Withdrawn[]): Promise<void> {
  for (const audit of audits) {
    try {
      await requestAuditCancel(services, services.db, audit);
      const client = await services.temporal.client();
      await client.workflow.start<typeof IntegrationPublishWorkflow>(
        WORKFLOW_TYPES.integrationPublish,
        {
          workflowId: integrationPublishWorkflowId(audit.id),
          args: [{ auditId: audit.id }],
          taskQueue: services.config.taskQueue,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        },
      );
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) continue;
      services.log.warn({ err, audit_id: audit.id }, 'could not cancel a withdrawn audit');
    }
  }
}

/** Starts the closing note of a pull request's comment; best effort, like `pending`. */
async function startClosingNote(
  services: AppServices,
  integrationId: string,
  number: number,
  deliveryId: string,
): Promise<void> {
  try {
    const client = await services.temporal.client();
    const key = crypto.createHash('sha256').update(deliveryId).digest('hex').slice(0, 16);
    await client.workflow.start<typeof IntegrationClosedWorkflow>(
      WORKFLOW_TYPES.integrationClosed,
      {
        workflowId: integrationClosedWorkflowId(integrationId, number, key),
        args: [{ integrationId, number }],
        taskQueue: services.config.taskQueue,
      },
    );
  } catch (err) {
    services.log.warn({ err, integration_id: integrationId }, 'could not start the closing note');
  }
}

/** Starts the `pending` status of a new audit; best effort (the final status does not need it). */
async function startPending(services: AppServices, auditId: string): Promise<void> {
  try {
    const client = await services.temporal.client();
    await client.workflow.start<typeof IntegrationPendingWorkflow>(
      WORKFLOW_TYPES.integrationPending,
      {
        workflowId: integrationPendingWorkflowId(auditId),
        args: [{ auditId }],
        taskQueue: services.config.taskQueue,
      },
    );
  } catch (err) {
    services.log.warn({ err, audit_id: auditId }, 'could not start the pending status');
  }
}

class ConcurrentDelivery extends Error {}

const description = (provider: Provider) => {
  const h = HEADERS[provider];
  const events =
    provider === 'github'
      ? '`pull_request` (opened, synchronize, reopened: audit the head commit, gated against the pull request’s target branch at the merge-base, and cancel the audit of an older head still running; closed, merged or not: the pull request’s observed change set is closed (`closed_at`, `closed_reason`), its running audit cancelled, no audit started, its comment notes the closing) and `push` (to the default branch: audit it)'
      : '`Merge Request Hook` (open, reopen, update with new commits: audit the head commit, gated against the merge request’s target branch at the merge-base, and cancel the audit of an older head still running; close, merge: its observed change set is closed, its running audit cancelled, no audit started, its note says so) and `Push Hook` (to the default branch: audit it)';
  return `Receives a ${provider === 'github' ? 'GitHub' : 'GitLab'} webhook for the integration (no API token: the delivery must carry ${h.signature}${provider === 'github' ? ', the HMAC-SHA256 of the raw body under the webhook secret' : ', the webhook secret'}, checked in constant time; otherwise 401 invalid_webhook_signature and nothing is done). Events: ${events}. Any other event or action is 202 \`ignored\` with its reason, as is an event for another repository than the integration's \`project\`. Audits started have origin \`webhook\` and, for a pull request, origin_ref \`${provider === 'github' ? 'github:<owner>/<name>#<number>' : 'gitlab:<project>!<iid>'}\` (its change set key). ${h.delivery} is required: a delivery id received before answers the first answer again (\`replayed\`: true) and starts nothing. ${h.event} is required. Body: application/json, at most ${WEBHOOK_BODY_LIMIT_BYTES} bytes (413 beyond). An unknown integration, or one of the other provider, is 404.`;
};

function webhookOperation(provider: Provider, operationId: string) {
  return defineOperation({
    operationId,
    method: 'post',
    path: `/v1/webhooks/${provider}/{integration_id}`,
    summary: `Receive a ${provider === 'github' ? 'GitHub' : 'GitLab'} webhook`,
    description: description(provider),
    tag: 'Integrations',
    access: { kind: 'public' },
    params: IntegrationParams,
    rawBody: {
      contentTypes: ['application/json'],
      description: `The webhook payload as the forge sent it (its signature covers these bytes).`,
      limitBytes: () => WEBHOOK_BODY_LIMIT_BYTES,
    },
    errors: [401, 404, 503],
    success: { status: 202, description: 'What the delivery did.', schema: WebhookReceipt },
    handler: (ctx) => receive(provider, ctx),
  });
}

export const receiveGithubWebhook = webhookOperation('github', 'receiveGithubWebhook');
export const receiveGitlabWebhook = webhookOperation('gitlab', 'receiveGitlabWebhook');
