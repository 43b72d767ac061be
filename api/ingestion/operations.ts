/**
 * Evidence ingestion: batches of observations from outside the repository (runtime calls from
 * traces, cloud inventory, CI/CD runs), checked record by record, stored once per batch key and
 * reconciled by the repository's next audits (domain/architecture/ingested.ts).
 */
import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  findIngestion,
  findIngestionByKey,
  ingestionsQuery,
  insertIngestion,
  type IngestionRow,
  type NewIngestedRecord,
} from '../../db/ingestion';
import {
  INGESTED_KINDS,
  KIND_RULES,
  recordProblems,
  type IngestedKind,
} from '../../domain/architecture/ingested';
import { RepositoryParams } from '../repositories/schemas';
import { ApiError, problems } from '../errors';
import { defineOperation, ok, started, operationGroup, route } from '../registry/operation';
import { WorkspaceParams } from '../schema-kit';
import { iso } from '../shared';
import {
  EvidenceBatch,
  IngestionListQuery,
  IngestionPage,
  IngestionParams,
  IngestionResponse,
  type EvidenceRecord,
} from './schemas';
import { found, listOperation, recordedWrite } from '../registry/parts';
import { loadRepository } from '../registry/loads';
import { columns } from '../registry/columns';

function presentIngestion(row: IngestionRow): IngestionResponse {
  return {
    ...columns(row, ['id', 'workspace_id', 'repository_id', 'batch_key', 'content_sha256']),
    ...columns(row, ['record_count', 'counts', 'submitted_by']),
    created_at: iso(row.created_at),
  };
}

const sha256 = (value: unknown) =>
  crypto
    .createHash('sha256')
    .update(canonicalize(value) ?? '')
    .digest('hex');

function tooLarge(detail: string, limits: Record<string, number>): ApiError {
  return new ApiError({
    status: 413,
    code: 'batch_too_large',
    title: 'Payload too large',
    detail,
    hint: 'Split the records into several batches, each with its own batch_key.',
    extensions: limits,
  });
}

/** A record as stored: its evidence kind and a content hash of what was observed. */
function storedRecord(r: EvidenceRecord): NewIngestedRecord {
  const rule = KIND_RULES[r.kind as IngestedKind];
  const location = r.location ?? null;
  const observed = {
    kind: r.kind,
    provider: r.provider,
    source_type: r.source_type,
    subject_key: r.subject_key,
    object_key: r.object_key ?? null,
    observed_at: new Date(r.observed_at).toISOString(),
    location,
    attributes: r.attributes ?? {},
  };
  return {
    ...observed,
    evidence_kind: rule.evidence_kind,
    relationship_kind: rule.relationship_kind,
    summary:
      r.summary ??
      (r.object_key
        ? `${r.provider} observed ${r.subject_key} calling ${r.object_key}`
        : `${r.provider} observed ${r.subject_key} (${r.kind})`),
    content_sha256: sha256(observed),
  };
}

const ARCHITECTURE = operationGroup('Architecture');

export const ingestEvidence = defineOperation({
  operationId: 'ingestEvidence',
  ...route.post('/v1/workspaces/{workspace_id}/repositories/{repository_id}/evidence'),
  summary: 'Send a batch of evidence from outside the repository',
  description:
    "Runtime observations (`runtime_call`: A called B, from traces or a service mesh), cloud inventory records (`cloud_resource`) and CI/CD run records (`cicd_run`), each with provider, source_type, subject_key (and object_key for a call), observed_at and an optional location. Every record is checked and every problem is reported at once: 422 invalid_evidence_records with `errors` (a JSON pointer per problem) and `invalid_records` ({index, path, code, message}; codes unknown_kind, source_type_mismatch, invalid_key, object_key_required, object_key_not_allowed, observed_in_future). More than INGESTION_MAX_RECORDS records or INGESTION_MAX_BYTES bytes is 413 batch_too_large. Idempotent per `batch_key` within the repository: the same batch again answers the first result, another batch under the same key is 409 batch_key_conflict. The repository's next audits reconcile the records observed within INGESTED_EVIDENCE_WINDOW_DAYS: a runtime call corroborates a declared relationship (its confidence rises) or, when nothing declares it, opens an uncertainty case; evidence older than EVIDENCE_STALE_AFTER_DAYS is listed in the stale_evidence_ids of the assessments that use it.",
  ...ARCHITECTURE.scope('evidence:write'),
  params: RepositoryParams,
  body: EvidenceBatch,
  errors: [409, 422],
  success: started('The stored batch; the next audit reconciles it.', IngestionResponse),
  handler: async ({ db, params, body, principal, requestId, services, koa }) => {
    const { config } = services;
    const repo = await loadRepository(db, params.workspace_id, params.repository_id);
    const limits = {
      max_records: config.ingestionMaxRecords,
      max_bytes: config.ingestionMaxBytes,
    };
    if (body.records.length > config.ingestionMaxRecords)
      throw tooLarge(
        `The batch has ${body.records.length} records; at most ${config.ingestionMaxRecords} are accepted.`,
        limits,
      );
    const bytes = koa.request.length ?? Buffer.byteLength(JSON.stringify(body));
    if (bytes > config.ingestionMaxBytes)
      throw tooLarge(
        `The batch takes ${bytes} bytes; at most ${config.ingestionMaxBytes} are accepted.`,
        limits,
      );
    const wrong = recordProblems(
      body.records.map((r) => ({ ...r, object_key: r.object_key ?? null })),
      new Date(),
    );
    if (wrong.length > 0)
      throw new ApiError({
        status: 422,
        code: 'invalid_evidence_records',
        title: 'Invalid evidence records',
        detail: `${new Set(wrong.map((w) => w.index)).size} of ${body.records.length} records are invalid (indexes ${[...new Set(wrong.map((w) => w.index))].join(', ')}); nothing was stored.`,
        hint: `Correct the records listed in invalid_records (kinds: ${INGESTED_KINDS.join(', ')}) and send the batch again.`,
        errors: wrong.map((w) => ({ in: 'body' as const, path: w.path, message: w.message })),
        extensions: {
          invalid_record_indexes: [...new Set(wrong.map((w) => w.index))],
          invalid_records: wrong,
        },
      });
    const records = body.records.map(storedRecord);
    const contentSha = sha256(records.map((r) => r.content_sha256));
    const counts = Object.fromEntries(INGESTED_KINDS.map((k) => [k, 0]));
    for (const r of records) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    const same = (existing: IngestionRow) => {
      if (existing.content_sha256 !== contentSha)
        throw problems.conflict(
          'batch_key_conflict',
          `Batch ${JSON.stringify(body.batch_key)} of repository ${repo.id} was stored with other records (content_sha256 ${existing.content_sha256}).`,
          'Send a different batch under a new batch_key.',
          { ingestion_id: existing.id, content_sha256: existing.content_sha256 },
        );
      return existing;
    };
    const row = await db.transaction(async (trx) => {
      const existing = await findIngestionByKey(trx, repo.workspace_id, repo.id, body.batch_key);
      if (existing) return same(existing);
      const stored = await insertIngestion(
        trx,
        {
          workspace_id: repo.workspace_id,
          repository_id: repo.id,
          batch_key: body.batch_key,
          content_sha256: contentSha,
          record_count: records.length,
          counts,
          submitted_by: principal.memberId,
        },
        records,
      );
      if (!stored) return undefined;
      return recordedWrite(trx, principal, requestId, stored, {
        action: 'evidence.ingested',
        resourceType: 'evidence_ingestion',
        details: {
          repository_id: repo.id,
          batch_key: stored.batch_key,
          record_count: stored.record_count,
          counts,
          content_sha256: contentSha,
        },
      });
    });
    // A concurrent request stored the same key first: its result, if it is the same batch.
    const result =
      row ?? same((await findIngestionByKey(db, repo.workspace_id, repo.id, body.batch_key))!);
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/ingestions/${result.id}`);
    return presentIngestion(result);
  },
});

export const listIngestions = listOperation({
  operationId: 'listIngestions',
  ...route.get('/v1/workspaces/{workspace_id}/ingestions'),
  summary: 'List evidence ingestion batches',
  description: 'Newest first; `repository_id` narrows to one repository.',
  ...ARCHITECTURE.scope('ingestion:read'),
  params: WorkspaceParams,
  query: IngestionListQuery,
  success: ok('A page of batches.', IngestionPage),
  rows: ({ db, params, query }) => ingestionsQuery(db, params.workspace_id, query.repository_id),
  present: presentIngestion,
});

export const getIngestion = defineOperation({
  operationId: 'getIngestion',
  ...route.get('/v1/workspaces/{workspace_id}/ingestions/{ingestion_id}'),
  summary: 'An evidence ingestion batch',
  ...ARCHITECTURE.scope('ingestion:read'),
  params: IngestionParams,
  success: ok('The batch.', IngestionResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findIngestion(db, params.workspace_id, params.ingestion_id),
      `Ingestion ${params.ingestion_id}`,
    );
    return presentIngestion(row);
  },
});
