/** Audit comparisons: two audits of one repository, compared once and stored with a content hash. */
import crypto from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Knex } from 'knex';
import { snapshotOfAudit } from '../../db/architecture';
import { type AuditRow } from '../../db/audits';
import {
  comparisonsQuery,
  findComparison,
  findingsOfAudit,
  insertComparison,
  type ComparisonRow,
} from '../../db/comparisons';
import type { GraphItem } from '../../domain/changes/diff';
import { compareAudits, contentSha256, type ComparedAudit } from '../../domain/comparisons/compare';
import { problems } from '../errors';
import { defineOperation, created, ok, operationGroup, route } from '../registry/operation';
import { pageFields, Uuid, WorkspaceParams } from '../schema-kit';
import { iso, isoOrNull, recordPrincipalWrite } from '../shared';
import {
  AuditComparisonCreate,
  AuditComparisonPage,
  AuditComparisonResponse,
  type AuditComparisonResult,
} from './schemas';
import { found, listOperation } from '../registry/parts';
import { loadAudit } from '../registry/loads';

async function comparedAudit(db: Knex, audit: AuditRow): Promise<ComparedAudit> {
  const snapshot = await snapshotOfAudit(db, audit.id);
  return {
    id: audit.id,
    status: audit.status,
    commit_sha: audit.commit_sha,
    completed_at: isoOrNull(audit.completed_at),
    scanner_only: audit.scanner_only,
    source_scope: audit.source_scope ?? {},
    snapshot: snapshot
      ? {
          entities: snapshot.entities as unknown as GraphItem[],
          relationships: snapshot.relationships as unknown as GraphItem[],
          sources: snapshot.sources,
          source_coverage: snapshot.source_coverage,
        }
      : null,
    findings: await findingsOfAudit(db, audit.id),
  };
}

function present(row: ComparisonRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    repository_id: row.repository_id,
    content_sha256: row.content_sha256,
    snapshot: row.result as unknown as AuditComparisonResult,
    created_at: iso(row.created_at),
  };
}

const ComparisonParams = Type.Object(
  {
    workspace_id: Uuid({ description: 'The workspace.' }),
    comparison_id: Uuid({ description: 'The comparison.' }),
  },
  { additionalProperties: false },
);

const COMPARISONS = operationGroup('Comparisons');

export const createAuditComparison = defineOperation({
  operationId: 'createAuditComparison',
  ...route.post('/v1/workspaces/{workspace_id}/audit-comparisons'),
  summary: 'Compare two audits of one repository',
  description:
    'Findings by fingerprint (added, resolved, changed severity, unchanged), the architecture differences between the two snapshots, counts, whether coverage and architecture are comparable, and the limitations (a side not completed or without a snapshot, a source type a side did not read, scanner-only audits, different source scopes). `content_sha256` is the SHA-256 of the RFC 8785 canonical JSON of `snapshot`: the same two audits always give the same hash. Audits of different repositories (or an upload audit) are 422 audits_not_comparable.',
  ...COMPARISONS.scope('audits:read'),
  params: WorkspaceParams,
  body: AuditComparisonCreate,
  errors: [422],
  success: created('The stored comparison.', AuditComparisonResponse),
  handler: async ({ db, params, body, principal, requestId, koa }) => {
    const baseline = await loadAudit(db, params.workspace_id, body.baseline_audit_id);
    const candidate = await loadAudit(db, params.workspace_id, body.candidate_audit_id);
    if (!baseline.repository_id || baseline.repository_id !== candidate.repository_id)
      throw problems.unprocessable(
        'audits_not_comparable',
        `Audits ${baseline.id} and ${candidate.id} are not audits of the same repository.`,
        'Compare two audits of one registered repository (listAudits?repository_id=... lists them).',
      );
    const result = compareAudits(
      await comparedAudit(db, baseline),
      await comparedAudit(db, candidate),
    );
    const id = crypto.randomUUID();
    const row = await db.transaction(async (trx) => {
      const stored = await insertComparison(trx, {
        id,
        workspace_id: params.workspace_id,
        repository_id: baseline.repository_id!,
        baseline_audit_id: baseline.id,
        candidate_audit_id: candidate.id,
        content_sha256: contentSha256(result),
        coverage_comparable: result.coverage_comparable,
        counts: result.counts,
        result,
        created_by: principal.memberId,
      });
      await recordPrincipalWrite(trx, principal, requestId, {
        action: 'audit_comparison.created',
        resourceType: 'audit_comparison',
        resourceId: id,
        details: { baseline_audit_id: baseline.id, candidate_audit_id: candidate.id },
      });
      return stored;
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/audit-comparisons/${id}`);
    return present(row);
  },
});

export const listAuditComparisons = listOperation({
  operationId: 'listAuditComparisons',
  ...route.get('/v1/workspaces/{workspace_id}/audit-comparisons'),
  summary: "List the workspace's audit comparisons, newest first",
  ...COMPARISONS.scope('audits:read'),
  params: WorkspaceParams,
  query: Type.Object(
    {
      repository_id: Type.Optional(Uuid({ description: 'Only comparisons of this repository.' })),
      ...pageFields(),
    },
    { additionalProperties: false },
  ),
  success: ok('A page of comparisons.', AuditComparisonPage),
  rows: ({ db, params, query }) => comparisonsQuery(db, params.workspace_id, query.repository_id),
  present: (r) => ({
    id: r.id,
    repository_id: r.repository_id,
    baseline_audit_id: r.baseline_audit_id,
    candidate_audit_id: r.candidate_audit_id,
    content_sha256: r.content_sha256,
    created_at: iso(r.created_at),
    coverage_comparable: r.coverage_comparable,
    counts: r.counts,
  }),
});

export const getAuditComparison = defineOperation({
  operationId: 'getAuditComparison',
  ...route.get('/v1/workspaces/{workspace_id}/audit-comparisons/{comparison_id}'),
  summary: 'An audit comparison',
  ...COMPARISONS.scope('audits:read'),
  params: ComparisonParams,
  success: ok('The comparison.', AuditComparisonResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findComparison(db, params.workspace_id, params.comparison_id),
      `Audit comparison ${params.comparison_id}`,
    );
    return present(row);
  },
});
