/** GitHub and GitLab integrations: settings (secrets write-only) and webhook receipts. */
import { Type, type Static } from '@sinclair/typebox';
import { PROVIDERS } from '../../domain/integrations/webhooks';
import { API_BASE_URL_MAX } from '../../domain/integrations/endpoint';
import { FAILING_OUTCOMES, PUBLISH_AS } from '../../domain/integrations/publication';
import { DateTime, LiteralUnion, Nullable, Strict, Uuid, Version } from '../schema-kit';
import { WorkspaceRecord, Timestamps } from '../schema-parts';

/** The longest token or webhook secret accepted (GitHub and GitLab tokens are < 100). */
export const SECRET_MAX = 1000;
/** The shortest webhook secret accepted: a guessable secret lets anyone start audits. */
export const WEBHOOK_SECRET_MIN = 16;

const provider = () =>
  LiteralUnion(PROVIDERS, {
    description: 'The forge: `github` (or GitHub Enterprise) or `gitlab`.',
  });
const failOn = () =>
  Type.Array(LiteralUnion(FAILING_OUTCOMES), {
    uniqueItems: true,
    maxItems: FAILING_OUTCOMES.length,
    description:
      'Gate outcomes that make the commit status fail (GitHub `failure`, GitLab `failed`); `pass` always succeeds. Default: all three.',
  });

const publishAs = () =>
  LiteralUnion(PUBLISH_AS, {
    description:
      "How a GitHub integration reports each audit on its commit: `commit_status` (default), `check_run` (a check run with a summary and an annotation on each blocked or reviewed change's evidence; GitHub allows check runs to GitHub App installation tokens only) or `both`. GitLab: `commit_status` only.",
  });

export const IntegrationUpdate = Strict(
  'RepositoryIntegrationUpdate',
  {
    provider: provider(),
    api_base_url: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: API_BASE_URL_MAX,
          description:
            'REST API root: `https://api.github.com` (default for github), `https://<host>/api/v3` for GitHub Enterprise, `https://gitlab.com/api/v4` (default for gitlab) or `https://<host>/api/v4`.',
        }),
      ),
    ),
    project: Type.String({
      minLength: 1,
      maxLength: 300,
      pattern: '^[A-Za-z0-9_.][A-Za-z0-9_./-]*$',
      description:
        'GitHub: `owner/name`. GitLab: the numeric project id or its `group/subgroup/name` path. Webhooks for another repository are ignored, and statuses and comments go to this one only.',
    }),
    token: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: SECRET_MAX,
        pattern: '^[\\x21-\\x7e]+$',
        description:
          'Token that posts statuses and comments (GitHub: `statuses:write` and `pull_requests:write`; GitLab: `api` scope). Write-only; required when creating, kept when left out.',
      }),
    ),
    webhook_secret: Type.Optional(
      Type.String({
        minLength: WEBHOOK_SECRET_MIN,
        maxLength: SECRET_MAX,
        pattern: '^[\\x21-\\x7e]+$',
        description:
          "The webhook's secret (GitHub: the HMAC key of X-Hub-Signature-256; GitLab: the X-Gitlab-Token). Write-only; required when creating, kept when left out.",
      }),
    ),
    fail_on: Type.Optional(failOn()),
    publish_as: Type.Optional(publishAs()),
    expected_version: Type.Optional(
      Version({ description: 'When given, the version the client last read (else 409).' }),
    ),
  },
  { description: "A repository's GitHub or GitLab integration." },
);

export const IntegrationResponse = Strict(
  'RepositoryIntegrationResponse',
  {
    ...WorkspaceRecord,
    repository_id: Uuid(),
    provider: provider(),
    api_base_url: Type.String(),
    project: Type.String(),
    fail_on: failOn(),
    publish_as: publishAs(),
    token_set: Type.Boolean({ description: 'A token is stored (never returned).' }),
    token_last4: Nullable(Type.String({ description: 'Last 4 characters of the token.' })),
    webhook_secret_set: Type.Boolean({
      description: 'A webhook secret is stored (never returned).',
    }),
    webhook_url: Type.String({
      description:
        'Where the forge sends webhooks (absolute under PUBLIC_BASE_URL, else the path). GitHub: content type application/json, events `Pull requests` and `Pushes`. GitLab: `Merge request events` and `Push events`.',
    }),
    version: Type.Integer(),
    ...Timestamps,
  },
  { description: "A repository's GitHub or GitLab integration, without its secrets." },
);

export const IntegrationParams = Type.Object(
  { integration_id: Uuid({ description: 'The integration (from its webhook_url).' }) },
  { additionalProperties: false },
);

export const WebhookReceipt = Strict(
  'WebhookReceipt',
  {
    delivery_id: Type.String(),
    event: Type.String(),
    outcome: LiteralUnion(['started', 'closed', 'ignored'] as const, {
      description:
        '`started`: an audit was started (`audit_id`); `closed`: the pull request closed (its observed change set is closed, no audit started); `ignored`: nothing to do (`reason` says why).',
    }),
    audit_id: Nullable(Uuid()),
    reason: Type.String(),
    cancelled_audit_ids: Type.Optional(
      Type.Array(Uuid(), {
        description:
          "Audits of the same pull request this delivery withdrew: still running at an older head (a newer push supersedes them) or when the pull request closed. Cancelled through cancelAudit's path; they publish no verdict.",
      }),
    ),
    replayed: Type.Boolean({
      description:
        'True when this delivery id was received before: the first answer, nothing done again.',
    }),
  },
  { description: 'What a webhook delivery did.' },
);

export const DeliveryPage = Strict('WebhookDeliveryPage', {
  items: Type.Array(
    Strict('WebhookDelivery', {
      delivery_id: Type.String(),
      event: Type.String(),
      outcome: Type.String(),
      audit_id: Nullable(Uuid()),
      reason: Type.String(),
      received_at: DateTime(),
      publication_state: Nullable(
        LiteralUnion(['waiting', 'publishing', 'published', 'failed'] as const, {
          description: "Publishing the started audit's result back; null when none was started.",
        }),
      ),
      publication_error: Nullable(Type.String()),
    }),
  ),
});

// The static types of the schemas that code elsewhere names.
export type WebhookReceipt = Static<typeof WebhookReceipt>;
