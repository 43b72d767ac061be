/**
 * Publishing an audit back to the forge its webhook came from: the commit status and/or the GitHub
 * check run (the integration's `publish_as`), then (for a pull request) the one comment, created
 * once and edited in place afterwards; an audit withdrawn before its verdict (a newer head, the
 * pull request closed) publishes that instead, and leaves the comment to the newer head or to the
 * closing note. Each is its own
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
  headPublication,
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
  ANNOTATIONS_PER_REQUEST,
  PENDING_DESCRIPTION,
  checkRunOf,
  commentBody,
  commentMarker,
  statusOf,
  type FailingOutcome,
  type GateReport,
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
  report: GateReport;
  /** Whether the commit status / the check run is posted (`publish_as`; GitLab: status only). */
  postsStatus: boolean;
  postsCheck: boolean;
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
    const status = statusOf(
      published,
      gate,
      integration.fail_on as FailingOutcome[],
      publication.withdrawn_reason,
    );
    const github = integration.provider === 'github';
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
      postsStatus: !github || integration.publish_as !== 'check_run',
      postsCheck: github && integration.publish_as !== 'commit_status',
      report: {
        integrationId: integration.id,
        provider: integration.provider,
        audit: published,
        gate,
        locations: stored?.locations ?? {},
        status,
        withdrawn: publication.withdrawn_reason,
        auditUrl: config.publicBaseUrl
          ? `${config.publicBaseUrl.replace(/\/+$/, '')}/v1/workspaces/${audit.workspace_id}/audits/${audit.id}/gate`
          : null,
      },
    };
  }

  /**
   * Runs `work` holding the publication's row lock. A forge error is returned after the
   * transaction commits, so what `work` recorded before it (a check run's id, the annotations
   * sent) is kept for the retry.
   */
  async function locked(
    auditId: string,
    work: (trx: Knex, row: PublicationRow) => Promise<string>,
  ): Promise<string> {
    let failure: ForgeError | null = null;
    const summary = await db.transaction(async (trx) => {
      const row = await lockPublication(trx, auditId);
      if (!row) return 'nothing to publish';
      try {
        return await work(trx, row);
      } catch (err) {
        if (!(err instanceof ForgeError)) throw err;
        failure = err;
        return '';
      }
    });
    if (failure) throw failure;
    return summary;
  }

  /** The audit's check run: created (in progress), or completed with its annotations, 50 a call. */
  async function publishCheck(
    trx: Knex,
    loaded: Loaded,
    row: PublicationRow,
    final: boolean,
  ): Promise<string> {
    const handle = await loaded.forge.checkRun!(row.commit_sha, row.audit_id, row.check_run_id);
    if (handle.id !== row.check_run_id)
      await updatePublication(trx, row.audit_id, { check_run_id: handle.id });
    if (!final) return `check run ${handle.id} in progress`;
    const check = checkRunOf(loaded.report);
    const detailsUrl = loaded.report.auditUrl ? { details_url: loaded.report.auditUrl } : {};
    let sent = Math.min(row.check_annotations_sent, check.annotations.length);
    do {
      const batch = check.annotations.slice(sent, sent + ANNOTATIONS_PER_REQUEST);
      await handle.update({
        status: 'completed',
        conclusion: check.conclusion,
        output: { ...check.output, annotations: batch },
        ...detailsUrl,
      });
      sent += batch.length;
      await updatePublication(trx, row.audit_id, { check_annotations_sent: sent });
    } while (sent < check.annotations.length);
    return `check run ${handle.id} ${check.conclusion} (${sent} annotations)`;
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
      const { forge, status } = loaded;
      // Under the publication's row lock: a pending status is never posted after this one.
      return step(auditId, 'commit status', () =>
        locked(auditId, async (trx, row) => {
          const done: string[] = [];
          if (loaded.postsStatus) {
            await forge.postStatus(row.commit_sha, status.state, status.description);
            done.push(`status ${status.state}`);
          }
          if (loaded.postsCheck) done.push(await publishCheck(trx, loaded, row, true));
          await updatePublication(trx, auditId, { status_state: status.state });
          return done.join('; ');
        }),
      );
    },

    /** `pending` (a check run in progress) while the audit runs, unless its final one came first. */
    async publishIntegrationPending(auditId: string): Promise<{ summary: string }> {
      const loaded = await load(auditId);
      if (!loaded) return { summary: 'nothing to publish' };
      return step(
        auditId,
        'pending status',
        () =>
          locked(auditId, async (trx, row) => {
            if (row.status_state !== null) return 'the final status came first';
            const done: string[] = [];
            if (loaded.postsStatus) {
              await loaded.forge.postStatus(row.commit_sha, 'pending', PENDING_DESCRIPTION);
              done.push('status pending');
            }
            if (loaded.postsCheck) done.push(await publishCheck(trx, loaded, row, false));
            await updatePublication(trx, auditId, { status_state: 'pending' });
            return done.join('; ');
          }),
        false,
      );
    },

    async publishIntegrationComment(auditId: string): Promise<{ summary: string }> {
      const loaded = await load(auditId);
      if (!loaded || loaded.publication.number === null) return { summary: 'no pull request' };
      // A withdrawn audit has no verdict: the newer head's audit, or the closing note, comments.
      if (loaded.publication.withdrawn_reason) return { summary: 'withdrawn: no comment' };
      const { forge, publication, integration } = loaded;
      const number = publication.number!;
      return step(auditId, 'comment', () =>
        // Under the pull request's row lock: a newer head recorded meanwhile waits for this post,
        // and an older head's audit that finishes later sees it and leaves the comment be.
        db.transaction(async (trx) => {
          const review = await findReview(trx, integration.id, number, { forUpdate: true });
          if (review?.head_sha && review.head_sha !== publication.commit_sha)
            return 'comment left to the newer head';
          const closed = review?.state === 'closed' ? closedReason(review.closed_reason) : null;
          const id = await forge.upsertComment(
            number,
            commentBody({ ...loaded.report, closed }),
            commentMarker(integration.id),
            review?.comment_id ?? null,
          );
          if (id !== review?.comment_id) await setReviewComment(trx, integration.id, number, id);
          return `comment ${id}`;
        }),
      );
    },

    /** A pull request closed: its comment (if it has one) says so above the last verdict. */
    async publishIntegrationClosed(
      integrationId: string,
      number: number,
    ): Promise<{ summary: string }> {
      const integration = await integrationById(db, integrationId);
      if (!integration) return { summary: 'the integration was removed' };
      const review = await findReview(db, integrationId, number);
      if (!review || review.state !== 'closed') return { summary: 'not closed (reopened?)' };
      if (!review.comment_id || !review.head_sha) return { summary: 'no comment to update' };
      const head = await headPublication(db, integrationId, number, review.head_sha);
      const loaded = head ? await load(head.audit_id) : null;
      if (!loaded) return { summary: 'nothing published' };
      return step(
        loaded.publication.audit_id,
        'closing note',
        () =>
          db.transaction(async (trx) => {
            const now = await findReview(trx, integrationId, number, { forUpdate: true });
            if (!now || now.state !== 'closed' || !now.comment_id) return 'reopened meanwhile';
            await loaded.forge.upsertComment(
              number,
              commentBody({ ...loaded.report, closed: closedReason(now.closed_reason) }),
              commentMarker(integrationId),
              now.comment_id,
            );
            return `comment ${now.comment_id} notes the closing`;
          }),
        false,
      );
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

const closedReason = (r: string | null): 'merged' | 'closed' =>
  r === 'merged' ? 'merged' : 'closed';

export type IntegrationActivities = ReturnType<typeof createIntegrationActivities>;
