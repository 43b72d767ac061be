/**
 * Uncertainty cases: what an audit could not settle about the architecture. The reconcile stage
 * opens and updates them (activities/uncertainty); people assign, investigate, resolve or
 * dismiss them here.
 */
import { keysetPage } from '../../db/paginate';
import { caseCounts, casesQuery, findCase, updateCase } from '../../db/uncertainty';
import { findMember } from '../../db/workspaces';
import { casePatch } from '../../domain/uncertainty/rules';
import { problems } from '../errors';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { WorkspaceParams } from '../schema-kit';
import { pageRequest } from '../shared';
import { presentCase } from './present';
import {
  ArchitectureUncertaintyCasePage,
  ArchitectureUncertaintyCaseResponse,
  ArchitectureUncertaintyCaseUpdate,
  UncertaintyCaseListQuery,
  UncertaintyCaseParams,
} from './schemas';
import { found, recordedWrite } from '../registry/parts';

const UNCERTAINTY = operationGroup('Uncertainty');

export const listUncertaintyCases = defineOperation({
  operationId: 'listUncertaintyCases',
  ...route.get('/v1/workspaces/{workspace_id}/uncertainty-cases'),
  summary: 'List uncertainty cases',
  description:
    'Newest first. `open_count` (open or investigating), `blocking_count` (of those, blocking) and ' +
    '`unassigned_count` (of those, without owner) count the whole filtered set, not the page. ' +
    'When more cases follow, the response carries `Link: <...&cursor=...>; rel="next"`.',
  ...UNCERTAINTY.scope('findings:read'),
  params: WorkspaceParams,
  query: UncertaintyCaseListQuery,
  success: {
    status: 200,
    description: 'A page of uncertainty cases with counts.',
    schema: ArchitectureUncertaintyCasePage,
    headers: {
      Link: {
        description:
          'RFC 8288 link to the next page (`rel="next"`), present only when more items follow.',
      },
    },
  },
  handler: async ({ db, params, query, koa }) => {
    const filter = {
      state: query.state,
      repositoryId: query.repository_id,
      blocking: query.blocking,
    };
    const page = await keysetPage(casesQuery(db, params.workspace_id, filter), pageRequest(query));
    if (page.next_cursor) {
      const next = new URLSearchParams();
      for (const [k, v] of Object.entries(query))
        if (v !== undefined && k !== 'cursor') next.set(k, String(v));
      next.set('cursor', page.next_cursor);
      koa.set(
        'Link',
        `</v1/workspaces/${params.workspace_id}/uncertainty-cases?${next.toString()}>; rel="next"`,
      );
    }
    const counts = await caseCounts(db, params.workspace_id, filter);
    return { items: page.items.map(presentCase), ...counts };
  },
});

export const getUncertaintyCase = defineOperation({
  operationId: 'getUncertaintyCase',
  ...route.get('/v1/workspaces/{workspace_id}/uncertainty-cases/{case_id}'),
  summary: 'Get an uncertainty case',
  ...UNCERTAINTY.scope('findings:read'),
  params: UncertaintyCaseParams,
  success: ok('The uncertainty case.', ArchitectureUncertaintyCaseResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findCase(db, params.workspace_id, params.case_id),
      `Uncertainty case ${params.case_id}`,
    );
    return presentCase(row);
  },
});

export const updateUncertaintyCase = defineOperation({
  operationId: 'updateUncertaintyCase',
  ...route.patch('/v1/workspaces/{workspace_id}/uncertainty-cases/{case_id}'),
  summary: 'Assign, investigate, resolve or dismiss an uncertainty case',
  description:
    '`owner_id` must be a member of the workspace (null unassigns). Moving to `resolved` or ' +
    '`dismissed` needs a `resolution_summary` and sets `resolved_at`; moving back to `open` or ' +
    '`investigating` clears both. An omitted or null `state` keeps the state.',
  ...UNCERTAINTY.scope('findings:write'),
  params: UncertaintyCaseParams,
  body: ArchitectureUncertaintyCaseUpdate,
  success: ok('The changed uncertainty case.', ArchitectureUncertaintyCaseResponse),
  handler: async ({ db, params, body, principal, requestId }) => {
    if (Object.keys(body).length === 0) {
      throw problems.validationFailed([
        {
          in: 'body',
          path: '',
          message: 'must set at least one of owner_id, state, resolution_summary',
        },
      ]);
    }
    const row = await db.transaction(async (trx) => {
      const before = await found(
        findCase(trx, params.workspace_id, params.case_id, { forUpdate: true }),
        `Uncertainty case ${params.case_id}`,
      );
      if (body.owner_id && !(await findMember(trx, params.workspace_id, body.owner_id))) {
        throw problems.validationFailed([
          { in: 'body', path: '/owner_id', message: 'is not a member of this workspace' },
        ]);
      }
      const change = casePatch(before, body, new Date());
      if ('problem' in change) throw problems.validationFailed([{ in: 'body', ...change.problem }]);
      const after = (await updateCase(trx, params.workspace_id, before.id, change.patch))!;
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      for (const k of ['owner_id', 'state', 'resolution_summary'] as const) {
        if (before[k] !== after[k]) changes[k] = { from: before[k], to: after[k] };
      }
      return recordedWrite(trx, principal, requestId, after, {
        action: 'uncertainty_case.updated',
        details: { subject_key: after.subject_key, reason: after.reason, changes },
      });
    });
    return presentCase(row);
  },
});
