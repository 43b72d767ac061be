/** Change sets: declared candidates, the observed sets audits record, and reconciling the two. */
import crypto from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { DependencyGraph } from '../../analysis/dependencies';
import { findSnapshotOfRepository, latestSnapshot } from '../../db/architecture';
import {
  changeSetsQuery,
  findChangeSet,
  insertChangeSet,
  latestObservedSince,
  recordReconciliation,
  type ChangeSetRow,
} from '../../db/change-sets';
import { keysetPage } from '../../db/paginate';
import {
  accuracyOf,
  changeProblems,
  impactOf,
  type NormalizedChange,
} from '../../domain/changes/change-sets';
import { CHANGE_SET_STATES } from '../../domain/contract/values';
import { problems } from '../errors';
import { defineOperation, created, ok, operationGroup, route } from '../registry/operation';
import { RepositoryParams } from '../repositories/schemas';
import { LiteralUnion, pageFields } from '../schema-kit';
import { iso, pageRequest } from '../shared';
import {
  ArchitectureChangeSetPage,
  ArchitectureChangeSetReconcile,
  ArchitectureChangeSetResponse,
  ChangeSetCreate,
  ChangeSetParams,
} from './schemas';
import { found, recordedWrite } from '../registry/parts';
import { loadRepository } from '../registry/loads';
import { columns, isoColumns } from '../registry/columns';

function present(row: ChangeSetRow): ArchitectureChangeSetResponse {
  return {
    ...columns(row, ['id', 'workspace_id', 'repository_id', 'state', 'change_key', 'source_ref']),
    ...columns(row, [
      'trigger',
      'reason',
      'actor_id',
      'baseline_snapshot_id',
      'result_snapshot_id',
    ]),
    reconciled_change_set_id: row.reconciled_change_set_id,
    normalized_changes:
      row.normalized_changes as ArchitectureChangeSetResponse['normalized_changes'],
    candidate_payload: row.candidate_payload,
    impact_result: row.impact_result,
    gate_result: row.gate_result as ArchitectureChangeSetResponse['gate_result'],
    accuracy: row.accuracy as ArchitectureChangeSetResponse['accuracy'],
    closed_at: row.closed_at ? iso(row.closed_at) : null,
    closed_reason: row.closed_reason as ArchitectureChangeSetResponse['closed_reason'],
    ...isoColumns(row, ['occurred_at', 'created_at', 'updated_at']),
  };
}

const ARCHITECTURE = operationGroup('Architecture');

export const listChangeSets = defineOperation({
  operationId: 'listChangeSets',
  ...route.get('/v1/workspaces/{workspace_id}/repositories/{repository_id}/change-sets'),
  summary: "A repository's change sets, newest first",
  description:
    'Candidates are declared through createChangeSet; each audit with an earlier snapshot to compare with records one observed set (`change_key` `audit:<audit id>`). The next page is in the `Link` header.',
  ...ARCHITECTURE.scope('audits:read'),
  params: RepositoryParams,
  query: Type.Object(
    { state: Type.Optional(LiteralUnion(CHANGE_SET_STATES)), ...pageFields() },
    { additionalProperties: false },
  ),
  success: {
    status: 200,
    description: 'A page of change sets.',
    schema: ArchitectureChangeSetPage,
    headers: { Link: { description: 'The next page (rel="next"), when there is one.' } },
  },
  handler: async ({ db, params, query, koa }) => {
    const repo = await loadRepository(db, params.workspace_id, params.repository_id);
    const page = await keysetPage(
      changeSetsQuery(db, params.workspace_id, repo.id, query.state),
      pageRequest(query),
    );
    if (page.next_cursor) {
      const next = new URLSearchParams();
      if (query.state) next.set('state', query.state);
      next.set('limit', String(query.limit ?? 50));
      next.set('cursor', page.next_cursor);
      koa.set(
        'Link',
        `</v1/workspaces/${params.workspace_id}/repositories/${repo.id}/change-sets?${next}>; rel="next"`,
      );
    }
    return { items: page.items.map(present) };
  },
});

export const createChangeSet = defineOperation({
  operationId: 'createChangeSet',
  ...route.post('/v1/workspaces/{workspace_id}/repositories/{repository_id}/change-sets'),
  summary: 'Declare a candidate change set',
  description:
    "Declared intent (a pull request, an IaC plan) as normalized changes in the graph's canonical keys (`<kind>:<name>` for entities, `<kind>:<entity key>-><entity key>` for relationships): a key in another form is 400 naming it. `change_key` is unique per repository among candidates (409 conflict). Reconcile it with the observed set of the audit that ran the change (reconcileChangeSet).",
  ...ARCHITECTURE.scope('evidence:write'),
  params: RepositoryParams,
  body: ChangeSetCreate,
  idempotent: true,
  errors: [409],
  success: created('The candidate.', ArchitectureChangeSetResponse),
  handler: async ({ db, params, body, principal, requestId, koa }) => {
    const repo = await loadRepository(db, params.workspace_id, params.repository_id);
    const changes = body.changes as NormalizedChange[];
    const wrong = changeProblems(changes);
    if (wrong.length > 0)
      throw problems.validationFailed(
        wrong.map((w) => ({ in: 'body', path: w.pointer, message: w.message })),
      );
    let baseline: string | null = null;
    if (body.baseline_snapshot_id) {
      const snap = await findSnapshotOfRepository(
        db,
        params.workspace_id,
        repo.id,
        body.baseline_snapshot_id,
      );
      if (!snap)
        throw problems.notFound(`Snapshot ${body.baseline_snapshot_id} of repository ${repo.id}`);
      baseline = snap.id;
    } else baseline = (await latestSnapshot(db, params.workspace_id, repo.id))?.id ?? null;
    const id = crypto.randomUUID();
    const row = await db.transaction(async (trx) => {
      const created = await insertChangeSet(trx, {
        id,
        workspace_id: params.workspace_id,
        repository_id: repo.id,
        state: 'candidate',
        change_key: body.change_key,
        source_ref: body.source_ref,
        trigger: body.trigger,
        reason: body.reason,
        actor_id: principal.memberId,
        audit_id: null,
        baseline_snapshot_id: baseline,
        result_snapshot_id: null,
        reconciled_change_set_id: null,
        normalized_changes: changes as unknown as Array<Record<string, unknown>>,
        candidate_payload: body.candidate_payload ?? null,
        impact_result: null,
        gate_result: null,
        accuracy: null,
        occurred_at: new Date(),
      });
      if (!created)
        throw problems.conflict(
          'conflict',
          `Repository ${repo.id} already has a candidate change set with change_key ${JSON.stringify(body.change_key)}.`,
          'Use another change_key, or read the existing set (listChangeSets?state=candidate).',
        );
      return recordedWrite(trx, principal, requestId, created, {
        action: 'change_set.created',
        details: { change_key: body.change_key, changes: changes.length },
      });
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/change-sets/${id}`);
    return present(row);
  },
});

export const getChangeSet = defineOperation({
  operationId: 'getChangeSet',
  ...route.get('/v1/workspaces/{workspace_id}/change-sets/{change_set_id}'),
  summary: 'A change set',
  ...ARCHITECTURE.scope('audits:read'),
  params: ChangeSetParams,
  success: ok('The change set.', ArchitectureChangeSetResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findChangeSet(db, params.workspace_id, params.change_set_id),
      `Change set ${params.change_set_id}`,
    );
    return present(row);
  },
});

export const reconcileChangeSet = defineOperation({
  operationId: 'reconcileChangeSet',
  ...route.post('/v1/workspaces/{workspace_id}/change-sets/{change_set_id}/reconcile'),
  summary: 'Reconcile a candidate change set with what an audit observed',
  description:
    "Matches the candidate's declared changes with an observed set by change type and key: `accuracy` counts what was declared and happened (matched), declared and did not happen (unexpected) and happened undeclared (missed), with precision and recall; `impact_result` holds the dependency paths of every changed entity in the observed result snapshot; `gate_result` is the observed set's gate. Without `observed_change_set_id` the newest observed set of the repository created since the candidate is used. Reconciling again with the same observed set answers the same result; the candidate is 409 when it is an observed set (`change_set_not_candidate`), already reconciled with another set (`already_reconciled`), or has no observed set yet (`no_observed_change_set`); an observed set of another repository is 422 `change_set_repository_mismatch`.",
  ...ARCHITECTURE.scope('evidence:write'),
  params: ChangeSetParams,
  body: ArchitectureChangeSetReconcile,
  errors: [409, 422],
  success: ok('The reconciled candidate.', ArchitectureChangeSetResponse),
  handler: async ({ db, params, body, principal, requestId }) => {
    const row = await db.transaction(async (trx) => {
      const candidate = await found(
        findChangeSet(trx, params.workspace_id, params.change_set_id, true),
        `Change set ${params.change_set_id}`,
      );
      if (candidate.state !== 'candidate')
        throw problems.conflict(
          'change_set_not_candidate',
          `Change set ${candidate.id} is an observed set; only candidates are reconciled.`,
          'Reconcile the candidate change set, naming this one as observed_change_set_id.',
        );
      let observed: ChangeSetRow | undefined;
      if (body.observed_change_set_id) {
        observed = await findChangeSet(trx, params.workspace_id, body.observed_change_set_id);
        if (!observed) throw problems.notFound(`Change set ${body.observed_change_set_id}`);
        if (observed.state !== 'observed')
          throw problems.conflict(
            'change_set_not_observed',
            `Change set ${observed.id} is a candidate, not an observed set.`,
            'Name an observed set (listChangeSets?state=observed).',
          );
        if (observed.repository_id !== candidate.repository_id)
          throw problems.unprocessable(
            'change_set_repository_mismatch',
            `Observed set ${observed.id} belongs to another repository than candidate ${candidate.id}.`,
            'Reconcile sets of the same repository.',
          );
      } else {
        observed = await latestObservedSince(trx, candidate.repository_id, candidate.created_at);
        if (!observed)
          throw problems.conflict(
            'no_observed_change_set',
            `No audit of repository ${candidate.repository_id} has observed changes since candidate ${candidate.id} was declared.`,
            'Audit the commit that carries the change, then reconcile again.',
          );
      }
      if (candidate.reconciled_change_set_id) {
        if (candidate.reconciled_change_set_id === observed.id) return candidate;
        throw problems.conflict(
          'already_reconciled',
          `Candidate ${candidate.id} is already reconciled with observed set ${candidate.reconciled_change_set_id}.`,
          'Declare a new candidate for another change.',
        );
      }
      const declared = candidate.normalized_changes as unknown as NormalizedChange[];
      const happened = observed.normalized_changes as unknown as NormalizedChange[];
      const result = observed.result_snapshot_id
        ? await findSnapshotOfRepository(
            trx,
            params.workspace_id,
            candidate.repository_id,
            observed.result_snapshot_id,
          )
        : undefined;
      const updated = await recordReconciliation(trx, candidate.id, {
        reconciled_change_set_id: observed.id,
        accuracy: accuracyOf(declared, happened),
        impact_result: result
          ? impactOf(result as unknown as DependencyGraph, [...declared, ...happened])
          : null,
        gate_result: observed.gate_result,
      });
      return recordedWrite(trx, principal, requestId, updated, {
        action: 'change_set.reconciled',
        details: { observed_change_set_id: observed.id, accuracy: updated.accuracy },
      });
    });
    return present(row);
  },
});
