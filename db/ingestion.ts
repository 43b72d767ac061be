/**
 * Evidence ingestion: batches of evidence from outside the repository (runtime observations,
 * cloud inventory, CI/CD runs), one row per batch (unique per repository and batch key) and one
 * per record. An audit's reconcile reads the repository's records observed within its window.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { IngestedRecord } from '../domain/architecture/ingested';
import { keyset, type Keyset } from './paginate';

export interface IngestionRow {
  id: string;
  workspace_id: string;
  repository_id: string;
  batch_key: string;
  content_sha256: string;
  record_count: number;
  counts: Record<string, number>;
  submitted_by: string;
  created_at: Date;
}

export type NewIngestedRecord = Omit<IngestedRecord, 'id' | 'ingestion_id' | 'observed_at'> & {
  observed_at: string;
};

export async function findIngestionByKey(
  db: Knex,
  workspaceId: string,
  repositoryId: string,
  batchKey: string,
): Promise<IngestionRow | undefined> {
  return db<IngestionRow>('evidence_ingestions')
    .where({ workspace_id: workspaceId, repository_id: repositoryId, batch_key: batchKey })
    .first();
}

/**
 * Stores a batch and its records; undefined when a batch with the same key exists already (a
 * concurrent request stored it first).
 */
export async function insertIngestion(
  db: Knex,
  batch: Omit<IngestionRow, 'id' | 'created_at'>,
  records: readonly NewIngestedRecord[],
): Promise<IngestionRow | undefined> {
  const [row] = await db('evidence_ingestions')
    .insert({ id: crypto.randomUUID(), ...batch, counts: JSON.stringify(batch.counts) })
    .onConflict(['workspace_id', 'repository_id', 'batch_key'])
    .ignore()
    .returning('*');
  if (!row) return undefined;
  const encoded = records.map((r, position) => ({
    ...r,
    id: crypto.randomUUID(),
    ingestion_id: row.id,
    workspace_id: batch.workspace_id,
    repository_id: batch.repository_id,
    position,
    location: r.location === null ? null : JSON.stringify(r.location),
    attributes: JSON.stringify(r.attributes),
  }));
  for (let i = 0; i < encoded.length; i += 500)
    await db('ingested_evidence').insert(encoded.slice(i, i + 500));
  return row as IngestionRow;
}

export async function findIngestion(
  db: Knex,
  workspaceId: string,
  id: string,
): Promise<IngestionRow | undefined> {
  return db<IngestionRow>('evidence_ingestions').where({ workspace_id: workspaceId, id }).first();
}

export function ingestionsQuery(
  db: Knex,
  workspaceId: string,
  repositoryId?: string,
): Keyset<IngestionRow> {
  const q = db('evidence_ingestions')
    .select('evidence_ingestions.*')
    .where('evidence_ingestions.workspace_id', workspaceId);
  if (repositoryId) q.andWhere('evidence_ingestions.repository_id', repositoryId);
  return keyset(q, 'evidence_ingestions');
}

/** A repository's records observed in [since, until], oldest first. */
export async function ingestedEvidenceOf(
  db: Knex,
  repositoryId: string,
  since: Date,
  until: Date,
): Promise<IngestedRecord[]> {
  const rows = await db('ingested_evidence')
    .where({ repository_id: repositoryId })
    .andWhere('observed_at', '>=', since)
    .andWhere('observed_at', '<=', until)
    .orderBy([{ column: 'observed_at' }, { column: 'id' }])
    .select(
      'id',
      'ingestion_id',
      'kind',
      'source_type',
      'provider',
      'evidence_kind',
      'subject_key',
      'relationship_kind',
      'object_key',
      'location',
      'summary',
      'attributes',
      'content_sha256',
      'observed_at',
    );
  return rows.map((r) => ({ ...r, observed_at: (r.observed_at as Date).toISOString() }));
}

/** Of a snapshot's evidence, the ids observed before `cutoff`. */
export async function evidenceObservedBefore(
  db: Knex,
  snapshotId: string,
  cutoff: Date,
): Promise<Set<string>> {
  const rows = await db('architecture_evidence')
    .where({ snapshot_id: snapshotId })
    .andWhere('observed_at', '<', cutoff)
    .select('id');
  return new Set(rows.map((r: { id: string }) => r.id));
}
