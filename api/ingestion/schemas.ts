/** Evidence ingestion: batches of evidence from outside the repository. */
import { Type, type Static } from '@sinclair/typebox';
import { INGESTED_KINDS } from '../../domain/architecture/ingested';
import { DateTime, FreeObject, Nullable, pageFields, Strict, Uuid } from '../schema-kit';
import { CursorPage, ResourceParams, WorkspaceRecord } from '../schema-parts';

const Key = (description: string) => Type.String({ minLength: 3, maxLength: 500, description });

export const EvidenceRecord = Strict(
  'EvidenceRecord',
  {
    kind: Type.String({
      minLength: 1,
      maxLength: 50,
      description: `${INGESTED_KINDS.join(', ')}: a call observed at run time (traces, service mesh), a resource in a cloud inventory, a CI/CD pipeline run. Another kind is refused (unknown_kind).`,
    }),
    provider: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'What observed it: `opentelemetry`, `aws-config`, `github-actions`...',
    }),
    source_type: Type.Union([Type.Literal('cloud'), Type.Literal('cicd')], {
      description: 'cloud for runtime_call and cloud_resource, cicd for cicd_run.',
    }),
    subject_key: Key('The entity observed (the caller of a runtime_call): `<kind>:<name>`.'),
    object_key: Type.Optional(
      Nullable(Key('The entity called (runtime_call only): `<kind>:<name>`.')),
    ),
    observed_at: DateTime({ description: 'When it was observed (at most 5 minutes ahead).' }),
    location: Type.Optional(
      Nullable(
        Strict(
          'EvidenceRecordLocation',
          {
            path: Type.String({
              minLength: 1,
              maxLength: 1000,
              description: 'Where the observation can be found: a file, a trace URL, an ARN.',
            }),
            start_line: Type.Optional(Type.Integer({ minimum: 1 })),
            end_line: Type.Optional(Type.Integer({ minimum: 1 })),
          },
          { description: 'Where the record comes from.' },
        ),
      ),
    ),
    summary: Type.Optional(Type.String({ maxLength: 1000 })),
    attributes: Type.Optional(FreeObject({ description: 'Further facts (counts, latency...).' })),
  },
  { description: 'One observation from outside the repository.' },
);

export const EvidenceBatch = Strict(
  'EvidenceBatch',
  {
    batch_key: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9._:/-]+$',
      description:
        'Names the batch within the repository: sending the same batch again returns the first result; another batch under the same key is 409 batch_key_conflict.',
    }),
    records: Type.Array(EvidenceRecord, {
      minItems: 1,
      description: 'At most INGESTION_MAX_RECORDS records and INGESTION_MAX_BYTES bytes of JSON.',
    }),
  },
  { description: 'A batch of evidence from outside the repository.' },
);

export const IngestionResponse = Strict(
  'IngestionResponse',
  {
    ...WorkspaceRecord,
    repository_id: Uuid(),
    batch_key: Type.String(),
    content_sha256: Type.String({ description: "SHA-256 of the batch's canonical JSON." }),
    record_count: Type.Integer({ minimum: 1 }),
    counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'Records by kind.',
    }),
    submitted_by: Uuid(),
    created_at: DateTime(),
  },
  {
    description:
      "A stored batch. The repository's next audits reconcile its records observed within INGESTED_EVIDENCE_WINDOW_DAYS.",
  },
);

export const IngestionPage = CursorPage('IngestionPage', IngestionResponse);

export const IngestionParams = ResourceParams('ingestion_id', 'The ingestion batch.');

export const IngestionListQuery = Type.Object(
  {
    repository_id: Type.Optional(Uuid({ description: 'Only batches of this repository.' })),
    ...pageFields(),
  },
  { additionalProperties: false },
);

// The static types of the schemas that code elsewhere names.
export type EvidenceRecord = Static<typeof EvidenceRecord>;
export type IngestionResponse = Static<typeof IngestionResponse>;
