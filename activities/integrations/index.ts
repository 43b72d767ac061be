/**
 * Publishing an audit back to the forge its webhook came from: the commit status, then (for a
 * pull request) the one comment, created once and edited in place afterwards. Each is its own
 * activity, retried by IntegrationPublishWorkflow while the forge is down; a refusal (a bad token,
 * a repository the token cannot write) ends it at once. Every attempt's error is recorded on the
 * publication (without the token: ForgeError messages never carry it).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Knex } from 'knex';
import { getAuditById } from '../../db/audits';
import { auditGateOf } from '../../db/changes';
import {
  findReview,
  integrationById,
  lockPublication,
  publicationOf,
  setReviewComment,
  updatePublication,
  type IntegrationRow,
  type PublicationRow,
} from '../../db/integrations';
import type { StoredGate } from '../../domain/changes/service';
import { integrationPublishWorkflowId } from '../../domain/contract/workflows';
import {
  PENDING_DESCRIPTION,
  commentBody,
  commentMarker,
  statusOf,
  type FailingOutcome,
} from '../../domain/integrations/publication';
import { SecretBox, sealContext } from '../../domain/integrations/sealed';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { sourcePolicyOf } from '../../platform/source-access';
import { ForgeError } from './forge-http';
import { forgeOf, type Forge } from './forges';

export interface IntegrationActivityDeps {
  db: Knex;
  log: Logger;
  config: Config;
}

interface Loaded {
  publication: PublicationRow;
  integration: IntegrationRow;
  forge: Forge;
  status: ReturnType<typeof statusOf>;
  comment: () => string;
}

export function createIntegrationActivities({ db, log, config }: IntegrationActivityDeps) {
  /** What to publish for an audit, or null: no publication, or its integration was removed. */
  async function load(auditId: string): Promise<Loaded | null> {
    const publication = await publicationOf(db, auditId);
    if (!publication) return null;
    const integration = await integrationById(db, publication.integration_id);
    if (!integration) return null;
    const box = new SecretBox(config.integrationSecretKeys);
    let token: string;
    try {
      token = box.open(integration.token_sealed, sealContext(integration.id, 'token'));
    } catch (err) {
      throw ApplicationFailure.nonRetryable(
        `the integration's token cannot be opened: ${(err as Error).message}`,
        'integration_secrets_unconfigured',
      );
    }
    const audit = await getAuditById(db, auditId);
    const stored = (await auditGateOf(db, auditId))?.result as unknown as StoredGate | undefined;
    const gate = stored?.response ?? null;
    const published = {
      id: audit.id,
      status: audit.status,
      error_code: audit.error_code,
      commit_sha: publication.commit_sha,
      branch_ref: audit.branch_ref,
    };
    const status = statusOf(published, gate, integration.fail_on as FailingOutcome[]);
    return {
      publication,
      integration,
      forge: forgeOf(
        integration.provider,
        sourcePolicyOf(config),
        integration.api_base_url,
        integration.project,
        token,
      ),
      status,
      comment: () =>
        commentBody({
          integrationId: integration.id,
          provider: integration.provider,
          audit: published,
          gate,
          locations: stored?.locations ?? {},
          status,
          auditUrl: config.publicBaseUrl
            ? `${config.publicBaseUrl.replace(/\/+$/, '')}/v1/workspaces/${audit.workspace_id}/audits/${audit.id}/gate`
            : null,
        }),
    };
  }

  /** Runs one forge step; its failure is recorded, then thrown as Temporal should retry it. */
  async function step(auditId: string, what: string, run: () => Promise<string>, final = true) {
    try {
      return { summary: await run() };
    } catch (err) {
      if (!(err instanceof ForgeError)) throw err;
      await updatePublication(db, auditId, {
        ...(final ? { state: 'publishing' as const } : {}),
        last_error: `${what}: ${err.message}`,
        attempt: true,
      }).catch(() => undefined);
      log.warn({ audit_id: auditId, code: err.code, retryable: err.retryable }, `${what} failed`);
      throw ApplicationFailure.create({
        message: err.message,
        type: err.code,
        nonRetryable: !err.retryable,
      });
    }
  }

  return {
    /** The publishing workflow's id for an audit that publishes back, else null. */
    async integrationPublicationOf(auditId: string): Promise<string | null> {
      const publication = await publicationOf(db, auditId);
      return publication ? integrationPublishWorkflowId(auditId) : null;
    },

    async publishIntegrationStatus(auditId: string): Promise<{ summary: string }> {
      const loaded = await load(auditId);
      if (!loaded) return { summary: 'nothing to publish' };
      const { forge, publication, status } = loaded;
      // Under the publication's row lock: a pending status is never posted after this one.
      return step(auditId, 'commit status', () =>
        db.transaction(async (trx) => {
          await lockPublication(trx, auditId);
          await forge.postStatus(publication.commit_sha, status.state, status.description);
          await updatePublication(trx, auditId, { status_state: status.state });
          return `status ${status.state}`;
        }),
      );
    },

    /** `pending` while the audit runs, unless its final status was posted first. */
    async publishIntegrationPending(auditId: string): Promise<{ summary: string }> {
      const loaded = await load(auditId);
      if (!loaded) return { summary: 'nothing to publish' };
      return step(
        auditId,
        'pending status',
        () =>
          db.transaction(async (trx) => {
            const row = await lockPublication(trx, auditId);
            if (!row || row.status_state !== null) return 'the final status came first';
            await loaded.forge.postStatus(row.commit_sha, 'pending', PENDING_DESCRIPTION);
            await updatePublication(trx, auditId, { status_state: 'pending' });
            return 'status pending';
          }),
        false,
      );
    },

    async publishIntegrationComment(auditId: string): Promise<{ summary: string }> {
      const loaded = await load(auditId);
      if (!loaded || loaded.publication.number === null) return { summary: 'no pull request' };
      const { forge, publication, integration } = loaded;
      const number = publication.number!;
      return step(auditId, 'comment', async () => {
        // A later head's audit may have published already: an older one leaves its comment be.
        const review = await findReview(db, integration.id, number);
        if (review?.head_sha && review.head_sha !== publication.commit_sha)
          return 'comment left to the newer head';
        const id = await forge.upsertComment(
          number,
          loaded.comment(),
          commentMarker(integration.id),
          review?.comment_id ?? null,
        );
        if (id !== review?.comment_id) await setReviewComment(db, integration.id, number, id);
        return `comment ${id}`;
      });
    },

    async finishIntegrationPublication(
      auditId: string,
      outcome: 'published' | 'failed',
      error: string | null,
    ): Promise<void> {
      await updatePublication(db, auditId, {
        state: outcome,
        published_at: outcome === 'published' ? new Date() : null,
        ...(error ? { last_error: error } : {}),
      });
    },
  };
}

export type IntegrationActivities = ReturnType<typeof createIntegrationActivities>;
