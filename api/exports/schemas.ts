/** Audit exports: one format of an audit rendered into a downloadable file. */
import { Type, type Static } from '@sinclair/typebox';
import { EXPORT_STATUSES } from '../../db/exports';
import { EXPORT_FORMATS } from '../../domain/exports/render';
import { DateTime, LiteralUnion, Nullable, pageFields, Strict, Uuid } from '../schema-kit';
import { CursorPage, ResourceParams, WorkspaceRecord } from '../schema-parts';

export const ExportCreate = Strict(
  'ExportCreate',
  {
    format: LiteralUnion(EXPORT_FORMATS, {
      description:
        'structurizr: a Structurizr DSL workspace; backstage: a Backstage catalog-info.yaml; madr: the repository decisions as MADR files (tar.gz); mermaid and svg: the architecture diagram; sarif: SARIF 2.1.0 of the findings; junit: JUnit XML of the controls.',
    }),
    retention_days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 365,
        description: 'How long the file is kept once rendered (default EXPORT_RETENTION_DAYS).',
      }),
    ),
  },
  { description: 'Which format of the audit to render.' },
);

export const ExportResponse = Strict(
  'ExportResponse',
  {
    ...WorkspaceRecord,
    audit_id: Uuid(),
    format: LiteralUnion(EXPORT_FORMATS),
    status: LiteralUnion(EXPORT_STATUSES, {
      description:
        'queued -> running -> available (downloadable until retained_until) | failed; available -> expired (removed by the retention sweep).',
    }),
    filename: Type.String(),
    content_type: Type.String(),
    sha256: Nullable(Type.String({ description: 'SHA-256 (hex) of the file, once rendered.' })),
    size_bytes: Nullable(Type.Integer({ minimum: 0 })),
    retention_days: Type.Integer({ minimum: 1, maximum: 365 }),
    retained_until: Nullable(DateTime()),
    error_code: Nullable(Type.String()),
    requested_by: Uuid(),
    workflow_id: Type.String({ description: 'The ExportWorkflow rendering it.' }),
    created_at: DateTime(),
    completed_at: Nullable(DateTime()),
    removed_at: Nullable(DateTime()),
  },
  { description: 'An export of an audit and the state of its file.' },
);

export const ExportPage = CursorPage('ExportPage', ExportResponse);

export const ExportParams = ResourceParams('export_id', 'The export.');

export const ExportListQuery = Type.Object({ ...pageFields() }, { additionalProperties: false });

// The static types of the schemas that code elsewhere names.
export type ExportResponse = Static<typeof ExportResponse>;
