/** Control exceptions: waive one control for a workspace, a repository or one entity, until a date. */
import crypto from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { CONTROLS } from '../../analysis/controls';
import {
  exceptionsQuery,
  findException,
  insertException,
  revokeException,
  type ExceptionRow,
} from '../../db/exceptions';
import { findRepository } from '../../db/repositories';
import { isEntityKey, isRelationshipKey } from '../../domain/changes/change-sets';
import { exceptionState } from '../../domain/controls/exceptions';
import { problems, type FieldError } from '../errors';
import { defineOperation, created, ok, operationGroup, route } from '../registry/operation';
import { LiteralUnion, pageFields, Uuid, WorkspaceParams } from '../schema-kit';
import { iso, isoOrNull, recordPrincipalWrite } from '../shared';
import {
  ControlExceptionCreate,
  ControlExceptionPage,
  ControlExceptionParams,
  ControlExceptionResponse,
} from './schemas';
import { found, listOperation, recordedWrite } from '../registry/parts';

const MAX_DAYS = 366;
const CONTROL_KEYS = new Set(CONTROLS.map((c) => c.key));

function present(row: ExceptionRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    control_key: row.control_key,
    scope: row.scope,
    repository_id: row.repository_id,
    subject_key: row.subject_key,
    reason: row.reason,
    expires_at: iso(row.expires_at),
    state: exceptionState(row, new Date()),
    created_by: row.created_by,
    created_at: iso(row.created_at),
    revoked_at: isoOrNull(row.revoked_at),
    revoked_by: row.revoked_by,
  };
}

const POLICIES = operationGroup('Policies');

export const createControlException = defineOperation({
  operationId: 'createControlException',
  ...route.post('/v1/workspaces/{workspace_id}/control-exceptions'),
  summary: 'Waive a control for a scope until a date',
  description:
    'Applies from the next audit on: an assessment it covers keeps its status, carries `exception_id`, and does not fail the change gate. `expires_at` is mandatory, in the future and at most 366 days ahead; `repository` and `entity` scopes name `repository_id`, `entity` also a canonical `subject_key`. Recorded as an audit event.',
  ...POLICIES.scope('policies:write'),
  params: WorkspaceParams,
  body: ControlExceptionCreate,
  success: created('The exception.', ControlExceptionResponse),
  handler: async ({ db, params, body, principal, requestId, koa }) => {
    const scope = body.scope ?? 'workspace';
    const errors: FieldError[] = [];
    const at = (path: string, message: string) => errors.push({ in: 'body', path, message });
    if (!CONTROL_KEYS.has(body.control_key))
      at(
        '/control_key',
        `is not a control of the catalog (${[...CONTROL_KEYS].sort().join(', ')})`,
      );
    const expires = new Date(body.expires_at);
    const now = Date.now();
    if (expires.getTime() <= now) at('/expires_at', 'must be in the future');
    else if (expires.getTime() > now + MAX_DAYS * 86_400_000)
      at('/expires_at', `must be at most ${MAX_DAYS} days ahead`);
    if (scope === 'workspace' && body.repository_id)
      at('/repository_id', 'is only for the repository and entity scopes');
    if (scope !== 'workspace' && !body.repository_id)
      at('/repository_id', `is required for scope ${scope}`);
    if (scope === 'entity') {
      if (!body.subject_key) at('/subject_key', 'is required for scope entity');
      else if (!isEntityKey(body.subject_key) && !isRelationshipKey(body.subject_key))
        at('/subject_key', 'is not a canonical entity or relationship key');
    } else if (body.subject_key) at('/subject_key', 'is only for the entity scope');
    if (errors.length > 0) throw problems.validationFailed(errors);
    if (body.repository_id && !(await findRepository(db, params.workspace_id, body.repository_id)))
      throw problems.notFound(`Repository ${body.repository_id}`);
    const id = crypto.randomUUID();
    const row = await db.transaction(async (trx) => {
      const created = await insertException(trx, {
        id,
        workspace_id: params.workspace_id,
        control_key: body.control_key,
        scope,
        repository_id: body.repository_id ?? null,
        subject_key: body.subject_key ?? null,
        reason: body.reason,
        expires_at: expires,
        created_by: principal.memberId,
      });
      return recordedWrite(trx, principal, requestId, created, {
        action: 'control_exception.created',
        details: { control_key: body.control_key, scope, expires_at: body.expires_at },
      });
    });
    koa.set('Location', `/v1/workspaces/${params.workspace_id}/control-exceptions/${id}`);
    return present(row);
  },
});

export const listControlExceptions = listOperation({
  operationId: 'listControlExceptions',
  ...route.get('/v1/workspaces/{workspace_id}/control-exceptions'),
  summary: "The workspace's control exceptions, newest first",
  ...POLICIES.scope('policies:read'),
  params: WorkspaceParams,
  query: Type.Object(
    {
      state: Type.Optional(LiteralUnion(['active', 'expired', 'revoked'] as const)),
      control_key: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      repository_id: Type.Optional(Uuid()),
      ...pageFields(),
    },
    { additionalProperties: false },
  ),
  success: ok('A page of exceptions.', ControlExceptionPage),
  rows: ({ db, params, query }) =>
    exceptionsQuery(db, params.workspace_id, {
      state: query.state,
      controlKey: query.control_key,
      repositoryId: query.repository_id,
    }),
  present: present,
});

export const getControlException = defineOperation({
  operationId: 'getControlException',
  ...route.get('/v1/workspaces/{workspace_id}/control-exceptions/{exception_id}'),
  summary: 'A control exception',
  ...POLICIES.scope('policies:read'),
  params: ControlExceptionParams,
  success: ok('The exception.', ControlExceptionResponse),
  handler: async ({ db, params }) => {
    const row = await found(
      findException(db, params.workspace_id, params.exception_id),
      `Control exception ${params.exception_id}`,
    );
    return present(row);
  },
});

export const revokeControlException = defineOperation({
  operationId: 'revokeControlException',
  ...route.post('/v1/workspaces/{workspace_id}/control-exceptions/{exception_id}/revoke'),
  summary: 'Revoke a control exception',
  description:
    'It stops applying at the next audit; assessments already made keep their `exception_id`. Revoking a revoked exception answers it unchanged. Recorded as an audit event.',
  ...POLICIES.scope('policies:write'),
  params: ControlExceptionParams,
  success: ok('The revoked exception.', ControlExceptionResponse),
  handler: async ({ db, params, principal, requestId }) => {
    const row = await db.transaction(async (trx) => {
      const hit = await found(
        findException(trx, params.workspace_id, params.exception_id, true),
        `Control exception ${params.exception_id}`,
      );
      if (hit.revoked_at) return hit;
      const revoked = await revokeException(trx, hit.id, principal.memberId);
      await recordPrincipalWrite(trx, principal, requestId, {
        action: 'control_exception.revoked',
        resourceType: 'control_exception',
        resourceId: hit.id,
      });
      return revoked;
    });
    return present(row);
  },
});
