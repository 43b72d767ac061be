/**
 * GitHub and GitLab integrations (one per repository), the webhook deliveries they received, the
 * pull requests they follow and what each audit they started publishes back. Secrets are stored
 * sealed (domain/integrations/sealed.ts); nothing here opens them.
 */
import type { Knex } from 'knex';
import type { PublishAs } from '../domain/integrations/publication';

export interface IntegrationRow {
  id: string;
  workspace_id: string;
  repository_id: string;
  provider: 'github' | 'gitlab';
  api_base_url: string;
  project: string;
  fail_on: string[];
  publish_as: PublishAs;
  token_sealed: string;
  token_last4: string;
  webhook_secret_sealed: string;
  created_by: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export type IntegrationFields = Pick<
  IntegrationRow,
  | 'provider'
  | 'api_base_url'
  | 'project'
  | 'fail_on'
  | 'publish_as'
  | 'token_sealed'
  | 'token_last4'
  | 'webhook_secret_sealed'
>;

const fromDb = (row: IntegrationRow | undefined): IntegrationRow | undefined =>
  row && { ...row, fail_on: row.fail_on ?? [] };

export async function integrationOfRepository(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
): Promise<IntegrationRow | undefined> {
  return fromDb(
    await db<IntegrationRow>('repository_integrations')
      .where({ workspace_id: workspaceId, repository_id: repositoryId })
      .first(),
  );
}

/** Locks the repository's row: concurrent creations of its integration run one after another. */
export async function lockRepositoryRow(trx: Knex, repositoryId: string): Promise<void> {
  await trx('repositories').where({ id: repositoryId }).forUpdate().first();
}

export async function integrationById(
  db: Knex,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<IntegrationRow | undefined> {
  const q = db<IntegrationRow>('repository_integrations').where({ id }).first();
  if (options.forUpdate) void q.forUpdate();
  return fromDb(await q);
}

export async function insertIntegration(
  db: Knex,
  row: Pick<IntegrationRow, 'id' | 'workspace_id' | 'repository_id' | 'created_by'> &
    IntegrationFields,
): Promise<IntegrationRow> {
  const [created] = await db<IntegrationRow>('repository_integrations')
    .insert({ ...row, fail_on: JSON.stringify(row.fail_on) as unknown as string[] })
    .returning('*');
  return fromDb(created)!;
}

export async function updateIntegration(
  db: Knex,
  id: string,
  fields: IntegrationFields,
): Promise<IntegrationRow> {
  const [updated] = await db<IntegrationRow>('repository_integrations')
    .where({ id })
    .update({
      ...fields,
      fail_on: JSON.stringify(fields.fail_on) as unknown as string[],
      version: db.raw('version + 1') as unknown as number,
      updated_at: db.fn.now() as unknown as Date,
    })
    .returning('*');
  return fromDb(updated)!;
}

export async function deleteIntegration(db: Knex, id: string): Promise<boolean> {
  return (await db('repository_integrations').where({ id }).delete()) > 0;
}

// ---------------------------------------------------------------------------------------------
// Deliveries
// ---------------------------------------------------------------------------------------------

export interface DeliveryRow {
  integration_id: string;
  delivery_id: string;
  event: string;
  outcome: string;
  audit_id: string | null;
  response: Record<string, unknown>;
  received_at: Date;
}

export async function findDelivery(
  db: Knex,
  integrationId: string,
  deliveryId: string,
): Promise<DeliveryRow | undefined> {
  return db<DeliveryRow>('integration_deliveries')
    .where({ integration_id: integrationId, delivery_id: deliveryId })
    .first();
}

/** Records a delivery; false when one with its id was recorded first (a concurrent replay). */
export async function insertDelivery(
  db: Knex,
  row: Omit<DeliveryRow, 'received_at'>,
): Promise<boolean> {
  const rows = await db('integration_deliveries')
    .insert(row)
    .onConflict(['integration_id', 'delivery_id'])
    .ignore()
    .returning('delivery_id');
  return rows.length > 0;
}

export async function deleteDelivery(
  db: Knex,
  integrationId: string,
  deliveryId: string,
): Promise<void> {
  await db('integration_deliveries')
    .where({ integration_id: integrationId, delivery_id: deliveryId })
    .delete();
}

/** The latest deliveries, with where the publication of the audit each started stands. */
export async function recentDeliveries(
  db: Knex,
  integrationId: string,
  limit: number,
): Promise<
  Array<
    DeliveryRow & {
      publication_state: PublicationRow['state'] | null;
      publication_error: string | null;
    }
  >
> {
  return db('integration_deliveries as d')
    .leftJoin('integration_publications as p', 'p.audit_id', 'd.audit_id')
    .where('d.integration_id', integrationId)
    .select('d.*', 'p.state as publication_state', 'p.last_error as publication_error')
    .orderBy([
      { column: 'd.received_at', order: 'desc' },
      { column: 'd.delivery_id', order: 'desc' },
    ])
    .limit(limit);
}

// ---------------------------------------------------------------------------------------------
// Pull requests (GitLab: merge requests) and publications
// ---------------------------------------------------------------------------------------------

export interface ReviewRow {
  integration_id: string;
  number: number;
  state: 'open' | 'closed';
  head_sha: string | null;
  /** The branch the pull request merges into (its gate's baseline). */
  base_ref: string | null;
  comment_id: string | null;
  /** `merged` or `closed` while closed. */
  closed_reason: string | null;
  updated_at: Date;
}

export async function upsertReview(
  db: Knex,
  integrationId: string,
  number: number,
  fields:
    | { state: 'open'; head_sha: string; base_ref: string }
    | { state: 'closed'; closed_reason: 'merged' | 'closed' },
): Promise<void> {
  if (fields.state === 'open') Object.assign(fields, { closed_reason: null });
  await db('integration_reviews')
    .insert({ integration_id: integrationId, number, ...fields })
    .onConflict(['integration_id', 'number'])
    .merge({ ...fields, updated_at: db.fn.now() });
}

export async function findReview(
  db: Knex,
  integrationId: string,
  number: number,
  options: { forUpdate?: boolean } = {},
): Promise<ReviewRow | undefined> {
  const q = db<ReviewRow>('integration_reviews')
    .where({ integration_id: integrationId, number })
    .first();
  if (options.forUpdate) void q.forUpdate();
  return q;
}

export async function setReviewComment(
  db: Knex,
  integrationId: string,
  number: number,
  commentId: string | null,
): Promise<void> {
  await db('integration_reviews')
    .where({ integration_id: integrationId, number })
    .update({ comment_id: commentId, updated_at: db.fn.now() });
}

export interface PublicationRow {
  audit_id: string;
  integration_id: string;
  number: number | null;
  commit_sha: string;
  state: 'waiting' | 'publishing' | 'published' | 'failed';
  /** The pull request's target branch when the webhook came (the gate's baseline branch). */
  base_ref: string | null;
  /** Why the audit was withdrawn before its verdict (a newer head, the pull request closed). */
  withdrawn_reason: string | null;
  /** The GitHub check run reporting this audit, once created. */
  check_run_id: string | null;
  /** How many annotations the check run carries already (GitHub takes 50 per request). */
  check_annotations_sent: number;
  status_state: string | null;
  last_error: string | null;
  attempts: number;
  published_at: Date | null;
  created_at: Date;
}

export async function insertPublication(
  db: Knex,
  row: Pick<PublicationRow, 'audit_id' | 'integration_id' | 'number' | 'commit_sha' | 'base_ref'>,
): Promise<void> {
  await db('integration_publications').insert(row);
}

export async function publicationOf(
  db: Knex,
  auditId: string,
): Promise<PublicationRow | undefined> {
  return db<PublicationRow>('integration_publications').where({ audit_id: auditId }).first();
}

/** The publication, its row locked until the transaction ends (status posts are serialized). */
export async function lockPublication(
  trx: Knex,
  auditId: string,
): Promise<PublicationRow | undefined> {
  return trx<PublicationRow>('integration_publications')
    .where({ audit_id: auditId })
    .forUpdate()
    .first();
}

export async function updatePublication(
  db: Knex,
  auditId: string,
  fields: Partial<
    Pick<
      PublicationRow,
      | 'state'
      | 'status_state'
      | 'last_error'
      | 'published_at'
      | 'check_run_id'
      | 'check_annotations_sent'
    >
  > & {
    attempt?: true;
  },
): Promise<void> {
  const { attempt, ...rest } = fields;
  await db('integration_publications')
    .where({ audit_id: auditId })
    .update({ ...rest, ...(attempt ? { attempts: db.raw('attempts + 1') } : {}) });
}

/**
 * Marks withdrawn the publications of the pull request's audits still queued or running (all
 * but `keepAuditId`'s): they will publish `reason` instead of a verdict. Their audits, to cancel.
 */
export async function withdrawRunningAudits(
  trx: Knex,
  integrationId: string,
  number: number,
  reason: string,
  keepAuditId: string | null,
): Promise<Array<{ id: string; workflow_id: string | null; workspace_id: string }>> {
  const running = await trx('integration_publications as p')
    .join('audits as a', 'a.id', 'p.audit_id')
    .where({ 'p.integration_id': integrationId, 'p.number': number })
    .whereIn('a.status', ['queued', 'running'])
    .whereNull('p.withdrawn_reason')
    .modify((q) => {
      if (keepAuditId) void q.whereNot('p.audit_id', keepAuditId);
    })
    .forUpdate('p')
    .select('a.id', 'a.workflow_id', 'a.workspace_id');
  if (running.length)
    await trx('integration_publications')
      .whereIn(
        'audit_id',
        running.map((r: { id: string }) => r.id),
      )
      .update({ withdrawn_reason: reason });
  return running;
}

/** The pull request target branch an audit a webhook started is gated against, if any. */
export async function pullRequestBaseOf(db: Knex, auditId: string): Promise<string | null> {
  const row = await db('integration_publications').where({ audit_id: auditId }).first('base_ref');
  return (row?.base_ref as string | null | undefined) ?? null;
}

/** The publication of the pull request's newest head (what its comment shows). */
export async function headPublication(
  db: Knex,
  integrationId: string,
  number: number,
  headSha: string,
): Promise<PublicationRow | undefined> {
  return db<PublicationRow>('integration_publications')
    .where({ integration_id: integrationId, number, commit_sha: headSha })
    .orderBy('created_at', 'desc')
    .first();
}
