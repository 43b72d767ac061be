/**
 * A repository's GitHub or GitLab integration: where its webhooks come in, the token that posts
 * statuses and the one pull-request comment back, and which gate outcomes fail the status. The
 * token and the webhook secret are write-only: sealed with INTEGRATION_SECRET_KEYS before they
 * are stored, never returned (a `*_set` flag and the token's last 4 characters instead).
 */
import type { Knex } from 'knex';
import {
  deleteIntegration,
  insertIntegration,
  integrationOfRepository,
  lockRepositoryRow,
  recentDeliveries,
  updateIntegration,
  type IntegrationRow,
} from '../../db/integrations';
import { apiBaseUrlProblem, normalizedBaseUrl } from '../../domain/integrations/endpoint';
import { FAILING_OUTCOMES, type FailingOutcome } from '../../domain/integrations/publication';
import { SecretBox, sealContext } from '../../domain/integrations/sealed';
import { DEFAULT_API_BASE_URL } from '../../domain/integrations/webhooks';
import { sourcePolicyOf } from '../../platform/source-access';
import type { Config } from '../../platform/config';
import { ApiError, problems } from '../errors';
import { RepositoryParams } from '../repositories/schemas';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { recordedWrite, versionMismatch } from '../registry/parts';
import { loadRepository } from '../registry/loads';
import { iso, recordPrincipalWrite } from '../shared';
import { DeliveryPage, IntegrationResponse, IntegrationUpdate } from './schemas';

const PATH = '/v1/workspaces/{workspace_id}/repositories/{repository_id}/integration';

export function secretBox(config: Config): SecretBox {
  const box = new SecretBox(config.integrationSecretKeys);
  if (!box.configured)
    throw new ApiError({
      status: 503,
      code: 'integration_secrets_unconfigured',
      title: 'Integrations are not configured',
      detail:
        'This server has no INTEGRATION_SECRET_KEYS: it cannot store or read the secrets of a GitHub or GitLab integration.',
      hint: 'An operator sets INTEGRATION_SECRET_KEYS (one or more keys of 32+ characters) and restarts the API and the worker.',
    });
  return box;
}

export function webhookPath(row: Pick<IntegrationRow, 'id' | 'provider'>): string {
  return `/v1/webhooks/${row.provider}/${row.id}`;
}

function present(config: Config, row: IntegrationRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    provider: row.provider,
    api_base_url: row.api_base_url,
    project: row.project,
    fail_on: row.fail_on as FailingOutcome[],
    publish_as: row.publish_as,
    token_set: row.token_sealed !== '',
    token_last4: row.token_last4 || null,
    webhook_secret_set: row.webhook_secret_sealed !== '',
    webhook_url: `${(config.publicBaseUrl ?? '').replace(/\/+$/, '')}${webhookPath(row)}`,
    version: row.version,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The repository's integration (404 for an unknown repository or one without). */
async function loadIntegration(db: Knex, workspaceId: string, repositoryId: string) {
  await loadRepository(db, workspaceId, repositoryId);
  const row = await integrationOfRepository(db, workspaceId, repositoryId);
  if (!row) throw problems.notFound(`The integration of repository ${repositoryId}`);
  return row;
}

const INTEGRATIONS = operationGroup('Integrations');

export const getRepositoryIntegration = defineOperation({
  operationId: 'getRepositoryIntegration',
  ...route.get(PATH),
  summary: "Get a repository's GitHub or GitLab integration",
  description:
    'The integration without its secrets (`token_set`, `token_last4`, `webhook_secret_set`), and the `webhook_url` to give the forge. 404 when the repository has none.',
  ...INTEGRATIONS.scope('repositories:read'),
  params: RepositoryParams,
  success: ok('The integration.', IntegrationResponse),
  handler: async ({ db, services, params }) => {
    const row = await loadIntegration(db, params.workspace_id, params.repository_id);
    return present(services.config, row);
  },
});

export const putRepositoryIntegration = defineOperation({
  operationId: 'putRepositoryIntegration',
  ...route.put(PATH),
  summary: "Create or replace a repository's GitHub or GitLab integration",
  description:
    'One integration per repository. Webhooks sent to its `webhook_url` and signed with `webhook_secret` start audits (origin `webhook`): a pull request (GitHub `pull_request` opened, synchronize, reopened; GitLab `merge_request` open, reopen, or update with new commits) audits its head commit, gated against its target branch at the merge-base (a newer head cancels the audit of the older one, which then publishes `superseded`, never a verdict); closing it (merged or not) closes its observed change set, cancels its running audit and notes the closing in its comment; a push to the default branch audits it. The commit status (context or name `archaudit/architecture-gate`; with `publish_as` `check_run` or `both`, a GitHub check run of that name with a summary and annotations) is `pending` (`in_progress`) while the audit runs. When the audit ends, the status and, for a pull request, one comment (GitLab: a note) are posted with `token` to `api_base_url` only, retried durably, and the comment is edited in place on later pushes. `token` and `webhook_secret` are required when creating and kept when left out; they are stored sealed (AES-256-GCM under INTEGRATION_SECRET_KEYS; without it 503 integration_secrets_unconfigured) and never returned. `api_base_url` follows the host rules of repository URLs (no internal address unless REPOSITORY_ALLOWED_HOSTS names it; plain http only for such hosts): else 400. `expected_version`, when given, must be the current version (409 version_mismatch).',
  ...INTEGRATIONS.scope('repositories:write'),
  params: RepositoryParams,
  body: IntegrationUpdate,
  errors: [409, 503],
  success: ok('The integration as stored.', IntegrationResponse),
  handler: async ({ db, services, params, body, principal, requestId, newId }) => {
    const { config } = services;
    await loadRepository(db, params.workspace_id, params.repository_id);
    const box = secretBox(config);
    const baseUrl = normalizedBaseUrl(body.api_base_url ?? DEFAULT_API_BASE_URL[body.provider]);
    const urlProblem = apiBaseUrlProblem(baseUrl, principal.workspace, sourcePolicyOf(config));
    if (urlProblem)
      throw problems.validationFailed([{ in: 'body', path: '/api_base_url', message: urlProblem }]);
    if (body.provider === 'gitlab' && body.publish_as && body.publish_as !== 'commit_status')
      throw problems.validationFailed([
        { in: 'body', path: '/publish_as', message: 'GitLab has commit statuses only' },
      ]);
    return db.transaction(async (trx) => {
      await lockRepositoryRow(trx, params.repository_id);
      const existing = await integrationOfRepository(
        trx,
        params.workspace_id,
        params.repository_id,
      );
      if (
        existing &&
        body.expected_version !== undefined &&
        body.expected_version !== existing.version
      )
        throw versionMismatch(
          'integration',
          existing.version,
          body.expected_version,
          'getRepositoryIntegration',
        );
      if (!existing) {
        const missing = (['token', 'webhook_secret'] as const).filter((k) => !body[k]);
        if (missing.length)
          throw problems.validationFailed(
            missing.map((k) => ({
              in: 'body' as const,
              path: `/${k}`,
              message: 'is required when creating an integration',
            })),
          );
      }
      const id = existing?.id ?? newId();
      const fields = {
        provider: body.provider,
        api_base_url: baseUrl,
        project: body.project,
        fail_on: [...(body.fail_on ?? FAILING_OUTCOMES)],
        publish_as: body.publish_as ?? existing?.publish_as ?? ('commit_status' as const),
        token_sealed: body.token
          ? box.seal(body.token, sealContext(id, 'token'))
          : existing!.token_sealed,
        token_last4: body.token ? body.token.slice(-4) : existing!.token_last4,
        webhook_secret_sealed: body.webhook_secret
          ? box.seal(body.webhook_secret, sealContext(id, 'webhook_secret'))
          : existing!.webhook_secret_sealed,
      };
      const row = existing
        ? await updateIntegration(trx, id, fields)
        : await insertIntegration(trx, {
            id,
            workspace_id: params.workspace_id,
            repository_id: params.repository_id,
            created_by: principal.memberId,
            ...fields,
          });
      await recordPrincipalWrite(trx, principal, requestId, {
        action: existing ? 'integration.updated' : 'integration.created',
        resourceType: 'repository_integration',
        resourceId: row.id,
        details: {
          repository_id: row.repository_id,
          provider: row.provider,
          api_base_url: row.api_base_url,
          project: row.project,
          token_changed: !!body.token,
          webhook_secret_changed: !!body.webhook_secret,
        },
      });
      return present(config, row);
    });
  },
});

export const deleteRepositoryIntegration = defineOperation({
  operationId: 'deleteRepositoryIntegration',
  ...route.delete(PATH),
  summary: "Remove a repository's GitHub or GitLab integration",
  description:
    'Its secrets are deleted; webhooks to its URL are 404 from now on and audits it started publish nothing more. Audits already started keep running.',
  ...INTEGRATIONS.scope('repositories:write'),
  params: RepositoryParams,
  success: { status: 204, description: 'Removed.', schema: undefined },
  handler: async ({ db, params, principal, requestId }) => {
    await loadRepository(db, params.workspace_id, params.repository_id);
    await db.transaction(async (trx) => {
      const row = await integrationOfRepository(trx, params.workspace_id, params.repository_id);
      if (!row) throw problems.notFound(`The integration of repository ${params.repository_id}`);
      await deleteIntegration(trx, row.id);
      await recordedWrite(trx, principal, requestId, row, {
        action: 'integration.deleted',
        resourceType: 'repository_integration',
        details: { repository_id: row.repository_id, provider: row.provider },
      });
    });
    return undefined;
  },
});

/** How many deliveries listIntegrationDeliveries shows. */
const DELIVERIES_SHOWN = 50;

export const listIntegrationDeliveries = defineOperation({
  operationId: 'listIntegrationDeliveries',
  ...route.get(`${PATH}/deliveries`),
  summary: 'The latest webhook deliveries of an integration',
  description: `The ${DELIVERIES_SHOWN} latest deliveries, newest first: event, what was done (started, closed, ignored) and why, the audit started and where publishing its result back stands (\`publication_state\` waiting, publishing, published or failed; \`publication_error\` the last failed attempt's error).`,
  ...INTEGRATIONS.scope('repositories:read'),
  params: RepositoryParams,
  success: ok('The latest deliveries.', DeliveryPage),
  handler: async ({ db, params }) => {
    const row = await loadIntegration(db, params.workspace_id, params.repository_id);
    const items = await recentDeliveries(db, row.id, DELIVERIES_SHOWN);
    return {
      items: items.map((d) => ({
        delivery_id: d.delivery_id,
        event: d.event,
        outcome: d.outcome,
        audit_id: d.audit_id,
        reason: String(d.response.reason ?? ''),
        received_at: iso(d.received_at),
        publication_state: d.publication_state,
        publication_error: d.publication_error,
      })),
    };
  },
});
